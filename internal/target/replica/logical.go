package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/target"
)

// Names of what a logical replica creates; each is pgarena's (marked by
// its name and, for the publication, a comment).
const (
	publication  = "pgarena_pub"
	subscription = "pgarena_sub"
	// pglogical replication sets: tables with a primary key replicate
	// every change, tables without one (pgbench_history) inserts only.
	setFull       = "pgarena"
	setInsertOnly = "pgarena_insert_only"
	pubMark       = "pgarena: publication of the benchmark tables"
)

// logical is a built-in logical or pglogical subscriber of the primary.
type logical struct {
	kind        string // logical or pglogical
	primary     *pgx.ConnConfig
	primaryDSN  string // as the subscriber's server reaches it
	replica     *pgx.ConnConfig
	pgDump      string
	dumpEnv     []string // more of pg_dump's environment (PGPASSFILE)
	markCopies  bool     // copySchema marks the tables it makes (copyMark): a subscriber the user names
	syncTimeout time.Duration
	notef       func(format string, args ...any)
	attached    bool
	// The servers' logs (paths; "" when unknown) and what they logged
	// since attach began.
	primaryLog, replicaLog string
	plog, rlog             *logTail
}

// attach copies the tables' definitions to the subscriber, publishes them
// on the primary, subscribes with their data copied, and waits until the
// copy is done: the measured run starts with the replica in sync.
func (l *logical) attach(ctx context.Context, tables []string) error {
	start := time.Now()
	l.plog, l.rlog = tailFromNow(l.primaryLog), tailFromNow(l.replicaLog)
	if err := l.copySchema(ctx, tables); err != nil {
		return err
	}
	pconn, err := target.Connect(ctx, l.primary, "pgarena-replica")
	if err != nil {
		return err
	}
	defer pconn.Close(context.Background())
	rconn, err := target.Connect(ctx, l.replica, "pgarena-replica")
	if err != nil {
		return err
	}
	defer rconn.Close(context.Background())
	if l.kind == "pglogical" {
		err = l.pglogicalSubscribe(ctx, pconn, rconn, tables)
	} else {
		err = l.subscribe(ctx, pconn, rconn, tables)
	}
	if err != nil {
		return err
	}
	l.attached = true
	if err := l.waitSynced(ctx, rconn); err != nil {
		return err
	}
	l.notef("%s replica: initial copy of %d tables done in %s", l.kind, len(tables), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// copySchema creates the tables on the subscriber from pg_dump
// --schema-only of the primary (their marks included, or copyMark with
// markCopies: tables then are qualified names, as addKeys returns them).
func (l *logical) copySchema(ctx context.Context, tables []string) error {
	args := []string{"--schema-only", "--no-owner", "--no-privileges", "--no-publications", "--no-subscriptions", "-d", l.primaryDSN}
	for _, t := range tables {
		args = append(args, "-t", t)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(dctx, l.pgDump, args...)
	cmd.Env = append([]string{"PGCONNECT_TIMEOUT=10", "LC_ALL=C"}, l.dumpEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s replica: pg_dump --schema-only of the primary failed: %v: %s", l.kind, err, strings.TrimSpace(stderr.String()))
	}
	conn, err := target.Connect(ctx, l.replica, "pgarena-replica")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// pg_dump sets the settings its version knows (17 on:
	// transaction_timeout); a subscriber of an older version refuses the
	// ones it lacks, which the restore does not need.
	rows, err := conn.Query(ctx, "select name from pg_settings", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return fmt.Errorf("%s replica: reading the subscriber's settings: %w", l.kind, err)
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("%s replica: reading the subscriber's settings: %w", l.kind, err)
	}
	var sql strings.Builder
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, `\`) { // psql meta-commands (\restrict)
			continue
		}
		if m := dumpSet.Get().FindStringSubmatch(line); m != nil && !slices.Contains(known, m[1]) {
			continue
		}
		sql.WriteString(line + "\n")
	}
	if l.markCopies {
		for _, t := range tables {
			sql.WriteString("comment on table " + t + " is '" + copyMark + "';\n")
		}
	}
	if _, err := conn.Exec(ctx, sql.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("%s replica: creating the tables on the subscriber: %w", l.kind, err)
	}
	return nil
}

// dumpSet is a SET line of pg_dump's preamble.
var dumpSet = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^SET ([a-z_]+) = .*;$`) }}

// subscribe publishes the tables (built-in logical replication) and
// subscribes, copying their data.
func (l *logical) subscribe(ctx context.Context, pconn, rconn *pgx.Conn, tables []string) error {
	var mark *string
	err := pconn.QueryRow(ctx, `select obj_description(oid, 'pg_publication') from pg_publication where pubname = $1`, publication).Scan(&mark)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	case mark == nil || *mark != pubMark:
		return fmt.Errorf("a publication %s exists on the primary that pgarena did not create: drop or rename it", publication)
	default:
		if _, err := pconn.Exec(ctx, `drop publication `+publication); err != nil {
			return err
		}
	}
	list := make([]string, len(tables))
	for i, t := range tables {
		list[i] = pgx.Identifier(strings.Split(t, ".")).Sanitize()
	}
	if _, err := pconn.Exec(ctx, `create publication `+publication+` for table `+strings.Join(list, ", ")+
		`; comment on publication `+publication+` is '`+pubMark+`'`); err != nil {
		return fmt.Errorf("logical replica: create publication: %w", err)
	}
	// create subscription cannot run in a transaction block: its own Exec.
	if _, err := rconn.Exec(ctx, `create subscription `+subscription+` connection '`+strings.ReplaceAll(l.primaryDSN, `'`, `''`)+
		`' publication `+publication+` with (copy_data = true)`); err != nil {
		return fmt.Errorf("logical replica: create subscription: %w", err)
	}
	return nil
}

// pglogicalSubscribe adds the tables to pglogical replication sets on the
// provider (the primary) and subscribes to them.
func (l *logical) pglogicalSubscribe(ctx context.Context, pconn, rconn *pgx.Conn, tables []string) error {
	replicaDSN := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s", l.replica.Port, quote(l.replica.User), quote(l.replica.Database))
	steps := []struct {
		conn *pgx.Conn
		sql  string
		args []any
	}{
		{pconn, `create extension if not exists pglogical`, nil},
		{pconn, `select pglogical.create_node(node_name := 'pgarena_provider', dsn := $1) where not exists (select 1 from pglogical.node where node_name = 'pgarena_provider')`, []any{l.primaryDSN}},
		{pconn, `select pglogical.create_replication_set($1) where not exists (select 1 from pglogical.replication_set where set_name = $1)`, []any{setFull}},
		{pconn, `select pglogical.create_replication_set($1, replicate_update := false, replicate_delete := false, replicate_truncate := false) where not exists (select 1 from pglogical.replication_set where set_name = $1)`, []any{setInsertOnly}},
	}
	for _, t := range tables {
		steps = append(steps, struct {
			conn *pgx.Conn
			sql  string
			args []any
		}{pconn, `select pglogical.replication_set_add_table(
			case when exists (select 1 from pg_index where indrelid = $1::regclass and indisprimary) then $2 else $3 end,
			$1::regclass, synchronize_data := true)`, []any{t, setFull, setInsertOnly}})
	}
	steps = append(steps, []struct {
		conn *pgx.Conn
		sql  string
		args []any
	}{
		{rconn, `create extension if not exists pglogical`, nil},
		{rconn, `select pglogical.create_node(node_name := 'pgarena_subscriber', dsn := $1)`, []any{replicaDSN}},
		{rconn, `select pglogical.create_subscription(subscription_name := $1, provider_dsn := $2,
			replication_sets := array[$3, $4], synchronize_structure := false, synchronize_data := true, forward_origins := '{}')`,
			[]any{subscription, l.primaryDSN, setFull, setInsertOnly}},
	}...)
	for _, s := range steps {
		if _, err := s.conn.Exec(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("pglogical replica: %s: %w", strings.Join(strings.Fields(s.sql), " "), err)
		}
	}
	return nil
}

// waitSynced waits until the subscriber has copied every table, showing
// what the servers report meanwhile; a refused output plugin ends it.
func (l *logical) waitSynced(ctx context.Context, rconn *pgx.Conn) error {
	q := `select count(*) from pg_subscription_rel where srsubstate <> 'r'`
	if l.kind == "pglogical" {
		q = `select (select count(*) from pglogical.local_sync_status where sync_status <> 'r')
			+ (select count(*) from pglogical.show_subscription_status() where status <> 'replicating')`
	}
	w := await.Wait{What: fmt.Sprintf("the %s replica's initial copy", l.kind), Timeout: l.syncTimeout,
		Flag: "--replica-sync-timeout", Notef: l.notef}
	var lastTrouble time.Time
	var trouble error
	return w.Poll(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, string, error) {
		var pending int
		if err := rconn.QueryRow(ctx, q).Scan(&pending); err != nil {
			return false, "", fmt.Errorf("%s replica: waiting for the initial copy: %w", l.kind, err)
		}
		if pending == 0 {
			return true, "", nil
		}
		if time.Since(lastTrouble) >= time.Second {
			lastTrouble, trouble = time.Now(), l.trouble(ctx)
			var refused *PluginRefusedError
			if errors.As(trouble, &refused) {
				return false, "", fmt.Errorf("%s replica: %w", l.kind, refused)
			}
		}
		status := fmt.Sprintf("%d tables or subscriptions not ready", pending)
		if trouble != nil {
			status += "; " + trouble.Error()
		}
		return false, status, nil
	})
}

// trouble is what the servers report about the subscription: an output
// plugin the primary refuses (*PluginRefusedError), else the
// subscription's state and the subscriber's logged errors (nil: none).
func (l *logical) trouble(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	if pconn, err := target.Connect(ctx, l.primary, "pgarena-replica"); err == nil {
		refused, _ := refusedPlugin(ctx, pconn, l.plog)
		pconn.Close(context.Background())
		if refused != nil {
			return refused
		}
	}
	var parts []string
	if l.kind == "pglogical" {
		if rconn, err := target.Connect(ctx, l.replica, "pgarena-replica"); err == nil {
			var status *string
			rconn.QueryRow(ctx, `select string_agg(distinct status, ', ') from pglogical.show_subscription_status() where status <> 'replicating'`).Scan(&status)
			rconn.Close(context.Background())
			if status != nil {
				parts = append(parts, "pglogical.show_subscription_status() says "+*status)
			}
		}
	}
	if e := l.rlog.lastError(); e != "" {
		parts = append(parts, "the subscriber logs "+e)
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// detach drops the subscription (and with it its replication slot on the
// primary, which would otherwise hold WAL) and pgarena's publication or
// pglogical node on the primary.
func (l *logical) detach() {
	if !l.attached {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if rconn, err := target.Connect(ctx, l.replica, "pgarena-replica"); err == nil {
		q := `drop subscription if exists ` + subscription
		if l.kind == "pglogical" {
			q = `select pglogical.drop_subscription('` + subscription + `', true)`
		}
		if _, err := rconn.Exec(ctx, q); err != nil {
			l.notef("%s replica: could not drop the subscription: %v", l.kind, err)
		}
		rconn.Close(ctx)
	}
	pconn, err := target.Connect(ctx, l.primary, "pgarena-replica")
	if err != nil {
		return
	}
	defer pconn.Close(ctx)
	q := `drop publication if exists ` + publication
	if l.kind == "pglogical" {
		q = `select pglogical.drop_node('pgarena_provider', true)`
	}
	if _, err := pconn.Exec(ctx, q); err != nil {
		l.notef("%s replica: could not drop %s on the primary: %v", l.kind, publication, err)
	}
}
