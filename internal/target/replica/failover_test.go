package replica_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/target/replica"
)

// TestFailoverCountsLostCommits: a standby cut off from its primary before
// the fault (primary_conninfo emptied) misses what the primary
// acknowledged since: the ledger counts exactly those, and what the new
// primary holds is what was acknowledged and kept.
func TestFailoverCountsLostCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tgt, teardown := provision(t, ctx, "streaming")
	defer teardown()
	standby := tgt.Replicas[0].Config
	count := func(cfg string) int64 {
		c := tgt.Config
		if cfg == "standby" {
			c = standby
		}
		conn, err := target.Connect(ctx, c, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int64
		if err := conn.QueryRow(ctx, `select count(*) from `+replica.LedgerTable).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var cutAt int64
	fo := &replica.Failover{After: time.Second, Crash: tgt.Crash, Primary: tgt.Config, Standby: standby,
		Clients: replica.FollowConfig(tgt.Config, standby), Timeout: time.Minute, Notef: t.Logf,
		BeforeFault: func() {
			exec(t, ctx, standby, `alter system set primary_conninfo = ''`)
			exec(t, ctx, standby, `select pg_reload_conf()`)
			for deadline := time.Now().Add(30 * time.Second); ; {
				conn, err := target.Connect(ctx, standby, "test")
				if err != nil {
					t.Error(err)
					return
				}
				var n int
				err = conn.QueryRow(ctx, `select count(*) from pg_stat_wal_receiver`).Scan(&n)
				conn.Close(ctx)
				if err == nil && n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Error("the standby's WAL receiver did not stop")
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			// the primary acknowledges 50 more ledger rows
			cutAt = count("primary")
			for deadline := time.Now().Add(30 * time.Second); count("primary") < cutAt+50 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
		}}
	if err := fo.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	fo.Start(ctx)
	fo.Arm(time.Now(), time.Time{})
	// The fault comes after a second; then the ledger writes to the new
	// primary until it holds rows written after the promotion.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no ledger row on the new primary")
		}
		conn, err := target.Connect(ctx, standby, "test")
		if err != nil {
			continue
		}
		var primary bool
		conn.QueryRow(ctx, `select not pg_is_in_recovery()`).Scan(&primary)
		conn.Close(ctx)
		if primary && count("standby") > cutAt+10 {
			break
		}
	}
	res := fo.Stop(ctx, nil)
	t.Logf("failover: %+v", *res)
	if res.Problem != "" || res.DowntimeS <= 0 || res.Replication != "async" {
		t.Fatalf("failover %+v", *res)
	}
	if res.AckedLost < 49 {
		t.Errorf("%d acknowledged commits lost, want at least the 49 acknowledged after the standby was cut off", res.AckedLost)
	}
	if held := count("standby"); held != res.LedgerAcked-res.AckedLost+res.InDoubtKept {
		t.Errorf("the new primary holds %d ledger rows; acknowledged %d - lost %d + unanswered kept %d = %d",
			held, res.LedgerAcked, res.AckedLost, res.InDoubtKept, res.LedgerAcked-res.AckedLost+res.InDoubtKept)
	}
}

// TestFailoverCommandAndOrchestrator: the fault is the user's command
// (SIGQUIT to the postmaster: an immediate shutdown) and the promotion
// the user's orchestrator's (here the test's): pgarena waits for it.
func TestFailoverCommandAndOrchestrator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tgt, teardown := provision(t, ctx, "streaming")
	defer teardown()
	standby := tgt.Replicas[0].Config
	pid := postmasterPID(t, ctx, tgt.Config)
	fo := &replica.Failover{After: 500 * time.Millisecond, Command: fmt.Sprintf("kill -QUIT %d", pid), External: true,
		Primary: tgt.Config, Standby: standby, Clients: replica.FollowConfig(tgt.Config, standby), Timeout: time.Minute,
		Notef: t.Logf}
	if err := fo.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	fo.Start(ctx)
	fo.Arm(time.Now(), time.Time{})
	// The orchestrator: once the primary is gone, promote the standby.
	for deadline := time.Now().Add(time.Minute); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command did not stop the primary")
		}
	}
	exec(t, ctx, standby, `select pg_promote()`)
	waitLedgerRows(t, ctx, standby, 10)
	res := fo.Stop(ctx, nil)
	t.Logf("failover: %+v", *res)
	if res.Problem != "" || res.Fault != "command" || res.Promotion != "external" || res.DowntimeS <= 0 {
		t.Errorf("failover %+v", *res)
	}
}

// waitLedgerRows waits until the ledger on cfg has n rows more than now.
func waitLedgerRows(t *testing.T, ctx context.Context, cfg *pgx.ConnConfig, n int64) {
	t.Helper()
	first := int64(-1)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		conn, err := target.Connect(ctx, cfg, "test")
		if err != nil {
			continue
		}
		var have int64
		err = conn.QueryRow(ctx, `select count(*) from `+replica.LedgerTable).Scan(&have)
		conn.Close(ctx)
		if err != nil {
			continue
		}
		if first < 0 {
			first = have
		}
		if have >= first+n {
			return
		}
	}
	t.Fatalf("the ledger on the new primary did not grow by %d rows within a minute", n)
}
