package tpcc

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// fingerprint hashes the columns the transactions write, timestamps left
// out (they differ by when each ran), table by table.
func fingerprint(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	out := map[string]string{}
	for table, cols := range map[string]string{
		"warehouse":  "w_id, w_ytd",
		"district":   "d_w_id, d_id, d_ytd, d_next_o_id",
		"customer":   "c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data",
		"history":    "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data",
		"new_order":  "no_w_id, no_d_id, no_o_id",
		"orders":     "o_w_id, o_d_id, o_id, o_c_id, o_carrier_id, o_ol_cnt, o_all_local",
		"order_line": "ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_amount, ol_delivery_d is null, ol_quantity, ol_dist_info",
		"stock":      "s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt",
	} {
		var h string
		q := "select md5(string_agg(r::text, '|' order by r::text)) from (select " + cols + " from " + table + ") r"
		if err := conn.QueryRow(context.Background(), q).Scan(&h); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		out[table] = h
	}
	return out
}

func sameData(t *testing.T, what string, a, b *pgx.Conn) {
	t.Helper()
	fa, fb := fingerprint(t, a), fingerprint(t, b)
	for table := range fa {
		if fa[table] != fb[table] {
			t.Errorf("%s: table %s differs between HammerDB's routine and the client-side transaction", what, table)
		}
	}
}

// TestHammerDBRoutines runs HammerDB's routines (hammerdb.go), called as
// HammerDB's driver calls them, on one database and pgarena's client-side
// transactions with the same input on another loaded alike: the same rows
// change. New-order draws its lines in the database, so it is checked by
// the consistency conditions and its own lines instead.
func TestHammerDBRoutines(t *testing.T) {
	ctx := context.Background()
	w := newWorkload(t, "-w", "1")
	hdb := pgtest.Connect(t, loadertest.Loaded(t, w), pgx.QueryExecModeSimpleProtocol)
	dsn := loadertest.Loaded(t, newWorkload(t, "-w", "1"))
	cs := pgtest.Connect(t, dsn, pgx.QueryExecModeCacheStatement)
	if err := w.Prepare(ctx, cs); err != nil {
		t.Fatal(err)
	}
	wk := w.NewWorker(0, rand.New(rand.NewPCG(1, 2))).(*worker)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := hdb.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var bc int
	if err := hdb.QueryRow(ctx, "select min(c_id) from customer where c_w_id = 1 and c_d_id = 2 and c_credit = 'BC'").Scan(&bc); err != nil {
		t.Fatal(err)
	}
	var last string
	if err := hdb.QueryRow(ctx, "select c_last from customer where c_w_id = 1 and c_d_id = 3 and c_id = 17").Scan(&last); err != nil {
		t.Fatal(err)
	}

	// HammerDB's NOT NULL constraints: all columns but o_carrier_id,
	// ol_delivery_d, ol_amount, ol_dist_info and h_c_id.
	t.Run("not null", func(t *testing.T) {
		for table, want := range map[string]int64{"warehouse": 9, "district": 11, "customer": 21, "history": 7,
			"new_order": 3, "orders": 7, "order_line": 7, "item": 5, "stock": 17} {
			if n := count(t, hdb, `select count(*) from pg_attribute where attrelid = '`+table+
				`'::regclass and attnum > 0 and attnotnull`); n != want {
				t.Errorf("%s has %d NOT NULL columns, HammerDB's %d", table, n, want)
			}
		}
	})

	const ts = "localtimestamp"
	for _, step := range []struct {
		name string
		hdb  func()
		cs   func() error
	}{
		{"payment function by number (BC customer)",
			func() { exec("select payment(1, 2, 1, 2, $1, 0, 1234.56, '', '0', 0)", bc) },
			func() error {
				return wk.paymentOf(ctx, cs, paymentInput{w: 1, d: 2, cw: 1, cd: 2, c: bc, amount: 123456})
			}},
		{"payment function by name",
			func() { exec("select payment(1, 5, 1, 3, 1, 1, 10.00, $1, '0', 0)", last) },
			func() error {
				return wk.paymentOf(ctx, cs, paymentInput{w: 1, d: 5, cw: 1, cd: 3, last: last, amount: 1000})
			}},
		{"payment procedure by name",
			func() {
				exec("call payment(1, 7, 1, 3, 1, 99.99, '0', '" + last + "', 0, '','','','','','','','','','','','','','','','','','', " +
					ts + ", 0.0, 0.0, 0.0, '', " + ts + ")")
			},
			func() error {
				return wk.paymentOf(ctx, cs, paymentInput{w: 1, d: 7, cw: 1, cd: 3, last: last, amount: 9999})
			}},
		{"delivery function", func() { exec("select delivery(1, 3)") }, func() error { return wk.deliveryOf(ctx, cs, 1, 3) }},
		{"delivery procedure", func() { exec("call delivery(1, 4, " + ts + ")") }, func() error { return wk.deliveryOf(ctx, cs, 1, 4) }},
	} {
		step.hdb()
		if err := step.cs(); err != nil {
			t.Fatalf("%s, client-side: %v", step.name, err)
		}
		sameData(t, step.name, hdb, cs)
	}

	t.Run("stock-level", func(t *testing.T) {
		var fn, proc, own int
		if err := hdb.QueryRow(ctx, "select slev(1, 2, 15)").Scan(&fn); err != nil {
			t.Fatal(err)
		}
		if err := hdb.QueryRow(ctx, "call slev(1, 2, 15, 0)").Scan(&proc); err != nil {
			t.Fatal(err)
		}
		if err := hdb.QueryRow(ctx, "select pgarena_tpcc_stock_level(1, 2, 15)").Scan(&own); err != nil {
			t.Fatal(err)
		}
		if fn != own || proc != own {
			t.Errorf("slev function %d, procedure %d, pgarena's %d: want equal", fn, proc, own)
		}
	})

	t.Run("new-order", func(t *testing.T) {
		next := count(t, hdb, "select sum(d_next_o_id) from district")
		for i := range 200 {
			sql := "select neword(1, 1, $1, $2, $3, 0)"
			if i%2 == 1 {
				sql = "call neword(1, 1, $1, $2, $3, 0.0, '', '', 0.0, 0.0, 0, " + ts + ")"
			}
			if _, err := hdb.Exec(ctx, sql, 1+i%10, 1+i, 5+i%11); err != nil {
				t.Fatalf("neword %d: %v", i, err)
			}
		}
		if n := count(t, hdb, "select count(*) from orders where o_id > 3000"); n < 180 {
			t.Errorf("%d of 200 new orders committed, want about 198 (1%% roll back)", n)
		}
		if got := count(t, hdb, "select sum(d_next_o_id) from district") - next; got != int64(count(t, hdb, "select count(*) from orders where o_id > 3000")) {
			t.Errorf("d_next_o_id grew by %d for %d new orders", got, count(t, hdb, "select count(*) from orders where o_id > 3000"))
		}
		if n := count(t, hdb, `select count(*) from order_line join item on i_id = ol_i_id
			where ol_o_id > 3000 and ol_amount <> ol_quantity * i_price`); n != 0 {
			t.Errorf("%d new order lines with OL_AMOUNT <> OL_QUANTITY * I_PRICE", n)
		}
		if n := count(t, hdb, "select count(*) from order_line where ol_o_id > 3000 and ol_i_id > 100000"); n != 0 {
			t.Errorf("%d lines of the unused item committed (clause 2.4.2.3 rolls them back)", n)
		}
		if err := w.Check(ctx, hdb); err != nil {
			t.Errorf("consistency after HammerDB's neword: %v", err)
		}
	})

	// HammerDB commits the lines of its unused-item orders with a null
	// OL_AMOUNT and OL_DELIVERY_D; every mode reads them.
	t.Run("order-status reads nulls", func(t *testing.T) {
		for _, c := range []*pgx.Conn{hdb, cs} {
			if _, err := c.Exec(ctx, `update order_line set ol_amount = null, ol_delivery_d = null
				where (ol_w_id, ol_d_id, ol_o_id) = (select o_w_id, o_d_id, max(o_id) from orders
				where o_w_id = 1 and o_d_id = 3 and o_c_id = 17 group by o_w_id, o_d_id)`); err != nil {
				t.Fatal(err)
			}
		}
		for _, mode := range modes {
			for _, args := range [][]string{nil, {"--stored-procs"}} {
				conn := pgtest.Connect(t, dsn, mode)
				w := newWorkload(t, args...)
				if err := w.Prepare(ctx, conn); err != nil {
					t.Fatal(err)
				}
				wk := w.NewWorker(0, rand.New(rand.NewPCG(1, 2))).(*worker)
				for _, by := range []struct {
					c    int
					last string
				}{{17, ""}, {0, last}} {
					if err := wk.orderStatusOf(ctx, conn, 1, 3, by.c, by.last); err != nil {
						t.Errorf("%v %v: order-status of customer %d %q: %v", mode, args, by.c, by.last, err)
					}
				}
			}
		}
		rows, err := hdb.Query(ctx, `select * from ostat(1, 3, 17, 0, '') as (ol_i_id integer, ol_supply_w_id integer,
			ol_quantity smallint, ol_amount numeric, ol_delivery_d timestamp with time zone, out_os_c_id integer,
			out_os_c_last character varying, os_c_first character varying, os_c_middle character varying,
			os_c_balance numeric, os_o_id integer, os_entdate timestamp, os_o_carrier_id integer)`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			n++
		}
		if rows.Err() != nil || n < 5 {
			t.Errorf("ostat function: %d lines, %v", n, rows.Err())
		}
		exec("call ostat(1, 3, 17, 1, '" + last + "', '', '', 0.0, 0, " + ts + ", 0, '')")
	})

	// last: init --functions-only on a database whose functions are
	// missing or not pgarena's (HammerDB's): the missing ones are created,
	// the foreign one is kept, the data is untouched; drop keeps it too.
	t.Run("functions only", func(t *testing.T) {
		exec("drop function pgarena_tpcc_delivery(int, int)")
		exec("drop procedure slev(int, int, int, int)")
		exec("drop function neword(int, int, int, int, int, int)")
		exec("create function neword(int, int, int, int, int, int) returns numeric language sql as 'select 0::numeric'")
		before := fingerprint(t, hdb)
		fw := newWorkload(t, "--functions-only")
		created, kept, err := loader.CreateFunctions(ctx, hdb, fw)
		if err != nil {
			t.Fatal(err)
		}
		if len(created) != len(fw.Functions())-1 || len(kept) != 1 || kept[0] != "neword(int,int,int,int,int,int)" {
			t.Fatalf("created %v, kept %v: want all but HammerDB's neword function, which is kept", created, kept)
		}
		after := fingerprint(t, hdb)
		for table := range before {
			if before[table] != after[table] {
				t.Errorf("--functions-only changed table %s", table)
			}
		}
		var n int
		if err := hdb.QueryRow(ctx, "call slev(1, 2, 15, 0)").Scan(&n); err != nil {
			t.Fatalf("slev procedure after --functions-only: %v", err)
		}
		dropped, err := loader.Drop(ctx, hdb, fw)
		if err != nil {
			t.Fatal(err)
		}
		if count(t, hdb, "select count(*) from pg_proc where proname = 'neword'") != 1 || len(dropped) != 9+len(fw.Functions())-1 {
			t.Errorf("drop: %v; want the tables and every routine but the foreign neword", dropped)
		}
	})
}
