package cli

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
)

// TestPGEnvFromMainEnv: the PG* variables of Main.Env name the target,
// whatever the process environment says (target.ParseDSN gives them to pgx
// explicitly).
func TestPGEnvFromMainEnv(t *testing.T) {
	cfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGHOST", "/nonexistent/pgarena-env-test") // the process points nowhere
	t.Setenv("PGPORT", "1")
	t.Setenv("PGDATABASE", "nonexistent")
	env := append(cleanEnv(), "PGHOST="+cfg.Host, "PGPORT="+strconv.Itoa(int(cfg.Port)), "PGUSER="+cfg.User,
		"PGDATABASE="+cfg.Database)
	r := pgarena(t, env, "init", "tpcb", "-s", "1")
	if r.code != 0 || !strings.Contains(r.stderr, "init tpcb done") {
		t.Fatalf("init with the target in Main.Env:\n%s", r)
	}
}
