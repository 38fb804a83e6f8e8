package replica_test

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/replica"
)

// TestPairBetweenServers: slony and londiste set up between two servers
// the test names. A standby that has one of the tables is refused before
// anything changes (a copy a killed run left is replaced); the replica
// then follows like a local subscriber; the
// teardown leaves both servers as they were (the standby's own table is
// kept) and nothing in the test's directory.
func TestPairBetweenServers(t *testing.T) {
	for _, kind := range replica.PairKinds {
		t.Run(kind, func(t *testing.T) {
			prog := map[string]string{"slony": "slonik", "londiste": "londiste"}[kind]
			if _, err := osexec.LookPath(prog); err != nil && !pgtest.Required() {
				t.Skipf("%s is not installed (scripts/install-deps.sh --tests)", kind)
			}
			testPair(t, kind)
		})
	}
}

func testPair(t *testing.T, kind string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tmp, env, _ := tempServer(t)
	primary, err := target.ParseDSN(pgtest.DSN(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := pgtest.NewCluster(t, nil)
	admin, err := target.ParseDSN(other.DSN("postgres"), nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, ctx, admin, `create database standby`)
	standby, err := target.ParseDSN(other.DSN("standby"), nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, ctx, primary, `create table t (id int primary key, v int); insert into t select g, 0 from generate_series(0, 9) g`)
	exec(t, ctx, standby, `create table keep (id int); insert into keep values (1)`)
	// a copy a killed run left (pgarena's mark, another shape): replaced
	exec(t, ctx, standby, `create table t (id int); comment on table t is 'pgarena: copy of the table on a standby, for the run'`)

	p := &replica.Pair{Inner: &target.DSN{Config: primary}, Kind: kind, Standby: standby, Env: env, Notef: t.Logf, SyncTimeout: time.Minute}
	tgt, teardown, err := p.Provision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	torn := false
	defer func() {
		if !torn {
			teardown()
		}
	}()
	var ie *replica.InputError
	err = tgt.Replicas[0].Check(ctx, []string{"t", "keep"})
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "has the tables keep already") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a standby with the table keep: %v, want one line refusing it", err)
	}
	if err := tgt.Replicas[0].Check(ctx, []string{"t", replica.HeartbeatTable}); err != nil {
		t.Fatal(err)
	}
	lagAndCatchUp(t, ctx, kind, tgt, byLock)
	teardown()
	torn = true

	var left string
	conn, err := target.Connect(ctx, standby, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const what = `select concat_ws(' ',
		(select string_agg(relname, ',') from pg_class where relname in ('t', 'pgarena_heartbeat')),
		(select string_agg(nspname, ',') from pg_namespace where nspname in ('_pgarena', 'pgq', 'pgq_node', 'londiste')),
		(select string_agg(extname, ',') from pg_extension where extname in ('pgq', 'pgq_node', 'londiste')))`
	if err := conn.QueryRow(ctx, what).Scan(&left); err != nil {
		t.Fatal(err)
	}
	var keep int
	if err := conn.QueryRow(ctx, `select count(*) from keep`).Scan(&keep); err != nil || keep != 1 {
		t.Errorf("the standby's own table keep: %d rows, %v", keep, err)
	}
	if left != "" {
		t.Errorf("the standby keeps %s after the teardown", left)
	}
	pconn, err := target.Connect(ctx, primary, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer pconn.Close(ctx)
	if err := pconn.QueryRow(ctx, strings.Replace(what, "'t', ", "", 1)).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != "" && left != replica.HeartbeatTable {
		t.Errorf("the primary keeps %s after the teardown", left)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("the teardown left %s in %s", entries[0].Name(), tmp)
	}
}
