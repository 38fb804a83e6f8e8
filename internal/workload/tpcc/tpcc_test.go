package tpcc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// The query modes the driver sets for -M simple, extended and prepared.
var modes = []pgx.QueryExecMode{
	pgx.QueryExecModeSimpleProtocol,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeCacheStatement,
}

func count(t *testing.T, conn *pgx.Conn, sql string) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// checkRowCounts compares every table with clause 4.3.3.1 for W
// warehouses right after the load.
func checkRowCounts(t *testing.T, conn *pgx.Conn, wh int64) {
	t.Helper()
	for _, c := range []struct {
		table string
		want  int64
	}{
		{"item", 100000},
		{"warehouse", wh},
		{"district", 10 * wh},
		{"customer", 30000 * wh},
		{"history", 30000 * wh},
		{"orders", 30000 * wh},
		{"new_order", 9000 * wh},
		{"stock", 100000 * wh},
		{"order_line", count(t, conn, "select sum(o_ol_cnt) from orders")},
	} {
		if got := count(t, conn, "select count(*) from "+c.table); got != c.want {
			t.Errorf("%s has %d rows, want %d", c.table, got, c.want)
		}
	}
	// order_line averages 10 lines per order (5..15)
	if ol := count(t, conn, "select count(*) from order_line"); ol < 290000*wh || ol > 310000*wh {
		t.Errorf("order_line has %d rows, want about %d", ol, 300000*wh)
	}
	for _, q := range []string{
		"select count(*) from district where d_next_o_id <> 3001",
		"select count(*) from orders where (o_id < 2101) <> (o_carrier_id is not null)",
		"select count(*) from new_order where no_o_id < 2101",
		"select count(*) from customer where c_middle <> 'OE' or c_balance <> -10 or c_ytd_payment <> 10",
		"select count(*) from warehouse where w_ytd <> 300000",
	} {
		if n := count(t, conn, q); n != 0 {
			t.Errorf("%s: %d", q, n)
		}
	}
	for _, q := range []string{
		"select count(*) from item where i_data like '%ORIGINAL%'",
		"select count(*) / " + fmt.Sprint(wh) + " from stock where s_data like '%ORIGINAL%'",
	} {
		if n := count(t, conn, q); n < 9000 || n > 11000 {
			t.Errorf("%s: %d, want about 10000", q, n)
		}
	}
}

// runWorkers runs n transactions on each of clients concurrent workers,
// one connection each, as the driver would: Next, then Do.
func runWorkers(t *testing.T, w *Workload, dsn string, mode pgx.QueryExecMode, clients, n int, seed uint64) [5]int {
	t.Helper()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		counts [5]int
		errs   []error
	)
	for id := range clients {
		conn := pgtest.Connect(t, dsn, mode)
		wk := w.NewWorker(id, rand.New(rand.NewPCG(seed, uint64(id))))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				tx := wk.Next()
				err := wk.Do(context.Background(), conn, tx)
				mu.Lock()
				counts[tx]++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if conn.PgConn().TxStatus() != 'I' {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s left a transaction open", txNames[tx]))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("worker: %v", err)
	}
	return counts
}

func TestOneWarehouse(t *testing.T) {
	w := newWorkload(t, "-w", "1")
	dsn := loadertest.Loaded(t, w)
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	checkRowCounts(t, conn, 1)
	if err := w.Check(ctx, conn); err != nil {
		t.Fatalf("Check after load: %v", err)
	}
	t.Run("prepare", func(t *testing.T) {
		w := newWorkload(t)
		w.warehouses = 7
		if err := w.Prepare(ctx, conn); err != nil || w.warehouses != 1 {
			t.Fatalf("Prepare = %v, warehouses %d", err, w.warehouses)
		}
		if p := w.Params(); p["warehouses"] != "1" || p["stored_procs_present"] != "true" || p["stored_procs"] != "false" {
			t.Fatalf("Params after Prepare = %v, want the database's 1 warehouse and its functions present", p)
		}
		err := newWorkload(t, "--warehouses", "2").Prepare(ctx, conn)
		want := "the database holds 1 warehouses but --warehouses 2 was given: leave it out to use 1, or run `pgarena init tpcc --warehouses 2`"
		if err == nil || err.Error() != want {
			t.Fatalf("Prepare = %v, want %q", err, want)
		}
		if err := newWorkload(t, "--warehouses", "1").Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		// The load's C for C_LAST comes from the database, whatever the
		// run's seed: the run's C keeps the distance of clause 2.1.6.1.
		rw := newWorkload(t)
		rw.SetSeed(7)
		if err := rw.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		c := rw.constants()
		if load := constantsFor(1).cLastLoad; c.cLastLoad != load || !validDelta(c.cLastLoad, c.cLastRun) {
			t.Fatalf("run constants %+v: want C_LAST load %d and a valid delta", c, load)
		}
		if _, err := conn.Exec(ctx, "comment on column customer.c_last is null"); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, fmt.Sprintf("comment on column customer.c_last is '%s%d'", cLastComment, constantsFor(1).cLastLoad)) //nolint:errcheck
		if err := rw.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		if p := rw.Params()["c_last_load"]; !strings.HasPrefix(p, "unknown") {
			t.Fatalf("c_last_load without the comment = %q, want unknown", p)
		}
	})
	t.Run("check finds breakage", func(t *testing.T) { checkFindsBreakage(t, conn) })
	for _, args := range [][]string{nil, {"--stored-procs"}} {
		t.Run(fmt.Sprintf("new-order rollbacks %v", args), func(t *testing.T) {
			newOrderRollbacks(t, dsn, conn, args)
		})
	}
	t.Run("errors roll back", func(t *testing.T) { errorRollsBack(t, dsn, conn) })
	t.Run("payment function c_data", func(t *testing.T) { paymentProcCData(t, conn) })
	t.Run("order-status without orders", func(t *testing.T) { orderStatusNoOrders(t, dsn, conn) })
	t.Run("HammerDB types", func(t *testing.T) {
		for col, want := range map[string]string{
			"customer.c_since": "timestamp with time zone", "history.h_date": "timestamp with time zone",
			"orders.o_entry_d": "timestamp with time zone", "order_line.ol_delivery_d": "timestamp with time zone",
			"warehouse.w_ytd": "numeric(16,2)",
		} {
			tbl, c, _ := strings.Cut(col, ".")
			var got string
			if err := conn.QueryRow(ctx, `select format_type(atttypid, atttypmod) from pg_attribute
				where attrelid = $1::regclass and attname = $2`, tbl, c).Scan(&got); err != nil || got != want {
				t.Errorf("%s: %q %v, want %s", col, got, err, want)
			}
		}
	})
	// last: it drops a function
	t.Run("stored procedures missing", func(t *testing.T) {
		if _, err := conn.Exec(ctx, "drop function pgarena_tpcc_delivery(int, int)"); err != nil {
			t.Fatal(err)
		}
		w := newWorkload(t)
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatalf("Prepare without --stored-procs: %v", err)
		}
		if p := w.Params()["stored_procs_present"]; p != "false" {
			t.Errorf("stored_procs_present with a function missing = %q, want false", p)
		}
		err := newWorkload(t, "--stored-procs").Prepare(ctx, conn)
		want := "--stored-procs needs the functions pgarena creates at init, and function pgarena_tpcc_delivery(int,int) is missing: run `pgarena init tpcc --functions-only` to create them without touching the data, or leave out --stored-procs"
		if err == nil || err.Error() != want {
			t.Fatalf("Prepare = %v, want %q", err, want)
		}
	})
}

// newOrderRollbacks runs 400 new-orders on 2 clients. Clause 2.4.1.4:
// about 1% of them roll back; they return nil and leave no trace in the
// database.
func newOrderRollbacks(t *testing.T, dsn string, conn *pgx.Conn, args []string) {
	{
		ctx := context.Background()
		before := count(t, conn, "select sum(d_next_o_id) from district")
		w := newWorkload(t, args...)
		if err := w.Prepare(ctx, conn); err != nil {
			t.Fatal(err)
		}
		const n = 400
		var wg sync.WaitGroup
		for id := range 2 {
			c := pgtest.Connect(t, dsn, pgx.QueryExecModeCacheStatement)
			wk := w.NewWorker(id, rand.New(rand.NewPCG(11, uint64(id))))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range n / 2 {
					if err := wk.Do(ctx, c, txNewOrder); err != nil {
						t.Errorf("new_order: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		rb := w.Rollbacks()
		if rb < 1 || rb > 12 {
			t.Errorf("%d rollbacks in %d new-orders, want about 1%%", rb, n)
		}
		if got := count(t, conn, "select sum(d_next_o_id) from district") - before; got != n-rb {
			t.Errorf("d_next_o_id grew by %d, want %d committed new-orders", got, n-rb)
		}
		if err := w.Check(ctx, conn); err != nil {
			t.Errorf("Check after new-orders: %v", err)
		}
	}
}

func TestPrepareEmpty(t *testing.T) {
	conn := pgtest.Connect(t, pgtest.DSN(t), pgx.QueryExecModeSimpleProtocol)
	err := newWorkload(t).Prepare(context.Background(), conn)
	want := "database is not initialised for tpcc (table warehouse is missing): run `pgarena init tpcc` first"
	if err == nil || err.Error() != want {
		t.Fatalf("Prepare = %v, want %q", err, want)
	}
}

// TestTwoWarehouses loads 2 warehouses, checks the counts and the
// consistency conditions, then runs the mix under each query mode with
// concurrent clients (home warehouses, then --all-warehouses) and checks
// again after each.
func TestTwoWarehouses(t *testing.T) {
	w := newWorkload(t, "--warehouses", "2")
	dsn := loadertest.Loaded(t, w)
	conn := pgtest.Connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	checkRowCounts(t, conn, 2)
	if err := w.Check(ctx, conn); err != nil {
		t.Fatalf("Check after load: %v", err)
	}
	for i, mode := range modes {
		for _, opt := range []string{"--all-warehouses=false", "--all-warehouses", "--stored-procs", "--stored-procs --all-warehouses"} {
			t.Run(fmt.Sprintf("%v/%s", mode, opt), func(t *testing.T) {
				rw := newWorkload(t, strings.Fields(opt)...)
				if err := rw.Prepare(ctx, conn); err != nil {
					t.Fatal(err)
				}
				hist := count(t, conn, "select count(*) from history")
				counts := runWorkers(t, rw, dsn, mode, 4, 100, uint64(i))
				// one deck of 100 per worker: exactly 45/43/4/4/4
				if counts != [5]int{180, 172, 16, 16, 16} {
					t.Errorf("transactions by type = %v", counts)
				}
				if got := count(t, conn, "select count(*) from history") - hist; got != 172 {
					t.Errorf("history grew by %d, want 172 payments", got)
				}
				if err := rw.Check(ctx, conn); err != nil {
					t.Fatalf("Check after the run: %v", err)
				}
			})
		}
	}
	if n := count(t, conn, "select count(*) from orders where o_all_local = 0"); n == 0 {
		t.Error("no order with a remote line")
	}
	if n := count(t, conn, "select count(*) from history h where h_c_w_id <> h_w_id"); n == 0 {
		t.Error("no remote payment")
	}
	if n := count(t, conn, "select count(*) from orders where o_carrier_id is not null and o_id between 2101 and 3000"); n == 0 {
		t.Error("no delivery happened")
	}
}

// checkFindsBreakage breaks each condition in turn and expects Check to
// name it, then repairs the database.
func checkFindsBreakage(t *testing.T, conn *pgx.Conn) {
	w := newWorkload(t)
	ctx := context.Background()
	for _, tc := range []struct{ breakSQL, fixSQL, want string }{
		{"update district set d_ytd = d_ytd + 1 where d_id = 3", "update district set d_ytd = d_ytd - 1 where d_id = 3",
			"tpcc check: condition 1 (W_YTD = sum(D_YTD)) fails for warehouse 1: w_ytd = 300000.00, sum(d_ytd) = 300001.00"},
		{"update district set d_next_o_id = d_next_o_id + 4 where d_id = 2", "update district set d_next_o_id = d_next_o_id - 4 where d_id = 2",
			"tpcc check: condition 2 (D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)) fails for warehouse 1 district 2: d_next_o_id - 1 = 3004, max(o_id) = 3000, max(no_o_id) = 3000"},
		{"delete from new_order where no_d_id = 5 and no_o_id = 2500", "insert into new_order values (1, 5, 2500)",
			"tpcc check: condition 3 (max(NO_O_ID) - min(NO_O_ID) + 1 = rows in new_order) fails for warehouse 1 district 5: max - min + 1 = 900, count = 899"},
		{"update orders set o_ol_cnt = o_ol_cnt + 1 where o_d_id = 7 and o_id = 1", "update orders set o_ol_cnt = o_ol_cnt - 1 where o_d_id = 7 and o_id = 1",
			"tpcc check: condition 4 (sum(O_OL_CNT) = rows in order_line) fails for warehouse 1 district 7"},
	} {
		if _, err := conn.Exec(ctx, tc.breakSQL); err != nil {
			t.Fatal(err)
		}
		err := w.Check(ctx, conn)
		if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
			t.Errorf("Check after %q = %v, want %q", tc.breakSQL, err, tc.want)
		}
		if _, err := conn.Exec(ctx, tc.fixSQL); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Check(ctx, conn); err != nil {
		t.Errorf("Check after repairs: %v", err)
	}
}

// errorRollsBack makes a statement of each writing transaction fail and
// expects an error naming it, no transaction left open, and the database
// unchanged (still consistent). It removes the constraints it adds.
func errorRollsBack(t *testing.T, dsn string, admin *pgx.Conn) {
	ctx := context.Background()
	orders := count(t, admin, "select count(*) from orders")
	defer func() {
		if _, err := admin.Exec(ctx, `alter table history drop constraint no_payment;
			alter table order_line drop constraint no_order; alter table orders drop constraint no_delivery`); err != nil {
			t.Fatal(err)
		}
	}()
	for _, c := range []string{
		"alter table history add constraint no_payment check (h_amount < 0) not valid",
		"alter table order_line add constraint no_order check (ol_quantity > 10) not valid",
		"alter table orders add constraint no_delivery check (o_carrier_id is null or o_carrier_id > 10) not valid",
	} {
		if _, err := admin.Exec(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range modes {
		for _, args := range [][]string{nil, {"--stored-procs"}} {
			t.Run(fmt.Sprint(mode, args), func(t *testing.T) {
				conn := pgtest.Connect(t, dsn, mode)
				rw := newWorkload(t, args...)
				if err := rw.Prepare(ctx, conn); err != nil {
					t.Fatal(err)
				}
				wk := rw.NewWorker(0, rand.New(rand.NewPCG(7, 8)))
				for tx, want := range map[workload.TxType]string{txPayment: "no_payment", txNewOrder: "no_order", txDelivery: "no_delivery"} {
					for range 3 { // the first may be a rolled-back new-order
						err := wk.Do(ctx, conn, tx)
						if err == nil && tx == txNewOrder {
							continue
						}
						if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), txNames[tx]+": ") {
							t.Errorf("%s: Do = %v, want a violation of %s", txNames[tx], err, want)
						}
						break
					}
					if s := conn.PgConn().TxStatus(); s != 'I' {
						t.Fatalf("%s left the connection in transaction status %c", txNames[tx], s)
					}
				}
				if err := rw.Check(ctx, conn); err != nil {
					t.Errorf("Check after failed transactions: %v", err)
				}
			})
		}
	}
	if n := count(t, admin, "select count(*) from orders"); n != orders {
		t.Errorf("orders has %d rows after failed new-orders, had %d", n, orders)
	}
}

// paymentProcCData pays a BC and a GC customer through the payment
// function: clause 2.5.2.2 prepends the payment's identifiers to a BC
// customer's C_DATA (truncated to 500) and leaves a GC customer's alone.
// The function's CASE holds no non-IMMUTABLE call, which Citus refuses.
func paymentProcCData(t *testing.T, conn *pgx.Conn) {
	ctx := context.Background()
	var def string
	if err := conn.QueryRow(ctx, "select prosrc from pg_proc where proname = 'pgarena_tpcc_payment'").Scan(&def); err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(def, "case when"); i < 0 || strings.Contains(def[i:], "format(") {
		t.Errorf("the payment function calls format() inside its CASE:\n%s", def)
	}
	for _, credit := range []string{"BC", "GC"} {
		var c int
		var before string
		if err := conn.QueryRow(ctx, "select c_id, c_data from customer where c_w_id = 1 and c_d_id = 2 and c_credit = $1 order by c_id limit 1",
			credit).Scan(&c, &before); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "select pgarena_tpcc_payment(1, 3, 1, 2, $1::int, '', 12.5)", c); err != nil {
			t.Fatalf("payment of %s customer %d: %v", credit, c, err)
		}
		var after string
		if err := conn.QueryRow(ctx, "select c_data from customer where c_w_id = 1 and c_d_id = 2 and c_id = $1", c).Scan(&after); err != nil {
			t.Fatal(err)
		}
		want := before
		if credit == "BC" {
			want = fmt.Sprintf("%d 2 1 3 1 12.5 %s", c, before)
			if len(want) > 500 {
				want = want[:500]
			}
		}
		if after != want {
			t.Errorf("%s customer %d: c_data = %.60q..., want %.60q...", credit, c, after, want)
		}
	}
}

// orderStatusNoOrders: a customer without orders (a HammerDB-built
// database has thousands) is read, not failed, in every mode.
func orderStatusNoOrders(t *testing.T, dsn string, admin *pgx.Conn) {
	ctx := context.Background()
	if _, err := admin.Exec(ctx, `insert into customer select 3001, c_d_id, c_w_id, c_first, c_middle, 'NOORDERS',
		c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance,
		c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data from customer where c_w_id = 1 and c_d_id = 4 and c_id = 1`); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(ctx, "delete from customer where c_id = 3001") //nolint:errcheck
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
			}{{3001, ""}, {0, "NOORDERS"}} {
				if err := wk.orderStatusOf(ctx, conn, 1, 4, by.c, by.last); err != nil {
					t.Errorf("%v %v: order-status of customer %d %q without orders: %v", mode, args, by.c, by.last, err)
				}
				if s := conn.PgConn().TxStatus(); s != 'I' {
					t.Fatalf("left the connection in transaction status %c", s)
				}
			}
		}
	}
}
