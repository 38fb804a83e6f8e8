package replica

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/local"
)

// Kinds are the replicas --replica starts.
var Kinds = []string{"streaming", "logical", "pglogical", "slony", "londiste"}

// DefaultSyncTimeout bounds a logical replica's initial copy.
const DefaultSyncTimeout = time.Hour

// Provider wraps the provider of a local primary (local.Ephemeral or
// local.Named) and starts a replica of Kind beside it.
type Provider struct {
	Inner target.Provider
	Kind  string
	Env   local.Env
	// Getenv reads the environment for the replica's DSN (PG* variables).
	Getenv func(string) string
	Notef  func(format string, args ...any)
	// SyncTimeout bounds the initial copy of a logical replica
	// (default DefaultSyncTimeout).
	SyncTimeout time.Duration
}

// Describe names the primary and the replica.
func (p *Provider) Describe() string { return p.Inner.Describe() + " with a " + p.Kind + " replica" }

// CreatesTarget: as the primary's provider.
func (p *Provider) CreatesTarget() bool { return target.CreatesTarget(p.Inner) }

// CheckKind validates a --replica value.
func CheckKind(kind string) error {
	if !slices.Contains(Kinds, kind) {
		return fmt.Errorf("unknown --replica %q (use %s; for any other replication system, run the replica yourself and pass --replica-dsn)", kind, strings.Join(Kinds, ", "))
	}
	return nil
}

// primarySettings are the settings the primary of kind needs.
func primarySettings(kind string) map[string]string {
	switch kind {
	case "logical":
		return map[string]string{"wal_level": "logical"}
	case "pglogical":
		return map[string]string{"wal_level": "logical", "shared_preload_libraries": "pglogical", "track_commit_timestamp": "on"}
	}
	return nil
}

// Provision starts the primary, then the replica.
func (p *Provider) Provision(ctx context.Context) (*target.Target, func(), error) {
	if err := CheckKind(p.Kind); err != nil {
		return nil, nil, err
	}
	if p.Notef == nil {
		p.Notef = func(string, ...any) {}
	}
	binDir := ""
	// A primary created for this run may be set up for the replica where
	// the user did not choose otherwise.
	mayChange := false
	if e, ok := p.Inner.(*local.Ephemeral); ok {
		_, userSet := e.Settings[pluginSetting]
		mayChange = !userSet
		settings := map[string]string{}
		for k, v := range e.Settings {
			settings[k] = v
		}
		for k, v := range primarySettings(p.Kind) {
			if _, set := settings[k]; !set {
				settings[k] = v
			}
		}
		e.Settings = settings
		binDir = e.Bin.Dir
	}
	t, teardown, err := p.Inner.Provision(ctx)
	if err != nil {
		return nil, nil, err
	}
	rep, stop, err := p.start(ctx, t, binDir, mayChange)
	if err != nil {
		teardown()
		return nil, nil, err
	}
	t.Replicas = append(t.Replicas, rep)
	return t, func() { stop(); teardown() }, nil
}

// start checks the primary and starts the replica.
func (p *Provider) start(ctx context.Context, t *target.Target, binDir string, mayChange bool) (target.Replica, func(), error) {
	var none target.Replica
	if !t.Local || t.DataDir == "" {
		return none, nil, fmt.Errorf("--replica %s starts its replica from a local primary (the embedded cluster or --cluster NAME); for another server, start the replica yourself and pass --replica-dsn", p.Kind)
	}
	conn, err := target.Connect(ctx, t.Config, "pgarena-replica")
	if err != nil {
		return none, nil, err
	}
	defer conn.Close(context.Background())
	settings, err := replicaSettings(ctx, conn)
	if err != nil {
		return none, nil, err
	}
	for k, want := range primarySettings(p.Kind) {
		if k == "track_commit_timestamp" {
			continue
		}
		if have := settings["primary."+k]; !strings.Contains(have, want) {
			return none, nil, fmt.Errorf("--replica %s needs %s=%s on the primary (it has %q): restart the cluster with --pg-set %s=%s", p.Kind, k, want, have, k, want)
		}
	}
	if err := p.allowPlugin(ctx, conn, mayChange); err != nil {
		return none, nil, err
	}
	delete(settings, "primary.wal_level")
	delete(settings, "primary.shared_preload_libraries")
	for k, v := range primarySettings(p.Kind) {
		settings[k] = v
	}
	var port uint16
	var user string
	if err := conn.QueryRow(ctx, `select current_setting('port')::int, current_user`).Scan(&port, &user); err != nil {
		return none, nil, err
	}
	primary := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s application_name=pgarena_%s",
		port, quote(user), quote(t.Config.Database), p.Kind)
	opts := local.Options{Env: p.Env, BinDir: binDir, Settings: settings, Notef: p.Notef}
	if p.Kind == "streaming" {
		opts.BaseBackupFrom = primary
	}
	p.Notef("starting a %s replica of the primary", p.Kind)
	c, err := local.Start(ctx, opts)
	if err != nil {
		return none, nil, fmt.Errorf("starting the %s replica: %w", p.Kind, err)
	}
	remove := func() {
		if err := c.Remove(); err != nil {
			p.Notef("could not remove the replica in %s: %v", c.DataDir(), err)
		}
	}
	cfg, err := target.ParseDSN(c.DSN(t.Config.Database), p.Getenv)
	if err != nil {
		remove()
		return none, nil, err
	}
	rep := target.Replica{Kind: p.Kind, Config: cfg,
		Description: fmt.Sprintf("%s replica (PostgreSQL %s, port %d)", p.Kind, c.Binaries().Version, c.Port())}
	if p.Kind == "streaming" {
		standbyLog := tailFromNow(c.LogPath())
		rep.Trouble = func(context.Context) error {
			if e := standbyLog.lastError(); e != "" {
				return errors.New("the standby logs " + e)
			}
			return nil
		}
		return rep, remove, nil
	}
	if err := createDatabase(ctx, c.DSN("postgres"), t.Config.Database, p.Getenv); err != nil {
		remove()
		return none, nil, err
	}
	lg := &logical{kind: p.Kind, primary: t.Config, primaryDSN: primary, replica: cfg, pgDump: c.Binaries().Path("pg_dump"),
		syncTimeout: p.SyncTimeout, notef: p.Notef, primaryLog: t.ServerLog, replicaLog: c.LogPath()}
	if lg.syncTimeout <= 0 {
		lg.syncTimeout = DefaultSyncTimeout
	}
	if p.Kind == "slony" {
		sl := &slony{primary: t.Config, replica: cfg, primaryDSN: primary, replicaDSN: c.DSN(t.Config.Database), schema: lg,
			logDir: filepath.Dir(c.LogPath()), major: c.Binaries().Major, syncTimeout: lg.syncTimeout, notef: p.Notef}
		rep.Attach, rep.Trouble = sl.attach, sl.trouble
		return rep, func() { sl.detach(); remove() }, nil
	}
	if p.Kind == "londiste" {
		ld := &londiste{primary: t.Config, replica: cfg, primaryDSN: primary, replicaDSN: c.DSN(t.Config.Database), dbname: t.Config.Database,
			schema: lg, dir: filepath.Dir(c.LogPath()), major: c.Binaries().Major, syncTimeout: lg.syncTimeout, notef: p.Notef}
		rep.Attach, rep.Trouble = ld.attach, ld.trouble
		return rep, func() { ld.detach(); remove() }, nil
	}
	rep.Attach, rep.Trouble = lg.attach, lg.trouble
	return rep, func() { lg.detach(); remove() }, nil
}

// replicaSettings reads the primary's settings a hot standby must match
// or exceed (as they are), and wal_level and shared_preload_libraries as
// "primary.NAME".
func replicaSettings(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	rows, err := conn.Query(ctx, `select name, setting from pg_settings where name = any($1)`,
		[]string{"max_connections", "max_worker_processes", "max_wal_senders", "max_prepared_transactions",
			"max_locks_per_transaction", "shared_buffers", "wal_level", "shared_preload_libraries"})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var name, value string
	_, err = pgx.ForEachRow(rows, []any{&name, &value}, func() error {
		switch name {
		case "wal_level", "shared_preload_libraries":
			out["primary."+name] = value
		case "shared_buffers":
			// in 8kB pages; the replica's default is sized for this host
		default:
			out[name] = value
		}
		return nil
	})
	return out, err
}

func createDatabase(ctx context.Context, dsn, name string, getenv func(string) string) error {
	if name == "postgres" || name == "" {
		return nil
	}
	cfg, err := target.ParseDSN(dsn, getenv)
	if err != nil {
		return err
	}
	conn, err := target.Connect(ctx, cfg, "pgarena-replica")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "create database "+pgx.Identifier{name}.Sanitize())
	return err
}

// readKind is the kind of the replica --read-dsn names.
const readKind = "read"

// checkOther checks that the replica answers and is another server than
// the primary: a different system identifier, or the same one on a
// standby (in recovery). Without the right to read pg_control_system(),
// it looks for the replica's own session among the primary's.
func checkOther(ctx context.Context, primary, rep *pgx.ConnConfig) error {
	cctx, cancel := context.WithTimeout(ctx, readTimeout+3*time.Second)
	defer cancel()
	rc := rep.Copy()
	probe := fmt.Sprintf("pgarena-replica-check-%d-%d", os.Getpid(), time.Now().UnixNano())
	rc.RuntimeParams["application_name"] = probe
	conn, err := target.Connect(cctx, rc, "")
	if err != nil {
		return fmt.Errorf("cannot connect: %w", err)
	}
	defer conn.Close(context.Background())
	pconn, err := target.Connect(cctx, primary, "pgarena-replica-check")
	if err != nil {
		return fmt.Errorf("cannot connect to the primary to compare: %w", err)
	}
	defer pconn.Close(context.Background())
	var rid, pid uint64
	var recovery bool
	var pidOnReplica int32
	if err := conn.QueryRow(cctx, `select pg_is_in_recovery(), pg_backend_pid()`).Scan(&recovery, &pidOnReplica); err != nil {
		return err
	}
	errR := conn.QueryRow(cctx, `select system_identifier from pg_control_system()`).Scan(&rid)
	errP := pconn.QueryRow(cctx, `select system_identifier from pg_control_system()`).Scan(&pid)
	// A logical subscriber in another database of the primary's own server
	// is a replica all the same.
	var db string
	var subscriptions int
	if err := conn.QueryRow(cctx, `select current_database(), (select count(*) from pg_subscription
		where subdbid = (select oid from pg_database where datname = current_database()))`).Scan(&db, &subscriptions); err != nil {
		return err
	}
	subscriber := db != primary.Database && subscriptions > 0
	if errR == nil && errP == nil {
		if rid == pid && !recovery && !subscriber {
			return fmt.Errorf("this is the primary itself (system identifier %d, not a standby, no subscription in database %s): name a replica of it", rid, db)
		}
		return nil
	}
	var same bool
	if err := pconn.QueryRow(cctx, `select exists (select from pg_stat_activity where pid = $1 and application_name = $2)`,
		pidOnReplica, probe).Scan(&same); err != nil {
		return err
	}
	if same && !subscriber {
		return fmt.Errorf("this is the primary itself: name a replica of it")
	}
	return nil
}

// quote quotes a libpq keyword value.
func quote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r'\\") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// DSN adds a replica the user runs, named by a connection configuration,
// to the target of Inner (--replica-dsn).
type DSN struct {
	Inner  target.Provider
	Config *pgx.ConnConfig
	// Kind is the replica's kind: "dsn" when empty (--replica-dsn);
	// --read-dsn names "read", the replica read-only transactions go to.
	Kind string
}

// Describe names the primary and the replica, redacted.
func (d *DSN) Describe() string {
	return d.Inner.Describe() + " with replica " + target.Redacted(d.Config)
}

// CreatesTarget: as the primary's provider.
func (d *DSN) CreatesTarget() bool { return target.CreatesTarget(d.Inner) }

// ShowWait bounds the wait, before the run, for a replica to show a new
// beat: one that shows none by then does not replicate the heartbeat.
const ShowWait = 10 * time.Second

// InputError is a replica named by the user that cannot serve as one: not
// reachable, or the primary itself. The user must fix it (exit code 2).
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Provision provisions the primary and checks the replica: it answers, and
// it is another server than the primary.
func (d *DSN) Provision(ctx context.Context) (*target.Target, func(), error) {
	kind := d.Kind
	if kind == "" {
		kind = "dsn"
	}
	flag := map[string]string{"dsn": "--replica-dsn", readKind: "--read-dsn"}[kind]
	if flag == "" {
		flag = "replica " + kind
	}
	t, teardown, err := d.Inner.Provision(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOther(ctx, t.Direct().Config, d.Config); err != nil {
		teardown()
		return nil, nil, &InputError{Msg: fmt.Sprintf("%s %s: %v", flag, target.Redacted(d.Config), err)}
	}
	// What pgarena can see of a replica it does not run is on the
	// primary: an output plugin the primary refuses.
	primary, plog := t.Direct().Config, tailFromNow(t.ServerLog)
	trouble := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, readTimeout)
		defer cancel()
		conn, err := target.Connect(ctx, primary, "pgarena-replica")
		if err != nil {
			return nil
		}
		defer conn.Close(context.Background())
		if refused, _ := refusedPlugin(ctx, conn, plog); refused != nil {
			return refused
		}
		return nil
	}
	t.Replicas = append(t.Replicas, target.Replica{Kind: kind, Config: d.Config, Description: target.Redacted(d.Config), Trouble: trouble})
	return t, teardown, nil
}
