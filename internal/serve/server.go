package serve

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/store"
)

// Server serves one results directory. Build it with New.
type Server struct {
	store *store.Store
	opts  Options
	list  *listCache
	repl  *replCache // the list's replication and failover cells
	runs  *runCache
	pngs  *pngCache
	mux   *http.ServeMux
}

// Options configure a Server.
type Options struct {
	// Token, when set, is required on every request: the header
	// "Authorization: Bearer TOKEN", the cookie it sets, or ?token=TOKEN.
	Token string
	// Plans are plan files whose status pages show every cell, pending
	// ones and the ETA included; other plans are shown from their runs' tags.
	Plans []string
	// Poll is how often a live page looks at its run directory (default 1 s).
	Poll time.Duration
	// Now is the clock for "since" filters (default time.Now).
	Now func() time.Time
}

// New returns a Server over st.
func New(st *store.Store, opts Options) *Server {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{store: st, opts: opts, list: newListCache(), repl: newReplCache(), runs: newRunCache(st), pngs: &pngCache{}, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.handleList)
	s.mux.HandleFunc("GET /run/{id}", s.handleRun)
	s.mux.HandleFunc("GET /run/{id}/events", s.handleEvents)
	s.mux.HandleFunc("GET /run/{id}/png", s.handlePNGList)
	s.mux.HandleFunc("GET /run/{id}/png/{name}", s.handlePNG)
	s.mux.HandleFunc("GET /compare", s.handleCompare)
	s.mux.HandleFunc("GET /download/{format}", s.handleDownload)
	s.mux.HandleFunc("GET /plan/{name}", s.handlePlan)
	s.mux.HandleFunc("GET /static/live.js", s.handleLiveJS)
	return s
}

// tokenCookie carries the token after a first request with ?token=.
const tokenCookie = "pgarena_token"

// ServeHTTP checks the token, then serves the request. Responses are never
// framed by other sites and send no referrer (a token in a URL stays here).
// Without a token only loopback host names are answered: a page of another
// origin whose name resolves to 127.0.0.1 (DNS rebinding) sends its own
// name in Host, and is refused.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	if s.opts.Token == "" && !loopbackHost(r.Host) {
		http.Error(w, "without a token, pgarena serve answers only localhost, 127.0.0.1 and [::1]", http.StatusMisdirectedRequest)
		return
	}
	if s.opts.Token != "" {
		tok, fromQuery := requestToken(r)
		if subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) != 1 {
			http.Error(w, "a token is required: open the URL pgarena serve printed (?token=...)", http.StatusUnauthorized)
			return
		}
		if fromQuery {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
	}
	s.mux.ServeHTTP(w, r)
}

func requestToken(r *http.Request) (tok string, fromQuery bool) {
	if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return a, false
	}
	if t := r.URL.Query().Get("token"); t != "" {
		return t, true
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return c.Value, false
	}
	return "", false
}

// loopbackHost reports whether a Host header (name, or name:port) names
// this machine by a loopback name or address.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether a listen address (host:port) accepts only
// connections from this machine; an empty host listens everywhere.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
