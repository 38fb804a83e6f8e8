package sysbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// sysbench runs the installed sysbench 1.0 against the database of dsn
// with the pgsql driver; args are the test, its options and the command.
func sysbench(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("sysbench")
	if err != nil {
		msg := "sysbench not found on PATH: install it (scripts/install-deps.sh --tests)"
		if pgtest.Required() {
			t.Fatalf("%s; %s=1 makes this a failure", msg, pgtest.RequireEnv)
		}
		t.Skipf("%s; skipping (%s=1 fails instead)", msg, pgtest.RequireEnv)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn := []string{"--db-driver=pgsql", "--pgsql-host=" + cfg.Host, fmt.Sprintf("--pgsql-port=%d", cfg.Port),
		"--pgsql-user=" + cfg.User, "--pgsql-db=" + cfg.Database}
	args = append(args[:1:1], append(conn, args[1:]...)...)
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil || strings.Contains(string(out), "FATAL") {
		t.Fatalf("sysbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// schema describes what must be equal between a database sysbench
// prepared and one pgarena loaded: columns with defaults, constraints,
// indexes, sequences.
func schema(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, q := range map[string]string{
		"columns": `select table_name, ordinal_position, column_name, data_type, coalesce(character_maximum_length, 0),
				is_nullable, coalesce(column_default, '')
			from information_schema.columns where table_name like 'sbtest%' order by 1, 2`,
		"constraints": `select conname, conrelid::regclass::text, contype, pg_get_constraintdef(oid)
			from pg_constraint where conrelid::regclass::text like 'sbtest%' order by 1`,
		"indexes":   `select indexname, indexdef from pg_indexes where tablename like 'sbtest%' order by 1`,
		"sequences": `select sequencename, data_type, last_value from pg_sequences where sequencename like 'sbtest%' order by 1`,
		"data": `select 'sbtest1', count(*), min(id), max(id), min(k) >= 1 and max(k) <= count(*),
				bool_and(c ~ '^[0-9]{11}(-[0-9]{11}){9} $' and pad ~ '^[0-9]{11}(-[0-9]{11}){4} $') from sbtest1`,
	} {
		rows, err := conn.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var lines []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprint(vals...))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		out[name] = strings.Join(lines, "\n")
	}
	return out
}

// comments lists the comments on sbtest tables (pgarena's marks).
func comments(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(context.Background(), `select coalesce(string_agg(c.relname || ': ' || d.description, ', '), '')
		from pg_description d join pg_class c on c.oid = d.objoid where c.relname like 'sbtest%'`).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSchemaMatchesSysbench(t *testing.T) {
	theirs := pgtest.DSN(t)
	sysbench(t, theirs, "oltp_read_write", "--tables=2", "--table-size=1000", "prepare")
	ours := loadertest.Loaded(t, newWorkload(t, "", "--tables", "2", "--table-size", "1000"))
	want, got := schema(t, pgtest.Connect(t, theirs, pgx.QueryExecModeSimpleProtocol)), schema(t, pgtest.Connect(t, ours, pgx.QueryExecModeSimpleProtocol))
	for _, k := range []string{"columns", "constraints", "indexes", "sequences", "data"} {
		if got[k] != want[k] || got[k] == "" {
			t.Errorf("%s differ from sysbench prepare:\npgarena:\n%s\nsysbench:\n%s", k, got[k], want[k])
		}
	}
}

// TestSysbenchRunsOnPgarena: sysbench runs its own scripts on a database
// pgarena loaded, and inserts without an id continue after the loaded ids.
func TestSysbenchRunsOnPgarena(t *testing.T) {
	dsn := loadertest.Loaded(t, newWorkload(t, "", "--tables", "2", "--table-size", "1000"))
	out := sysbench(t, dsn, "oltp_read_write", "--tables=2", "--table-size=1000", "--threads=2", "--time=2", "run")
	if !strings.Contains(out, "transactions:") {
		t.Fatalf("no transactions reported:\n%s", out)
	}
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	if err := newWorkload(t, "", "--tables", "2", "--table-size", "1000").Check(ctx, conn); err != nil {
		t.Fatalf("check after sysbench oltp_read_write: %v", err)
	}
	sysbench(t, dsn, "oltp_insert", "--tables=2", "--table-size=1000", "--events=40", "--time=0", "run")
	var added, above int
	if err := conn.QueryRow(ctx, `select (select count(*) from sbtest1) + (select count(*) from sbtest2) - 2000,
		(select count(*) from sbtest1 where id > 1000) + (select count(*) from sbtest2 where id > 1000)`).Scan(&added, &above); err != nil {
		t.Fatal(err)
	}
	if added != 40 || above != 40 {
		t.Errorf("sysbench oltp_insert added %d rows, %d of them after the loaded ids; want 40 and 40", added, above)
	}
}

// TestPgarenaRunsOnSysbench: pgarena finds the tables sysbench prepared,
// runs on them under every protocol and checks them, without marking or
// altering them; init and drop leave them alone.
func TestPgarenaRunsOnSysbench(t *testing.T) {
	dsn := pgtest.DSN(t)
	sysbench(t, dsn, "oltp_read_write", "--tables=3", "--table-size=1000", "prepare")
	ctx := context.Background()
	admin := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	before := schema(t, admin)
	for mode, qm := range modes {
		conn := pgtest.Connect(t, dsn, qm)
		w := newWorkload(t, "")
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if w.tables != 3 || w.tableSize != 1000 {
			t.Fatalf("Prepare found %d tables of %d rows, want 3 of 1000", w.tables, w.tableSize)
		}
		if err := w.Check(ctx, conn); err != nil {
			t.Fatalf("check before: %v", err)
		}
		wk := w.NewWorker(0, rand.New(rand.NewPCG(3, 4)))
		for range 50 {
			if err := wk.Do(ctx, conn, wk.Next()); err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
		}
		if err := w.Check(ctx, conn); err != nil {
			t.Fatalf("%s: check after: %v", mode, err)
		}
	}
	w := newWorkload(t, "", "--tables", "3")
	if foreign, err := loader.Foreign(ctx, admin, w); err != nil || foreign == nil || len(foreign.Tables) != 3 {
		t.Errorf("Foreign = %v, %v; want the 3 tables", foreign, err)
	}
	if dropped, err := loader.Drop(ctx, admin, w); len(dropped) != 0 {
		t.Errorf("Drop dropped %v (%v)", dropped, err)
	}
	after := schema(t, admin)
	for _, k := range []string{"columns", "constraints", "indexes", "sequences"} {
		if before[k] != after[k] {
			t.Errorf("%s changed:\nbefore:\n%s\nafter:\n%s", k, before[k], after[k])
		}
	}
	if c := comments(t, admin); c != "" {
		t.Errorf("sysbench's tables were marked: %s", c)
	}
}
