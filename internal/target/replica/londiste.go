package replica

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/await"
	"github.com/pgarena/pgarena/internal/target"
)

// Londiste 3 (Debian's python3-londiste, postgresql-NN-pgq3,
// postgresql-NN-pgq-node, postgresql-NN-londiste-sql and pgqd): a root
// node on the primary, a leaf on the subscriber, one queue, the tables
// added on both, a worker per node and the pgqd ticker that pgarena
// starts and stops. The queue ticks every 100 ms, under load
// (ticker_max_lag; default 3 s) or idle (ticker_idle_period; default
// 1 min: each step of a table's copy waits for ticks), the workers poll
// every 100 ms (loop_delay; default 1 s) and copy 4 tables at a time
// (parallel_copies; default 1), so the lag is not the ticker's period.
// Tables without a primary key get tableKey, as for slony.
const londisteQueue = "pgarena"

const londisteInstall = "install londiste: apt-get install python3-londiste pgqd postgresql-%[1]d-pgq3 postgresql-%[1]d-pgq-node postgresql-%[1]d-londiste-sql (scripts/install-deps.sh --tests)"

type londiste struct {
	primary, replica       *pgx.ConnConfig
	primaryDSN, replicaDSN string
	dbname                 string
	schema                 *logical
	dir                    string
	major                  int
	syncTimeout            time.Duration
	notef                  func(format string, args ...any)
	procs                  []*exec.Cmd
	keyed                  []string
	logs                   []string
	created                []string // the extensions create-root made on the primary
	env                    []string // the daemons' environment (nil: pgarena's)
	// standby is set when the leaf is a server the user names (Pair).
	standby *standby
	// leafMade: create-leaf ran, so the extensions on the standby are pgarena's.
	leafMade bool
}

// londisteState reads which of londiste's extensions a database has, and
// which of them pgarena marked.
func londisteState(ctx context.Context, conn *pgx.Conn) (had, ours []string, err error) {
	err = conn.QueryRow(ctx, `select coalesce(array_agg(extname::text), '{}'),
			coalesce(array_agg(extname::text) filter (where obj_description(oid, 'pg_extension') = $2), '{}')
		from pg_extension where extname = any($1)`, londisteExtensions, londisteMark).Scan(&had, &ours)
	return had, ours, err
}

// check refuses a primary, or a standby the user names, that has
// londiste's extensions pgarena did not create, and a standby that has
// any of the tables.
func (l *londiste) check(ctx context.Context, tables []string) error {
	for _, cfg := range []*pgx.ConnConfig{l.primary, l.replica} {
		if cfg == l.replica && l.standby == nil {
			break
		}
		conn, err := target.Connect(ctx, cfg, "pgarena-replica")
		if err != nil {
			return err
		}
		had, ours, err := londisteState(ctx, conn)
		if err == nil && len(had) > len(ours) {
			err = fmt.Errorf("--replica londiste: the server %s has the extensions %s already, which pgarena did not create: drop them or use another database", target.Redacted(cfg), strings.Join(had, ", "))
			if l.standby != nil {
				err = &InputError{Msg: err.Error()}
			}
		}
		if err == nil && cfg == l.replica {
			err = l.standby.checkTables(ctx, conn, tables)
		}
		conn.Close(context.Background())
		if err != nil {
			return err
		}
	}
	return nil
}

// londisteExtensions are the extensions create-root installs; pgarena
// marks them with londisteMark, so that it drops only its own (those a
// killed run left behind, at the next run).
var londisteExtensions = []string{"londiste", "pgq_node", "pgq"}

const londisteMark = "pgarena: londiste replica"

func (l *londiste) ini(node string) string { return filepath.Join(l.dir, "londiste-"+node+".ini") }

// attach sets the root and the leaf up, starts pgqd and the workers, adds
// the tables and waits until the leaf has copied them.
func (l *londiste) attach(ctx context.Context, tables []string) error {
	start := time.Now()
	for _, prog := range []string{"londiste", "pgqd"} {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("--replica londiste: %s not found: %s", prog, fmt.Sprintf(londisteInstall, l.major))
		}
	}
	pconn, err := target.Connect(ctx, l.primary, "pgarena-replica")
	if err != nil {
		return err
	}
	defer pconn.Close(context.Background())
	if err := l.check(ctx, tables); err != nil {
		return err
	}
	if _, ours, err := londisteState(ctx, pconn); err != nil {
		return err
	} else if len(ours) > 0 {
		l.notef("londiste replica: removing the londiste set-up a killed run left on the primary")
		l.created = ours
		l.dropExtensions(ctx, pconn)
	}
	if l.standby != nil {
		if err := l.standby.exec(ctx, l.replica, func(ctx context.Context, conn *pgx.Conn) error {
			if _, ours, err := londisteState(ctx, conn); err != nil || len(ours) == 0 {
				return err
			}
			l.notef("londiste replica: removing the londiste set-up a killed run left on the standby")
			return l.dropLeaf(ctx, conn)
		}); err != nil {
			return fmt.Errorf("londiste replica: %w", err)
		}
	}
	l.created = londisteExtensions
	qualified, keyed, err := keyAndCopy(ctx, pconn, "londiste", tables, l.notef, l.standby, l.replica, l.schema)
	l.keyed = keyed
	if err != nil {
		return err
	}
	for node, dsn := range map[string]string{"root": l.primaryDSN, "leaf": l.replicaDSN} {
		conf := fmt.Sprintf("[londiste]\njob_name = pgarena_%s\ndb = %s\nqueue_name = %s\nlogfile = %s\npidfile = %s\nloop_delay = 0.1\nparallel_copies = 4\n",
			node, dsn, londisteQueue, filepath.Join(l.dir, "londiste-"+node+".log"), filepath.Join(l.dir, "londiste-"+node+".pid"))
		if err := os.WriteFile(l.ini(node), []byte(conf), 0o600); err != nil {
			return err
		}
	}
	base := strings.Replace(l.primaryDSN, "dbname="+l.dbname, "", 1)
	pgqd := fmt.Sprintf("[pgqd]\nlogfile = %s\npidfile = %s\nbase_connstr = %s\ninitial_database = %s\ndatabase_list = %s\nticker_period = 0.1\n",
		filepath.Join(l.dir, "pgqd.log"), filepath.Join(l.dir, "pgqd.pid"), base, l.dbname, l.dbname)
	if err := os.WriteFile(filepath.Join(l.dir, "pgqd.ini"), []byte(pgqd), 0o600); err != nil {
		return err
	}
	if err := l.run(ctx, l.ini("root"), "create-root", "pgarena_root", l.primaryDSN); err != nil {
		return err
	}
	for _, ext := range londisteExtensions {
		if _, err := pconn.Exec(ctx, `comment on extension `+ext+` is '`+londisteMark+`'`); err != nil {
			return fmt.Errorf("londiste replica: %w", err)
		}
	}
	l.leafMade = true
	if err := l.run(ctx, l.ini("leaf"), "create-leaf", "pgarena_leaf", l.replicaDSN, "--provider="+l.primaryDSN); err != nil {
		return err
	}
	if l.standby != nil {
		if err := l.standby.exec(ctx, l.replica, func(ctx context.Context, conn *pgx.Conn) error {
			for _, ext := range londisteExtensions {
				if _, err := conn.Exec(ctx, `comment on extension `+ext+` is '`+londisteMark+`'`); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("londiste replica: marking the standby's extensions: %w", err)
		}
	}
	if _, err := pconn.Exec(ctx, `select pgq.set_queue_config($1, k, '100 milliseconds') from unnest(array['ticker_max_lag', 'ticker_idle_period']) k`, londisteQueue); err != nil {
		return fmt.Errorf("londiste replica: %w", err)
	}
	if err := l.start("pgqd", filepath.Join(l.dir, "pgqd.ini")); err != nil {
		return err
	}
	for _, node := range []string{"root", "leaf"} {
		if err := l.start("londiste", l.ini(node), "worker"); err != nil {
			return err
		}
	}
	if err := l.run(ctx, l.ini("root"), append([]string{"add-table"}, qualified...)...); err != nil {
		return err
	}
	if err := l.run(ctx, l.ini("leaf"), append([]string{"add-table"}, qualified...)...); err != nil {
		return err
	}
	if err := l.waitCopied(ctx); err != nil {
		return err
	}
	l.notef("londiste replica: %d tables added and copied in %s", len(tables), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// run runs a londiste command.
func (l *londiste) run(ctx context.Context, ini string, args ...string) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, "londiste", append([]string{ini}, args...)...)
	cmd.Env = l.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("londiste replica: londiste %s failed: %v: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// start starts a daemon in the foreground, logging into the replica's
// directory; it dies with pgarena (Linux).
func (l *londiste) start(prog string, args ...string) error {
	path := filepath.Join(l.dir, fmt.Sprintf("%s-%d.out", prog, len(l.procs)))
	cmd, err := startDaemon(l.env, path, prog, args...)
	if err != nil {
		return fmt.Errorf("londiste replica: %w", err)
	}
	l.procs, l.logs = append(l.procs, cmd), append(l.logs, path)
	return nil
}

// waitCopied waits until every table of the leaf is in sync (merge_state ok).
func (l *londiste) waitCopied(ctx context.Context) error {
	rconn, err := target.Connect(ctx, l.replica, "pgarena-replica")
	if err != nil {
		return err
	}
	defer rconn.Close(context.Background())
	return await.Wait{What: "the londiste leaf to copy the tables", Timeout: l.syncTimeout, Flag: "--replica-sync-timeout", Notef: l.notef}.
		Poll(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, string, error) {
			var pending int
			var states string
			err := rconn.QueryRow(ctx, `select count(*) filter (where merge_state is distinct from 'ok'), coalesce(string_agg(table_name || ' ' || coalesce(merge_state, 'new'), ', '), '')
				from londiste.get_table_list($1)`, londisteQueue).Scan(&pending, &states)
			if err != nil {
				return false, err.Error(), nil
			}
			return pending == 0 && states != "", "tables: " + states + " (logs in " + l.dir + ")", nil
		})
}

// trouble reports a daemon that exited.
func (l *londiste) trouble(context.Context) error {
	for i, cmd := range l.procs {
		if cmd.ProcessState != nil {
			b, _ := os.ReadFile(l.logs[i])
			return fmt.Errorf("%s exited: %s", filepath.Base(l.logs[i]), strings.TrimSpace(string(b)))
		}
	}
	return nil
}

// detach stops the daemons and drops the key columns from the primary.
func (l *londiste) detach() {
	for _, cmd := range l.procs {
		stopDaemon(cmd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := target.Connect(ctx, l.primary, "pgarena-replica")
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	dropKeys(ctx, conn, "londiste", l.keyed, l.notef)
	l.dropExtensions(ctx, conn)
	if l.standby != nil {
		l.standby.detach(ctx, l.replica, l.dropLeaf)
	}
}

// dropLeaf drops londiste's extensions from a standby the user names: those
// pgarena marked, or all of them once create-leaf ran (check found none).
func (l *londiste) dropLeaf(ctx context.Context, conn *pgx.Conn) error {
	exts := londisteExtensions
	if !l.leafMade {
		_, ours, err := londisteState(ctx, conn)
		if err != nil {
			return err
		}
		exts = ours
	}
	for _, ext := range exts {
		if _, err := conn.Exec(ctx, `drop extension if exists `+ext+` cascade`); err != nil {
			return fmt.Errorf("dropping the extension %s: %w", ext, err)
		}
	}
	return nil
}

// dropExtensions drops the extensions pgarena created on the primary.
func (l *londiste) dropExtensions(ctx context.Context, conn *pgx.Conn) {
	for _, ext := range l.created {
		if _, err := conn.Exec(ctx, `drop extension if exists `+ext+` cascade`); err != nil {
			l.notef("londiste replica: could not drop the extension %s from the primary: %v", ext, err)
		}
	}
}
