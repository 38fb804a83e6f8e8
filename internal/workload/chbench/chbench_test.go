package chbench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/loader/loadertest"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
	"github.com/pgarena/pgarena/internal/workload/analytic"
)

func newWorkload(t *testing.T, args ...string) *Workload {
	t.Helper()
	return loadertest.Configured(t, New(), args...)
}

// emptyOnLoad are the queries that find nothing in the initial data
// (TPC-C's clause 4.3.3.1 makes it so): q11, s_order_cnt is 0 everywhere;
// q20, no item has stock for twice its order lines' quantity; q21, every
// line was delivered at its order's entry time; q22, every customer has
// an order.
var emptyOnLoad = map[string]bool{"q11": true, "q20": true, "q21": true, "q22": true}

// TestQueriesRunAndCheck loads 1 warehouse, runs each of the 22 queries
// (prepared, as a run does by default) to its last row, and checks the
// database (TPC-C's conditions and the extra tables' counts).
func TestQueriesRunAndCheck(t *testing.T) {
	if len(Queries()) != 22 {
		t.Fatalf("%d queries, want 22", len(Queries()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := newWorkload(t, "--warehouses", "1")
	dsn := pgtest.DSN(t)
	dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
	if _, err := loader.Init(ctx, dial, w, loader.Options{Workers: 2}); err != nil {
		t.Fatalf("init: %v", err)
	}
	conn, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := w.Prepare(ctx, conn); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	for i, q := range Queries() {
		if q.Name != "q"+strconv.Itoa(i+1) {
			t.Errorf("query %d is named %s", i+1, q.Name)
		}
		start := time.Now()
		n := 0
		rows, err := conn.Query(ctx, q.SQL)
		if err == nil {
			for rows.Next() {
				n++
			}
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			t.Errorf("%s: %v", q.Name, err)
			continue
		}
		t.Logf("%s: %d rows in %v", q.Name, n, time.Since(start).Round(time.Millisecond))
		if n == 0 && !emptyOnLoad[q.Name] {
			t.Errorf("%s returned no row on the initial data", q.Name)
		}
	}
	if err := w.Check(ctx, conn); err != nil {
		t.Fatalf("check: %v", err)
	}
	if _, err := conn.Exec(ctx, "delete from nation where n_nationkey = 48"); err != nil {
		t.Fatal(err)
	}
	if err := w.Check(ctx, conn); err == nil || !strings.Contains(err.Error(), "nation holds 61 rows, want 62") {
		t.Errorf("check after deleting a nation: %v", err)
	}
}

// TestNationKeys: the 62 keys are the ASCII codes of the digits and
// letters, GERMANY and CAMBODIA (named by the queries) are customer
// nations, and every nation's region exists.
func TestNationKeys(t *testing.T) {
	keys := nationKeys()
	if len(keys) != nations || len(nationList) != nations {
		t.Fatalf("%d keys, %d nations, want %d", len(keys), len(nationList), nations)
	}
	for i, k := range keys {
		if nationList[i].region < 0 || nationList[i].region >= regions {
			t.Errorf("%s: region %d", nationList[i].name, nationList[i].region)
		}
		switch nationList[i].name {
		case "GERMANY", "CAMBODIA":
			if k < 'A' || k > 'Z' {
				t.Errorf("%s has key %d: customers (c_state 'A'..'Z') never reach it", nationList[i].name, k)
			}
		}
	}
}

// TestFingerprint pins the extra tables' generated rows at the default
// seed: a change here changes every chbench database.
func TestFingerprint(t *testing.T) {
	h := sha256.New()
	for _, tb := range extraTables(1) {
		fmt.Fprintf(h, "%s %v %d %d\n", tb.Name, tb.Columns, tb.Rows.N, tb.Rows.Rows)
		var dst [][]any
		for i := 0; i < tb.Rows.N; i++ {
			dst = tb.Rows.Fill(i, dst)
			for _, r := range dst {
				for _, v := range r {
					if n, ok := v.(pgtype.Numeric); ok {
						v = n.Int.String() + "e" + strconv.Itoa(int(n.Exp))
					}
					fmt.Fprintf(h, "%v|", v)
				}
				h.Write([]byte{'\n'})
			}
		}
		again := tb.Rows.Fill(0, nil)
		if fmt.Sprint(again) != fmt.Sprint(tb.Rows.Fill(0, dst)) {
			t.Errorf("%s: batch 0 differs when generated again", tb.Name)
		}
	}
	const want = "7102df2c69c8138874a95f71119d5b5ec225eda7e3086fda6be4e36dfd05b647"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("fingerprint = %s, want %s", got, want)
	}
}

// TestFigures: QphH from the analytic groups' committed queries, beside
// NOPM, with the note that they move against each other; qphh_partial,
// saying how many of 22 ran, when some never completed.
func TestFigures(t *testing.T) {
	w := newWorkload(t, "--warehouses", "1", "--olap-clients", "2")
	before := map[string]float64{"d_next_o_id": 100, "xacts": 0, "rollbacks": 0}
	after := map[string]float64{"d_next_o_id": 160, "xacts": 1000, "rollbacks": 0}
	committed := map[string]int64{"oltp/new_order": 60, "oltp/payment": 50, "olap/q1": 23, "olap/q2": 1}
	for _, q := range Queries()[2:] {
		committed["olap/"+q.Name] = 1
	}
	figs := w.Figures(workload.FigureWindow{Before: before, After: after, Elapsed: time.Minute, Committed: committed})
	byName := map[string]workload.Figure{}
	var order []string
	for _, f := range figs {
		byName[f.Name] = f
		order = append(order, f.Name)
	}
	if order[0] != "nopm" || order[1] != "qphh" {
		t.Errorf("figures in order %v, want nopm then qphh", order)
	}
	if f := byName["nopm"]; f.Value != 60 {
		t.Errorf("nopm = %v, want 60", f.Value)
	}
	if f := byName["nopm_clients"]; f.Value != 60 {
		t.Errorf("nopm_clients = %v, want 60 (group names stripped)", f.Value)
	}
	if f := byName["qphh"]; f.Value != 44*60 || !strings.Contains(f.Note, "move against each other") {
		t.Errorf("qphh = %v (%s), want %d with the note", f.Value, f.Note, 44*60)
	}
	delete(committed, "olap/q7")
	delete(committed, "olap/q20")
	for _, f := range w.Figures(workload.FigureWindow{Before: before, After: after, Elapsed: time.Minute, Committed: committed}) {
		if f.Name == "qphh" {
			t.Errorf("qphh printed while q7 and q20 never completed: %+v", f)
		}
		if f.Name == "qphh_partial" && (f.Value != 42*60 || !strings.Contains(f.Note, "20 of 22 queries completed (q7 q20 never did")) {
			t.Errorf("qphh_partial %+v, want %d saying 20 of 22", f, 42*60)
		}
	}
	if got := analytic.QphH(22*2, 10*time.Minute); got != 264 {
		t.Errorf("QphH(44 queries, 10 min) = %v, want 264 (22 × 2 streams × 3600 / 600 s)", got)
	}
}

// TestGroups: the parts share the whole workload's tables and figures
// and have their own transaction types.
func TestGroups(t *testing.T) {
	w := newWorkload(t, "--oltp-clients", "3", "--olap-clients", "1")
	parts := w.Groups()
	if len(parts) != 2 || parts[0].Name != GroupOLTP || parts[0].Clients != 3 || parts[1].Name != GroupOLAP || parts[1].Clients != 1 {
		t.Fatalf("groups %+v", parts)
	}
	if got := parts[1].Workload.TxTypes(); len(got) != 22 || got[0] != "q1" {
		t.Errorf("olap types %v", got)
	}
	if got := parts[0].Workload.TxTypes(); got[0] != "new_order" {
		t.Errorf("oltp types %v", got)
	}
	if parts[0].Workload.Meta().Name != "chbench" || len(parts[0].Workload.Tables()) != 12 {
		t.Errorf("oltp part: %s, %d tables", parts[0].Workload.Meta().Name, len(parts[0].Workload.Tables()))
	}
	if _, ok := parts[1].Workload.(workload.FigureReporter); !ok {
		t.Error("a part is not the whole workload's FigureReporter")
	}
	w = newWorkload(t, "--olap-clients", "0")
	if len(w.Groups()) != 1 {
		t.Errorf("--olap-clients 0: %d groups", len(w.Groups()))
	}
	w = New()
	if err := w.Flags().Parse([]string{"--oltp-clients", "0", "--olap-clients", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err == nil {
		t.Error("no client at all validates")
	}
}

// TestDistribute: on Citus, tpcc's distribution and the extra tables as
// reference tables; nothing without Citus.
func TestDistribute(t *testing.T) {
	if got := newWorkload(t).Distribute(); got != nil {
		t.Errorf("without --citus: %v", got)
	}
	got := strings.Join(newWorkload(t, "--citus").Distribute(), "\n")
	for _, want := range []string{"create_distributed_table('warehouse', 'w_id'", "create_reference_table('item')",
		"create_reference_table('supplier')", "create_reference_table('nation')", "create_reference_table('region')"} {
		if !strings.Contains(got, want) {
			t.Errorf("Distribute lacks %q:\n%s", want, got)
		}
	}
}

// TestPartsValidateRun: tpcc's 10 terminals per warehouse bound the
// transactional clients only.
func TestPartsValidateRun(t *testing.T) {
	parts := newWorkload(t, "--warehouses", "1").Groups()
	if err := parts[0].Workload.(workload.RunValidator).ValidateRun(11); err == nil {
		t.Error("11 oltp clients on 1 warehouse validate")
	}
	if err := parts[1].Workload.(workload.RunValidator).ValidateRun(11); err != nil {
		t.Errorf("11 analytic streams on 1 warehouse: %v", err)
	}
}
