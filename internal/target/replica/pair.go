package replica

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
)

// PairKinds are the replication systems Pair sets up between two servers.
var PairKinds = []string{"slony", "londiste"}

// Pair sets a slony or londiste replica up between the target of Inner
// (the origin) and an existing server the user names (--replica slony
// --dsn PRIMARY --replica-dsn STANDBY). On the standby it creates only
// what the system needs: the replicated tables (the workload's and the
// heartbeat, their definitions copied from the primary) and the system's
// own objects (slony's cluster schema, londiste's extensions, marked);
// the daemons run under pgarena as for a local subscriber. Teardown drops
// what pgarena created and nothing else; a standby that has any of the
// tables, or objects of the system pgarena did not create, is refused
// before the run (Replica.Check) with an *InputError.
type Pair struct {
	Inner   target.Provider
	Kind    string
	Standby *pgx.ConnConfig
	// Env is the environment of the daemons and of pg_dump (which must be
	// at least as new as both servers).
	Env         local.Env
	Notef       func(format string, args ...any)
	SyncTimeout time.Duration
}

// Describe names the primary and the standby, redacted.
func (p *Pair) Describe() string {
	return p.Inner.Describe() + " with a " + p.Kind + " replica on " + target.Redacted(p.Standby)
}

// CreatesTarget: as the primary's provider.
func (p *Pair) CreatesTarget() bool { return target.CreatesTarget(p.Inner) }

// Provision provisions the primary, checks the standby (another server, or
// another database, that is not in recovery) and prepares the system; it
// attaches to the tables at Attach.
func (p *Pair) Provision(ctx context.Context) (*target.Target, func(), error) {
	if !slices.Contains(PairKinds, p.Kind) {
		return nil, nil, fmt.Errorf("--replica %s with --replica-dsn: pgarena sets up %s between two servers", p.Kind, strings.Join(PairKinds, " or "))
	}
	if p.Notef == nil {
		p.Notef = func(string, ...any) {}
	}
	if p.SyncTimeout <= 0 {
		p.SyncTimeout = DefaultSyncTimeout
	}
	bin, err := local.FindBinaries("", p.Env)
	if err != nil {
		return nil, nil, fmt.Errorf("--replica %s copies the tables' definitions with pg_dump: %w", p.Kind, err)
	}
	t, teardown, err := p.Inner.Provision(ctx)
	if err != nil {
		return nil, nil, err
	}
	primary := t.Direct().Config
	sb := &standby{kind: p.Kind, flag: "--replica-dsn " + target.Redacted(p.Standby), notef: p.Notef}
	major, err := sb.checkServer(ctx, primary, p.Standby)
	if err != nil {
		teardown()
		return nil, nil, err
	}
	dir, err := os.MkdirTemp(p.Env.Get("TMPDIR"), "pgarena-"+p.Kind+"-")
	if err != nil {
		teardown()
		return nil, nil, err
	}
	env, err := passEnv(dir, primary, p.Standby)
	if err != nil {
		os.RemoveAll(dir)
		teardown()
		return nil, nil, err
	}
	primaryDSN, standbyDSN := conninfo(primary), conninfo(p.Standby)
	lg := &logical{kind: p.Kind, primary: primary, primaryDSN: primaryDSN, replica: p.Standby, pgDump: bin.Path("pg_dump"),
		dumpEnv: env, markCopies: true, syncTimeout: p.SyncTimeout, notef: p.Notef}
	daemonEnv := append(slices.Clip(p.Env), env...)
	rep := target.Replica{Kind: p.Kind, Config: p.Standby,
		Description: fmt.Sprintf("%s replica on %s (PostgreSQL %d)", p.Kind, target.Redacted(p.Standby), major)}
	var detach func()
	switch p.Kind {
	case "slony":
		sl := &slony{primary: primary, replica: p.Standby, primaryDSN: primaryDSN, replicaDSN: standbyDSN, schema: lg,
			logDir: dir, major: major, syncTimeout: p.SyncTimeout, notef: p.Notef, env: daemonEnv, standby: sb}
		rep.Attach, rep.Trouble, rep.Check, detach = sl.attach, sl.trouble, sl.check, sl.detach
	case "londiste":
		ld := &londiste{primary: primary, replica: p.Standby, primaryDSN: primaryDSN, replicaDSN: standbyDSN, dbname: primary.Database,
			schema: lg, dir: dir, major: major, syncTimeout: p.SyncTimeout, notef: p.Notef, env: daemonEnv, standby: sb}
		rep.Attach, rep.Trouble, rep.Check, detach = ld.attach, ld.trouble, ld.check, ld.detach
	}
	t.Replicas = append(t.Replicas, rep)
	return t, func() {
		detach()
		os.RemoveAll(dir)
		teardown()
	}, nil
}

// standby is what pgarena does on a server the user names as a slony or
// londiste subscriber.
type standby struct {
	kind    string
	flag    string   // the flag and the server, redacted, for messages
	created []string // the tables pgarena created on it
	notef   func(format string, args ...any)
}

// refuse is an *InputError naming the server of cfg.
func (s *standby) refuse(cfg *pgx.ConnConfig, format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf("--replica %s: the server %s "+format, append([]any{s.kind, target.Redacted(cfg)}, args...)...)}
}

// checkServer checks that the standby answers, is not the primary's own
// database and is not in recovery (the system writes to it), and returns
// its major version. The standby's session found among the primary's is
// the same server.
func (s *standby) checkServer(ctx context.Context, primary, cfg *pgx.ConnConfig) (int, error) {
	probe := fmt.Sprintf("pgarena-replica-check-%d-%d", os.Getpid(), time.Now().UnixNano())
	conn, err := target.Connect(ctx, cfg, probe)
	if err != nil {
		return 0, &InputError{Msg: fmt.Sprintf("%s: cannot connect: %v", s.flag, err)}
	}
	defer conn.Close(context.Background())
	pconn, err := target.Connect(ctx, primary, "pgarena-replica-check")
	if err != nil {
		return 0, err
	}
	defer pconn.Close(context.Background())
	var recovery bool
	var version int
	var pid int32
	if err := conn.QueryRow(ctx, `select pg_is_in_recovery(), current_setting('server_version_num')::int / 10000, pg_backend_pid()`).Scan(&recovery, &version, &pid); err != nil {
		return 0, err
	}
	var same bool
	if err := pconn.QueryRow(ctx, `select exists (select from pg_stat_activity where pid = $1 and application_name = $2 and datname = current_database())`,
		pid, probe).Scan(&same); err != nil {
		return 0, err
	}
	switch {
	case recovery:
		return 0, &InputError{Msg: fmt.Sprintf("%s is in recovery (a streaming standby): the subscriber of a trigger-based system must be a writable server", s.flag)}
	case same:
		return 0, &InputError{Msg: fmt.Sprintf("%s is the primary's own database: name another server or database", s.flag)}
	}
	return version, nil
}

// copyMark marks a table pgarena created on a standby the user names; one
// a killed run left there is dropped by the next run.
const copyMark = "pgarena: copy of the table on a standby, for the run"

// checkTables refuses a standby that has any of the tables already (bar
// pgarena's copies a killed run left): pgarena creates them and drops
// them after the run.
func (s *standby) checkTables(ctx context.Context, conn *pgx.Conn, tables []string) error {
	var have []string
	if err := conn.QueryRow(ctx, `select coalesce(array_agg(t order by t), '{}') from unnest($1::text[]) t
		where to_regclass(t) is not null and obj_description(to_regclass(t), 'pg_class') is distinct from $2`, tables, copyMark).Scan(&have); err != nil {
		return err
	}
	if len(have) > 0 {
		return &InputError{Msg: fmt.Sprintf("%s has the tables %s already: pgarena creates the replicated tables on the standby and drops them afterwards, and never touches tables it did not create: drop them or name another database",
			s.flag, strings.Join(have, ", "))}
	}
	return nil
}

// dropLeftCopies drops the copies of the tables a killed run left on the
// standby (marked copyMark).
func (s *standby) dropLeftCopies(ctx context.Context, conn *pgx.Conn, tables []string) error {
	var left []string
	if err := conn.QueryRow(ctx, `select coalesce(array_agg(to_regclass(t)::text), '{}') from unnest($1::text[]) t
		where obj_description(to_regclass(t), 'pg_class') = $2`, tables, copyMark).Scan(&left); err != nil {
		return err
	}
	for _, t := range left {
		if _, err := conn.Exec(ctx, `drop table `+t); err != nil {
			return err
		}
	}
	if len(left) > 0 {
		s.notef("%s replica: dropped the copies of %s a killed run left on the standby", s.kind, strings.Join(left, ", "))
	}
	return nil
}

// exec runs f on a connection to cfg.
func (s *standby) exec(ctx context.Context, cfg *pgx.ConnConfig, f func(context.Context, *pgx.Conn) error) error {
	conn, err := target.Connect(ctx, cfg, "pgarena-replica")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return f(ctx, conn)
}

// detach drops the system's objects (drop) and the tables pgarena created
// from the standby.
func (s *standby) detach(ctx context.Context, cfg *pgx.ConnConfig, drop func(context.Context, *pgx.Conn) error) {
	err := s.exec(ctx, cfg, func(ctx context.Context, conn *pgx.Conn) error {
		if err := drop(ctx, conn); err != nil {
			return err
		}
		for _, t := range s.created {
			if _, err := conn.Exec(ctx, `drop table if exists `+t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.notef("could not remove from the standby what pgarena created there (%s): %v", strings.Join(s.created, ", "), err)
	}
	s.created = nil
}

// conninfo is cfg as a libpq keyword string without its password (which
// passEnv puts into a password file).
func conninfo(cfg *pgx.ConnConfig) string {
	parts := []string{"host=" + quote(cfg.Host), "port=" + strconv.Itoa(int(cfg.Port)), "user=" + quote(cfg.User), "dbname=" + quote(cfg.Database)}
	if cfg.TLSConfig != nil && !slices.ContainsFunc(cfg.Fallbacks, func(f *pgconn.FallbackConfig) bool { return f.TLSConfig == nil }) {
		parts = append(parts, "sslmode=require")
	}
	return strings.Join(parts, " ")
}

// passEnv writes the servers' passwords, if any, into a password file in
// dir (mode 0600) and returns the environment that points libpq at it:
// no password appears on a command line or in a configuration file.
func passEnv(dir string, cfgs ...*pgx.ConnConfig) ([]string, error) {
	var lines strings.Builder
	esc := strings.NewReplacer(`\`, `\\`, `:`, `\:`)
	for _, c := range cfgs {
		if c.Password != "" {
			fmt.Fprintf(&lines, "%s:%d:*:%s:%s\n", esc.Replace(c.Host), c.Port, esc.Replace(c.User), esc.Replace(c.Password))
		}
	}
	if lines.Len() == 0 {
		return nil, nil
	}
	path := filepath.Join(dir, "pgpass")
	if err := os.WriteFile(path, []byte(lines.String()), 0o600); err != nil {
		return nil, err
	}
	return []string{"PGPASSFILE=" + path}, nil
}

// keyAndCopy gives the tables a key where they lack one (addKeys) and
// copies their schema to the subscriber (sc); with a standby the user
// names (st), the copies a killed run left there are dropped first and the
// new copies are recorded as pgarena's. keyed is set on an error too (the
// keys to drop).
func keyAndCopy(ctx context.Context, pconn *pgx.Conn, kind string, tables []string, notef func(string, ...any),
	st *standby, replica *pgx.ConnConfig, sc *logical) (qualified, keyed []string, err error) {
	if qualified, keyed, err = addKeys(ctx, pconn, kind, tables, notef); err != nil {
		return qualified, keyed, err
	}
	if st != nil {
		if err := st.exec(ctx, replica, func(ctx context.Context, conn *pgx.Conn) error {
			return st.dropLeftCopies(ctx, conn, tables)
		}); err != nil {
			return qualified, keyed, fmt.Errorf("%s replica: removing the copies a killed run left on the standby: %w", sc.kind, err)
		}
		tables = qualified
	}
	if err := sc.copySchema(ctx, tables); err != nil {
		return qualified, keyed, err
	}
	if st != nil {
		st.created = qualified
	}
	return qualified, keyed, nil
}
