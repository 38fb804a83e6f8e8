package script

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// pgbenchBin is the pgbench the equivalence tests compare with: the one
// beside the test cluster's server (15's, or the version lane's), whose
// version the test logs.
func pgbenchBin(t *testing.T) string {
	t.Helper()
	return pgtest.Cluster(t).Binaries().Path("pgbench")
}

func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/docs/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	return files
}

func connect(t *testing.T, dsn string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func needPgbench(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(pgbenchBin(t)); err != nil {
		if pgtest.Required() {
			t.Fatalf("pgbench is required: %v", err)
		}
		t.Skipf("pgbench not installed: %v", err)
	}
	if out, err := exec.Command(pgbenchBin(t), "--version").Output(); err == nil {
		t.Logf("comparing with %s", strings.TrimSpace(string(out)))
	}
}

func pgbench(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, pgbenchBin(t), append(args, dsn)...).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// modes are pgbench's -M protocols as pgx exec modes.
var modes = map[string]pgx.QueryExecMode{
	"simple":   pgx.QueryExecModeSimpleProtocol,
	"extended": pgx.QueryExecModeExec,
	"prepared": pgx.QueryExecModeCacheStatement,
}

type hookLog struct{ sleeps, steps int }

func (h *hookLog) hooks() workload.Hooks {
	return workload.Hooks{
		Sleep: func(d time.Duration) bool { h.sleeps++; return true },
		Step:  func(int) { h.steps++ },
	}
}

// TestDocExamplesRun runs every example script of the documentation on a
// pgbench database under the three protocols (pipelines: not simple).
func TestDocExamplesRun(t *testing.T) {
	needPgbench(t)
	dsn := pgtest.DSN(t)
	pgbench(t, dsn, "-i", "-q", "-s", "1")
	for name, mode := range modes {
		for _, f := range docFiles(t) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if name == "simple" && strings.Contains(f, "pipeline") ||
				name != "simple" && strings.Contains(string(text), `\;`) {
				continue // as in pgbench: no pipeline in simple, no compound statement in the others
			}
			t.Run(name+"/"+filepath.Base(f), func(t *testing.T) {
				var p Program
				if err := LoadFiles(&p, []string{f}); err != nil {
					t.Fatal(err)
				}
				p.DefineInt("scale", 1)
				var debug strings.Builder
				r := p.NewRunner(0, 1, 7, &debug)
				var h hookLog
				r.SetHooks(h.hooks())
				conn := connect(t, dsn, mode)
				for i := 0; i < 3; i++ {
					if err := r.Do(context.Background(), conn, 0); err != nil {
						t.Fatal(err)
					}
				}
				if h.steps == 0 {
					t.Error("no statement reported")
				}
				if strings.Contains(f, "sleep") && h.sleeps != 6 {
					t.Errorf("%d sleeps, want 6", h.sleeps)
				}
				if strings.Contains(f, "functions") && !strings.Contains(debug.String(), "double 5432.1") {
					t.Errorf("debug output: %q", debug.String())
				}
			})
		}
	}
}

// TestPgbenchEquivalence runs the same deterministic script (random
// functions, hashes, permute, \gset, \if) under pgbench and under pgarena
// with the same --random-seed and client count: the rows it inserts must
// be the same.
func TestPgbenchEquivalence(t *testing.T) {
	needPgbench(t)
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	admin := connect(t, dsn, pgx.QueryExecModeSimpleProtocol)
	const cols = "client int, r bigint, e bigint, g bigint, z bigint, h bigint, f bigint, p bigint, d float8, k bigint, twice bigint, kk bigint, b bigint"
	if _, err := admin.Exec(ctx, "create table equiv ("+cols+", seq bigserial)"); err != nil {
		t.Fatal(err)
	}
	const n = 200
	for _, tc := range []struct {
		mode    string
		clients int
		seed    uint64
	}{{"simple", 1, 5}, {"extended", 2, 12345}, {"prepared", 3, 1}} {
		t.Run(fmt.Sprintf("%s-c%d", tc.mode, tc.clients), func(t *testing.T) {
			if _, err := admin.Exec(ctx, "truncate equiv"); err != nil {
				t.Fatal(err)
			}
			pgbench(t, dsn, "-n", "-f", "testdata/equiv.sql", "-t", fmt.Sprint(n), "-c", fmt.Sprint(tc.clients),
				"-j", "1", "-M", tc.mode, "--random-seed", fmt.Sprint(tc.seed))
			want := dump(t, admin)
			if _, err := admin.Exec(ctx, "truncate equiv"); err != nil {
				t.Fatal(err)
			}
			var p Program
			if err := LoadFiles(&p, []string{"testdata/equiv.sql"}); err != nil {
				t.Fatal(err)
			}
			for id := 0; id < tc.clients; id++ {
				r := p.NewRunner(id, tc.clients, tc.seed, nil)
				conn := connect(t, dsn, modes[tc.mode])
				for i := 0; i < n; i++ {
					if err := r.Do(ctx, conn, 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := dump(t, admin)
			if len(want) != n*tc.clients || len(got) != len(want) {
				t.Fatalf("pgbench inserted %d rows, pgarena %d, want %d", len(want), len(got), n*tc.clients)
			}
			sameRows(t, want, got)
		})
	}
}

// dump returns each client's rows in its order of insertion.
func dump(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(),
		"select row(client, r, e, g, z, h, f, p, d, k, twice, kk, b)::text from equiv order by client, seq")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}
