package target

import (
	"net/url"
	"strings"
)

// pgEnv maps the PG* environment variables libpq reads (and pgx reads, from
// the process environment) to their connection keywords.
var pgEnv = []struct{ env, key string }{
	{"PGHOST", "host"}, {"PGPORT", "port"}, {"PGDATABASE", "dbname"}, {"PGUSER", "user"},
	{"PGPASSWORD", "password"}, {"PGPASSFILE", "passfile"}, {"PGAPPNAME", "application_name"},
	{"PGCONNECT_TIMEOUT", "connect_timeout"}, {"PGSSLMODE", "sslmode"}, {"PGSSLKEY", "sslkey"},
	{"PGSSLCERT", "sslcert"}, {"PGSSLCERTMODE", "sslcertmode"}, {"PGSSLSNI", "sslsni"},
	{"PGSSLROOTCERT", "sslrootcert"}, {"PGSSLPASSWORD", "sslpassword"}, {"PGSSLNEGOTIATION", "sslnegotiation"},
	{"PGTARGETSESSIONATTRS", "target_session_attrs"}, {"PGSERVICE", "service"}, {"PGSERVICEFILE", "servicefile"},
	{"PGTZ", "timezone"}, {"PGOPTIONS", "options"}, {"PGMINPROTOCOLVERSION", "min_protocol_version"},
	{"PGMAXPROTOCOLVERSION", "max_protocol_version"}, {"PGCHANNELBINDING", "channel_binding"},
	{"PGREQUIREAUTH", "require_auth"},
}

// withEnv returns dsn with the PG* settings of getenv (the CLI's Main.Env)
// that dsn does not set itself, written into it, so that pgx takes them
// from the caller's environment rather than the process's: a keyword
// string gets them as leading keywords (later keywords, the user's, win);
// a URL gets them as query parameters for the parts it lacks (host, port,
// user, password, database, or a parameter). With getenv nil, dsn is
// returned unchanged. Variables getenv does not set are still read by pgx
// from the process environment (the binary passes os.Environ as Main.Env,
// so the two agree there).
func withEnv(dsn string, getenv func(string) string) string {
	if getenv == nil {
		return dsn
	}
	isURL := strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
	var set map[string]bool
	if isURL {
		set = urlSets(dsn)
	}
	var kw, query []string
	for _, e := range pgEnv {
		v := getenv(e.env)
		if v == "" {
			continue
		}
		if !isURL {
			kw = append(kw, e.key+"='"+strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v)+"'")
		} else if !set[e.key] {
			query = append(query, e.key+"="+percentEncode(v))
		}
	}
	switch {
	case !isURL && len(kw) > 0:
		return strings.Join(kw, " ") + " " + dsn
	case isURL && len(query) > 0:
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + strings.Join(query, "&")
	}
	return dsn
}

// urlSets reports which connection keywords a postgres:// URL sets, as
// pgx's URL parser reads it: user and password before '@', hosts and
// ports in the netloc list (any ',' or ':' there makes a port list, which
// shadows PGPORT), the database in the path, and the query's parameters.
func urlSets(dsn string) map[string]bool {
	set := map[string]bool{}
	p, ok := strings.CutPrefix(dsn, "postgresql://")
	if !ok {
		p, _ = strings.CutPrefix(dsn, "postgres://")
	}
	if i := strings.IndexAny(p, "@/"); i >= 0 && p[i] == '@' {
		user, pw, hasPW := strings.Cut(p[:i], ":")
		set["user"] = user != ""
		set["password"] = hasPW && pw != ""
		p = p[i+1:]
	}
	netloc := p
	if i := strings.IndexAny(p, "/?"); i >= 0 {
		netloc, p = p[:i], p[i:]
	} else {
		p = ""
	}
	unbracketed := netloc
	for {
		i := strings.IndexByte(unbracketed, '[')
		j := strings.IndexByte(unbracketed, ']')
		if i < 0 || j < i {
			break
		}
		unbracketed = unbracketed[:i] + "h" + unbracketed[j+1:]
	}
	set["host"] = strings.Trim(unbracketed, ",:0123456789") != "" || strings.Contains(netloc, "[")
	set["port"] = strings.ContainsAny(unbracketed, ",:")
	if path, ok := strings.CutPrefix(p, "/"); ok {
		db, _, _ := strings.Cut(path, "?")
		set["dbname"] = db != ""
	}
	if _, q, ok := strings.Cut(p, "?"); ok {
		for _, kv := range strings.Split(q, "&") {
			k, _, _ := strings.Cut(kv, "=")
			if k, err := url.PathUnescape(k); err == nil {
				if k == "database" {
					k = "dbname"
				}
				set[k] = true
			}
		}
	}
	return set
}

// percentEncode escapes everything but unreserved characters (RFC 3986).
func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
