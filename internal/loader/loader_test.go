package loader

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/tpcb"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func tpcbWorkload(t testing.TB, args ...string) workload.Workload {
	t.Helper()
	w := tpcb.New()
	if err := w.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

type db struct {
	dsn  string
	conn *pgx.Conn
}

func newDB(t testing.TB) db {
	t.Helper()
	dsn := pgtest.DSN(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return db{dsn, conn}
}

func (d db) dial(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, d.dsn) }

func (d db) exec(t testing.TB, sql string) {
	t.Helper()
	if _, err := d.conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (d db) count(t testing.TB, table string) int64 {
	t.Helper()
	var n int64
	if err := d.conn.QueryRow(context.Background(), "select count(*) from "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func (d db) comment(t testing.TB, table string) string {
	t.Helper()
	var c *string
	if err := d.conn.QueryRow(context.Background(), "select obj_description($1::regclass, 'pg_class')", table).Scan(&c); err != nil {
		t.Fatalf("comment of %s: %v", table, err)
	}
	if c == nil {
		return ""
	}
	return *c
}

type countingProgress struct {
	begin  atomic.Int64
	rows   atomic.Int64
	phases []string

	mu     sync.Mutex
	tables []TableRows
	added  map[int]int64
	done   map[string]int64 // rows by table, from TableDone
}

func (p *countingProgress) Begin(tables []TableRows) {
	var n int64
	for _, t := range tables {
		n += t.Rows
	}
	p.begin.Store(n)
	p.tables = tables
	p.added, p.done = map[int]int64{}, map[string]int64{}
}

func (p *countingProgress) Add(table int, n int64) {
	p.rows.Add(n)
	p.mu.Lock()
	p.added[table] += n
	p.mu.Unlock()
}

func (p *countingProgress) TableDone(table int, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.done[p.tables[table].Name]; dup {
		panic("TableDone twice for " + p.tables[table].Name)
	}
	p.done[p.tables[table].Name] = n
}

func (p *countingProgress) Phase(name string) { p.phases = append(p.phases, name) }

func TestInitMarksAndReports(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	w := tpcbWorkload(t, "-s", "2")
	missing, err := Missing(ctx, d.conn, w)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches"}; !slices.Equal(missing, want) {
		t.Errorf("Missing on an empty database = %v, want %v", missing, want)
	}
	p := &countingProgress{}
	st, err := Init(ctx, d.dial, w, Options{Workers: 3, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(200022); st.Rows != want || p.begin.Load() != want || p.rows.Load() != want {
		t.Errorf("rows: stats %d, progress begin %d add %d, want %d", st.Rows, p.begin.Load(), p.rows.Load(), want)
	}
	for i, tr := range p.tables {
		if p.done[tr.Name] != tr.Rows || p.added[i] != tr.Rows {
			t.Errorf("table %s: expected %d rows, added %d, done with %d", tr.Name, tr.Rows, p.added[i], p.done[tr.Name])
		}
	}
	if len(p.done) != 3 { // pgbench_history starts empty
		t.Errorf("TableDone for %v, want the 3 tables with rows", p.done)
	}
	if want := []string{"create tables", "load", "primary keys", "vacuum analyze"}; !slices.Equal(p.phases, want) {
		t.Errorf("phases = %v, want %v", p.phases, want)
	}
	if st.Total < st.Create+st.Load+st.PostLoad+st.Vacuum || st.Load <= 0 {
		t.Errorf("stats do not add up: %+v", st)
	}
	if missing, err := Missing(ctx, d.conn, w); err != nil || len(missing) != 0 {
		t.Errorf("Missing after Init = %v, %v", missing, err)
	}
	for _, table := range []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts", "pgbench_branches"} {
		if c := d.comment(t, table); c[:len(markPrefix)] != markPrefix || c[len(markPrefix):len(markPrefix)+4] != "tpcb" {
			t.Errorf("%s comment = %q", table, c)
		}
	}
	// analysed, and frozen (checked with contrib's pg_visibility: without
	// it, a failure under PGARENA_REQUIRE_PG=1, a log line otherwise)
	var analysed int64
	if err := d.conn.QueryRow(ctx, `select count(*) from pg_stat_user_tables
		where last_analyze is not null and relname like 'pgbench%'`).Scan(&analysed); err != nil || analysed != 4 {
		t.Errorf("%d tables analysed (%v), want 4", analysed, err)
	}
	if _, err := d.conn.Exec(ctx, "create extension if not exists pg_visibility"); err != nil {
		if pgtest.Required() {
			t.Errorf("cannot verify FREEZE: pg_visibility: %v (install the server's contrib modules: scripts/install-deps.sh)", err)
		} else {
			t.Logf("not checking FREEZE (set %s=1 to fail instead): %v", pgtest.RequireEnv, err)
		}
	} else {
		var pages, frozen int64
		if err := d.conn.QueryRow(ctx, `select relpages, (select all_frozen from pg_visibility_map_summary('pgbench_accounts'))
			from pg_class where relname = 'pgbench_accounts'`).Scan(&pages, &frozen); err != nil {
			t.Fatal(err)
		}
		if pages == 0 || frozen != pages {
			t.Errorf("pgbench_accounts: %d of %d pages all-frozen, want all", frozen, pages)
		}
	}
	// Init again over its own tables: no --force needed
	if _, err := Init(ctx, d.dial, tpcbWorkload(t), Options{Workers: 2}); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if n := d.count(t, "pgbench_branches"); n != 1 {
		t.Errorf("pgbench_branches has %d rows after re-init at scale 1", n)
	}
}

func TestInitRefusesForeignTables(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	d.exec(t, "create table pgbench_accounts (precious text)")
	d.exec(t, "insert into pgbench_accounts values ('keep me')")
	w := tpcbWorkload(t)
	if f, err := Foreign(ctx, d.conn, w); err != nil || f == nil || !slices.Equal(f.Tables, []string{"pgbench_accounts"}) {
		t.Fatalf("Foreign = %v, %v", f, err)
	}
	_, err := Init(ctx, d.dial, w, Options{Workers: 2})
	var fe *ForeignTablesError
	if !errors.As(err, &fe) || !slices.Equal(fe.Tables, []string{"pgbench_accounts"}) {
		t.Fatalf("Init over a foreign table = %v, want a *ForeignTablesError", err)
	}
	if want := "refusing to replace tables pgarena did not create: pgbench_accounts (pass --force to replace them)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	var s string
	if err := d.conn.QueryRow(ctx, "select precious from pgbench_accounts").Scan(&s); err != nil || s != "keep me" {
		t.Fatalf("foreign table changed: %q, %v", s, err)
	}
	if missing, _ := Missing(ctx, d.conn, w); len(missing) != 3 {
		t.Errorf("Init created tables although it refused: missing %v", missing)
	}
	if _, err := Init(ctx, d.dial, w, Options{Workers: 2, Force: true}); err != nil {
		t.Fatalf("Init with Force: %v", err)
	}
	if n := d.count(t, "pgbench_accounts"); n != 100000 {
		t.Errorf("pgbench_accounts has %d rows after a forced Init", n)
	}
	if f, err := Foreign(ctx, d.conn, w); err != nil || f != nil {
		t.Errorf("Foreign after forced Init = %v, %v", f, err)
	}
}

// Workloads share table names (tpch, tpcc and chbench: orders, customer,
// ...): a table pgarena made for another workload is not this one's to
// replace or drop.
func TestOtherWorkloadsTablesAreForeign(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	d.exec(t, "create table pgbench_accounts (precious text)")
	d.exec(t, "insert into pgbench_accounts values ('keep me')")
	d.exec(t, "comment on table pgbench_accounts is "+quoteLiteral(markComment("tpcc")))
	w := tpcbWorkload(t)
	_, err := Init(ctx, d.dial, w, Options{Workers: 2})
	want := "refusing to replace tables pgarena did not create for this workload: pgbench_accounts (tpcc's) (use another database, or pass --force to replace them)"
	if err == nil || err.Error() != want {
		t.Fatalf("Init over another workload's table = %v, want %q", err, want)
	}
	if dropped, err := Drop(ctx, d.conn, w); err != nil || len(dropped) != 0 {
		t.Fatalf("Drop = %v, %v; want nothing dropped", dropped, err)
	}
	var s string
	if err := d.conn.QueryRow(ctx, "select precious from pgbench_accounts").Scan(&s); err != nil || s != "keep me" {
		t.Fatalf("another workload's table changed: %q, %v", s, err)
	}
}

func TestDropOnlyMarked(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	w := tpcbWorkload(t)
	if _, err := Init(ctx, d.dial, w, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	// replace one table by a foreign one
	d.exec(t, "drop table pgbench_history")
	d.exec(t, "create table pgbench_history (mine int)")
	dropped, err := Drop(ctx, d.conn, w)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pgbench_tellers", "pgbench_accounts", "pgbench_branches"}; !slices.Equal(dropped, want) {
		t.Errorf("Drop = %v, want %v", dropped, want)
	}
	missing, _ := Missing(ctx, d.conn, w)
	if want := []string{"pgbench_tellers", "pgbench_accounts", "pgbench_branches"}; !slices.Equal(missing, want) {
		t.Errorf("Missing after Drop = %v, want %v", missing, want)
	}
	if dropped, err := Drop(ctx, d.conn, w); err != nil || len(dropped) != 0 {
		t.Errorf("second Drop = %v, %v", dropped, err)
	}
}

func TestPartitionsMarkedAndDropped(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	w := tpcbWorkload(t, "--partitions", "3")
	if _, err := Init(ctx, d.dial, w, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	for p := 1; p <= 3; p++ {
		name := fmt.Sprintf("pgbench_accounts_%d", p)
		if c := d.comment(t, name); len(c) < len(markPrefix) || c[:len(markPrefix)] != markPrefix {
			t.Errorf("%s comment = %q", name, c)
		}
		if n := d.count(t, name); n < 33332 || n > 33334 { // pgbench's part_size rounds up
			t.Errorf("%s has %d rows", name, n)
		}
	}
	// a partition attached by someone else is foreign, and protects
	// its parent from Drop
	d.exec(t, "alter table pgbench_accounts detach partition pgbench_accounts_3")
	d.exec(t, "create table extra partition of pgbench_accounts for values from (66669) to (maxvalue)")
	d.exec(t, "insert into pgbench_accounts values (99999, 1, 0, 'theirs')")
	if f, err := Foreign(ctx, d.conn, w); err != nil || f == nil || !slices.Equal(f.Tables, []string{"extra"}) {
		t.Fatalf("Foreign = %v, %v", f, err)
	}
	dropped, err := Drop(ctx, d.conn, w)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pgbench_history", "pgbench_tellers", "pgbench_accounts_1", "pgbench_accounts_2", "pgbench_accounts_3", "pgbench_branches"}; !slices.Equal(dropped, want) {
		t.Errorf("Drop = %v, want %v", dropped, want)
	}
	if n := d.count(t, "extra"); n != 1 {
		t.Error("foreign partition lost its rows")
	}
	d.exec(t, "drop table extra")
	dropped, err = Drop(ctx, d.conn, w)
	if err != nil || !slices.Equal(dropped, []string{"pgbench_accounts"}) {
		t.Errorf("Drop = %v, %v, want [pgbench_accounts]", dropped, err)
	}
}

func TestInitStopsOnCancel(t *testing.T) {
	d := newDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	p := &countingProgress{}
	done := make(chan error, 1)
	go func() {
		_, err := Init(ctx, d.dial, tpcbWorkload(t, "-s", "100"), Options{Workers: 2, Progress: p})
		done <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); p.rows.Load() == 0; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("Init ended before it loaded a row: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no row loaded within 30 s")
		}
	}
	cancel()
	start := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Init after cancel = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Init took %v to stop", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Init did not stop after cancel")
	}
}

// typesWorkload is a small workload with one column of each type the
// encoder handles, directly or through pgx.
type typesWorkload struct{}

func (typesWorkload) Meta() workload.Meta { return workload.Meta{Name: "loadertypes"} }
func (typesWorkload) Validate() error     { return nil }
func (typesWorkload) TxTypes() []string   { return nil }
func (typesWorkload) NewWorker(int, *rand.Rand) workload.Worker {
	return nil
}

var when = time.Date(2024, 2, 29, 12, 34, 56, 789000000, time.UTC)

func (typesWorkload) Tables() []workload.Table {
	return []workload.Table{{
		Name: "loader_types",
		Create: []string{`create table loader_types (i2 smallint, i4 int, i8 bigint, t text, v varchar(10),
			c char(5), f float8, b boolean, ts timestamptz, n numeric(10,2), d date, by bytea, nul int)`},
		Columns: []string{"i2", "i4", "i8", "t", "v", "c", "f", "b", "ts", "n", "d", "by", "nul"},
		Rows: workload.Batches{N: 3, Rows: 3, Fill: func(i int, dst [][]any) [][]any {
			return append(dst[:0], []any{int16(-i), int32(i), int64(1) << 40, "tëxt", []byte("vc"), "c",
				1.5, i%2 == 0, when, "12.34", when, []byte{0, 1}, nil})
		}},
		PostLoad: []string{"alter table loader_types add primary key (i4)"},
	}}
}

func TestEncodesTypes(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	if _, err := Init(ctx, d.dial, typesWorkload{}, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := d.conn.QueryRow(ctx, "select string_agg(r::text, ';' order by i4) from loader_types r").Scan(&got); err != nil {
		t.Fatal(err)
	}
	row := func(i int, b string) string {
		return fmt.Sprintf(`(%d,%d,1099511627776,tëxt,vc,"c    ",1.5,%s,"2024-02-29 12:34:56.789+00",12.34,2024-02-29,"\\x0001",)`, -i, i, b)
	}
	if want := row(0, "t") + ";" + row(1, "f") + ";" + row(2, "t"); got != want {
		t.Errorf("rows:\n got %s\nwant %s", got, want)
	}
}

func TestEncodeErrorNamesTable(t *testing.T) {
	d := newDB(t)
	w := typesWorkload{}
	bad := badWorkload{w}
	_, err := Init(context.Background(), d.dial, bad, Options{Workers: 1})
	if err == nil || !containsFold(err.Error(), "load loader_types") || !containsFold(err.Error(), "out of range for integer") {
		t.Fatalf("Init with a bad value = %v", err)
	}
}

type badWorkload struct{ typesWorkload }

func (b badWorkload) Tables() []workload.Table {
	ts := b.typesWorkload.Tables()
	fill := ts[0].Rows.Fill
	ts[0].Rows.Fill = func(i int, dst [][]any) [][]any {
		dst = fill(i, dst)
		dst[0][1] = int64(1) << 40
		return dst
	}
	return ts
}
