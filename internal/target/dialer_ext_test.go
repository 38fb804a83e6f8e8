package target_test

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/target"
)

// TestDialerPreferAsksForTLSOnce: under sslmode=prefer, against a server
// without TLS (pgtest's), a Dialer's first connection costs two dials (TLS
// refused, then plain: pgx's fallback) and every later one a single plain
// dial, without the TLS configuration in its config.
func TestDialerPreferAsksForTLSOnce(t *testing.T) {
	unix, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := target.ParseDSN(fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=prefer",
		unix.Port, unix.User, unix.Database), nil)
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	var d net.Dialer
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	dial := (&target.Target{Config: cfg}).Dialer(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, want := range []int64{2, 1, 1} {
		dials.Store(0)
		conn, err := dial(ctx)
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		tlsConf := conn.Config().TLSConfig != nil
		conn.Close(ctx)
		if got := dials.Load(); got != want {
			t.Errorf("connection %d: %d dials, want %d", i+1, got, want)
		}
		if i > 0 && tlsConf {
			t.Errorf("connection %d: keeps a TLS configuration after the server refused TLS", i+1)
		}
	}
}
