package loader

import (
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// The post-load plan (no database: which statements may start together)
// builds a table's consecutive indexes at once, runs any other statement
// alone on its table, starts a foreign key once the table it references
// has its keys, and never runs two foreign keys touching one table at once.
func TestPostLoadPlan(t *testing.T) {
	t.Parallel()
	table := func(name string, rows int64, stmts ...string) workload.Table {
		return workload.Table{Name: name, Rows: workload.Batches{Rows: rows}, PostLoad: stmts}
	}
	p := newPostLoadPlan([]workload.Table{
		table("customer", 10, "alter table customer add primary key (c)"),
		table("lineitem", 1000,
			"create unique index lineitem_pkey on lineitem (l, n)",
			"alter table lineitem add foreign key (l) references orders (o)",
			"create index lineitem_i1 on lineitem (p)",
			"CREATE INDEX lineitem_i2 on lineitem (d)",
			"alter table lineitem add constraint lineitem_pkey primary key using index lineitem_pkey",
			"alter table lineitem add foreign key (p) references part(p)"),
		table("orders", 100, "alter table orders add primary key (o)", "create index orders_i1 on orders (c)",
			"alter table orders add foreign key (c) references customer (c)"),
		table("part", 50, "alter table part add primary key (p)"),
	})
	var running []string
	take := func() []string { // everything that may start now
		var got []string
		for {
			ts, s, _ := p.next()
			if ts == nil {
				break
			}
			got = append(got, s)
			running = append(running, s)
		}
		return got
	}
	finish := func(s string) {
		i := slices.Index(running, s)
		if i < 0 {
			t.Fatalf("%q is not running", s)
		}
		running = slices.Delete(running, i, i+1)
		for _, ts := range p.steps {
			if slices.Contains(ts.stmts, s) {
				p.done(ts, s, nil)
				return
			}
		}
	}
	want := func(step string, got []string, w ...string) {
		t.Helper()
		if !slices.Equal(got, w) {
			t.Fatalf("%s: may start %q, want %q", step, got, w)
		}
	}
	want("start", take(),
		"create unique index lineitem_pkey on lineitem (l, n)", "create index lineitem_i1 on lineitem (p)", "CREATE INDEX lineitem_i2 on lineitem (d)",
		"alter table orders add primary key (o)", "alter table part add primary key (p)", "alter table customer add primary key (c)")
	finish("alter table orders add primary key (o)")
	want("orders' key", take(), "create index orders_i1 on orders (c)")
	finish("create index orders_i1 on orders (c)")
	want("orders' index, customer's key running", take())
	finish("alter table customer add primary key (c)")
	want("customer's key", take(), "alter table orders add foreign key (c) references customer (c)")
	finish("create index lineitem_i1 on lineitem (p)")
	finish("CREATE INDEX lineitem_i2 on lineitem (d)")
	want("one of lineitem's indexes left", take())
	finish("create unique index lineitem_pkey on lineitem (l, n)")
	want("lineitem's indexes", take(), "alter table lineitem add constraint lineitem_pkey primary key using index lineitem_pkey")
	finish("alter table lineitem add constraint lineitem_pkey primary key using index lineitem_pkey")
	want("lineitem's keys; orders busy with its foreign key", take())
	finish("alter table part add primary key (p)")
	want("part's key: lineitem's foreign keys keep their order", take())
	finish("alter table orders add foreign key (c) references customer (c)")
	want("orders free", take(), "alter table lineitem add foreign key (l) references orders (o)")
	finish("alter table lineitem add foreign key (l) references orders (o)")
	want("last", take(), "alter table lineitem add foreign key (p) references part(p)")
	finish("alter table lineitem add foreign key (p) references part(p)")
	if ts, _, left := p.next(); ts != nil || left {
		t.Error("statements left after all finished")
	}
}

// The loader's sessions get an equal part of 256 MB of maintenance_work_mem
// for the keys, never less than they had, and it says what it set.
func TestRaiseMaintenanceMem(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	var conns []*pgx.Conn
	for range 2 {
		c, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeConn(c) })
		conns = append(conns, c)
	}
	show := func(c *pgx.Conn) (s string) {
		if err := c.QueryRow(t.Context(), "show maintenance_work_mem").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range conns {
		execOrFatal(t, c, "set maintenance_work_mem = '16MB'")
	}
	got, err := raiseMaintenanceMem(t.Context(), conns)
	if err != nil || got != "128 MB on each of 2 loader sessions (the server's setting: 16 MB)" {
		t.Errorf("raise from 16MB: %q, %v", got, err)
	}
	for _, c := range conns {
		if s := show(c); s != "128MB" {
			t.Errorf("maintenance_work_mem %s after the raise, want 128MB", s)
		}
		execOrFatal(t, c, "set maintenance_work_mem = '2GB'")
	}
	if got, err := raiseMaintenanceMem(t.Context(), conns); err != nil || got != "" || show(conns[1]) != "2GB" {
		t.Errorf("raise from 2GB: %q, %v, %s; want nothing changed", got, err, show(conns[1]))
	}
}

func execOrFatal(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.Exec(t.Context(), sql); err != nil {
		t.Fatal(err)
	}
}
