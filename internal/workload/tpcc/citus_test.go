package tpcc

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/golden"
	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestCitusGolden compares the Citus DDL with testdata/citus_*.golden;
// go test -run Citus -update rewrites them.
func TestCitusGolden(t *testing.T) {
	for _, tc := range []struct {
		file string
		o    citusOptions
	}{
		{"citus_default.golden", citusOptions{shardCount: defaultShardCount}},
		{"citus_procs_96.golden", citusOptions{shardCount: 96, storedProcs: true}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := strings.Join(citusDDL(tc.o), ";\n") + ";\n"
			golden.Check(t, tc.file, []byte(got))
		})
	}
}

// TestCitusDefaultShardCount: the zero value of citusOptions means 48.
func TestCitusDefaultShardCount(t *testing.T) {
	if got, want := citusDDL(citusOptions{}), citusDDL(citusOptions{shardCount: 48}); !slices.Equal(got, want) {
		t.Errorf("citusDDL(citusOptions{}) = %q, want the 48-shard DDL %q", got, want)
	}
	if n := len(citusDDL(citusOptions{})); n != len(citusTables) {
		t.Errorf("without storedProcs: %d statements, want %d (one per table)", n, len(citusTables))
	}
}

// TestCitusCoversEveryTable: every table of the workload is distributed by
// one of its columns or is the reference table, so a new table that is not
// distributed fails here.
func TestCitusCoversEveryTable(t *testing.T) {
	tables := New().Tables()
	byName := map[string]citusTable{}
	for _, ct := range citusTables {
		if _, dup := byName[ct.table]; dup {
			t.Errorf("table %s is listed twice in citusTables", ct.table)
		}
		byName[ct.table] = ct
	}
	ddl := strings.Join(citusDDL(citusOptions{}), "\n")
	seen := map[string]bool{}
	for _, tab := range tables {
		seen[tab.Name] = true
		ct, ok := byName[tab.Name]
		if !ok {
			t.Errorf("table %s is neither distributed nor a reference table: add it to citusTables", tab.Name)
			continue
		}
		if ct.column == "" {
			if tab.Name != "item" {
				t.Errorf("table %s is a reference table; only item should be", tab.Name)
			}
			if !strings.Contains(ddl, "create_reference_table('"+tab.Name+"')") {
				t.Errorf("no create_reference_table for %s in:\n%s", tab.Name, ddl)
			}
			continue
		}
		if !slices.Contains(tab.Columns, ct.column) {
			t.Errorf("table %s is distributed by %s, which is not one of its columns %v", tab.Name, ct.column, tab.Columns)
		}
		if !strings.HasSuffix(ct.column, "w_id") {
			t.Errorf("table %s is distributed by %s, not a warehouse column", tab.Name, ct.column)
		}
		if !strings.Contains(ddl, "create_distributed_table('"+tab.Name+"', '"+ct.column+"'") {
			t.Errorf("no create_distributed_table for %s in:\n%s", tab.Name, ddl)
		}
	}
	for _, ct := range citusTables {
		if !seen[ct.table] {
			t.Errorf("citusTables names %s, which is not a table of the workload", ct.table)
		}
	}
	// warehouse comes first and alone sets the shard count; the others
	// join its colocation group.
	stmts := citusDDL(citusOptions{shardCount: 7})
	if !strings.Contains(stmts[0], "'warehouse'") || !strings.Contains(stmts[0], "shard_count => 7") {
		t.Errorf("first statement %q does not distribute warehouse with 7 shards", stmts[0])
	}
	for _, s := range stmts[1:] {
		if strings.Contains(s, "shard_count") {
			t.Errorf("%q sets shard_count; only warehouse should (Citus rejects shard_count with colocate_with a table)", s)
		}
		if strings.Contains(s, "create_distributed_table") && !strings.Contains(s, "colocate_with => 'warehouse'") {
			t.Errorf("%q is not colocated with warehouse", s)
		}
	}
}

// keyColumns matches the column list of a primary key, unique constraint
// or unique index.
var keyColumns = regexp.MustCompile(`(?i)(?:primary key|unique)[^(]*\(([^)]*)\)`)

// TestCitusUniqueKeysContainDistributionColumn: Citus refuses a primary key
// or unique index of a distributed table that leaves out the distribution
// column (customer_i2 and orders_i2 included).
func TestCitusUniqueKeysContainDistributionColumn(t *testing.T) {
	col := map[string]string{}
	for _, ct := range citusTables {
		col[ct.table] = ct.column
	}
	keys := 0
	for _, tab := range New().Tables() {
		if col[tab.Name] == "" {
			continue
		}
		for _, s := range tab.PostLoad {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(s)), "create or replace function") {
				continue
			}
			for _, m := range keyColumns.FindAllStringSubmatch(s, -1) {
				keys++
				var cols []string
				for c := range strings.SplitSeq(m[1], ",") {
					cols = append(cols, strings.TrimSpace(c))
				}
				if !slices.Contains(cols, col[tab.Name]) {
					t.Errorf("%s: key (%s) does not contain the distribution column %s", tab.Name, m[1], col[tab.Name])
				}
			}
		}
	}
	// seven primary keys (history has none) and customer_i2, orders_i2
	if keys < 9 {
		t.Errorf("found %d keys on distributed tables, want at least 9: is keyColumns out of date?", keys)
	}
}

// procParams matches a function of procDDL: name and parameter list.
var procParams = regexp.MustCompile(`create or replace function (\w+)\(([^)]*)\)`)

// TestCitusFunctions: every function --stored-procs uses is distributed by
// its home-warehouse parameter p_w and colocated with warehouse.
func TestCitusFunctions(t *testing.T) {
	params := map[string][]string{}
	for _, s := range procDDL {
		if m := procParams.FindStringSubmatch(s); m != nil {
			var ps []string
			for p := range strings.SplitSeq(m[2], ",") {
				ps = append(ps, strings.TrimSpace(p))
			}
			params[m[1]] = ps
		}
	}
	stmts := citusFunctionDDL()
	if len(stmts) != len(procSignatures) {
		t.Fatalf("%d statements for %d functions", len(stmts), len(procSignatures))
	}
	for i, sig := range procSignatures {
		name := citusProcName(sig)
		arg, ok := citusProcWarehouseArg.Get()[name]
		if !ok {
			t.Errorf("%s has no entry in citusProcWarehouseArg", sig)
			continue
		}
		ps := params[name]
		if arg < 1 || arg > len(ps) {
			t.Errorf("%s: argument %d out of range of its parameters %q", sig, arg, ps)
			continue
		}
		if f := strings.Fields(ps[arg-1]); len(f) != 2 || f[0] != "p_w" || f[1] != "int" {
			t.Errorf("%s: argument %d is %q, want the home warehouse p_w int", sig, arg, ps[arg-1])
		}
		want := "select create_distributed_function('" + sig + "', '$" + strconv.Itoa(arg) + "', colocate_with => 'warehouse')"
		if stmts[i] != want {
			t.Errorf("statement %d = %q, want %q", i, stmts[i], want)
		}
	}
	if len(citusProcWarehouseArg.Get()) != len(procSignatures) {
		t.Errorf("citusProcWarehouseArg has %d entries for %d functions", len(citusProcWarehouseArg.Get()), len(procSignatures))
	}
	// with storedProcs the function statements follow the tables
	all := citusDDL(citusOptions{storedProcs: true})
	if !slices.Equal(all[len(all)-len(stmts):], stmts) || len(all) != len(citusTables)+len(stmts) {
		t.Errorf("citusDDL with storedProcs = %q, want the table statements then %q", all, stmts)
	}
}

func TestCitusValidateShardCount(t *testing.T) {
	for _, n := range []int{1, 48, 96, 64000} {
		if err := validateShardCount(n); err != nil {
			t.Errorf("validateShardCount(%d) = %v, want nil", n, err)
		}
	}
	for _, n := range []int{0, -1, 64001} {
		err := validateShardCount(n)
		if err == nil {
			t.Errorf("validateShardCount(%d) = nil, want an error", n)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("validateShardCount(%d): message %q is not one line", n, err)
		}
	}
}

func TestCitusQuote(t *testing.T) {
	if got := citusQuote("o'brien"); got != "'o''brien'" {
		t.Errorf("citusQuote = %s", got)
	}
}

// TestCitusWiring: without the extension init distributes nothing, and
// --citus then says what is missing; with Citus on (as PrepareInit sets it
// when the extension is there) Distribute gives the golden DDL and the
// functions are distributed right after their creation.
func TestCitusWiring(t *testing.T) {
	conn := pgtest.Connect(t, pgtest.DSN(t), pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	w := newWorkload(t)
	if err := w.PrepareInit(ctx, conn); err != nil || w.Distribute() != nil {
		t.Fatalf("plain PostgreSQL: PrepareInit %v, Distribute %v", err, w.Distribute())
	}
	want := "--citus: the target has no citus extension (run `create extension citus` on the coordinator, or leave out --citus)"
	if err := newWorkload(t, "--citus").PrepareInit(ctx, conn); err == nil || err.Error() != want {
		t.Fatalf("--citus without the extension: %v, want %q", err, want)
	}
	w = newWorkload(t, "--shard-count", "96")
	w.citus = true // what PrepareInit does on a coordinator
	if got := w.Distribute(); !slices.Equal(got, citusDDL(citusOptions{shardCount: 96})) {
		t.Errorf("Distribute = %v", got)
	}
	post := w.Tables()[0].PostLoad
	fns := citusFunctionDDL()
	if len(post) < len(fns) || !slices.Equal(post[len(post)-len(fns):], fns) {
		t.Errorf("warehouse PostLoad does not end with the distributed functions: %v", post)
	}
	bad := New()
	if err := bad.Flags().Parse([]string{"--shard-count", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "--shard-count must be") {
		t.Errorf("--shard-count 0: Validate = %v", err)
	}
}
