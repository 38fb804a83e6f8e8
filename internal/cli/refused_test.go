package cli

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestConnectionRefusedSaysItOnce: a refused connection prints the dial
// error once (pgx tries with and without TLS and reports both), and
// suggests --wait-ready only when it was not given.
func TestConnectionRefusedSaysItOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now: connections are refused
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=nobody dbname=nothing", port)
	for _, c := range []struct {
		args    []string
		hint    string
		notHint string
	}{
		{nil, "--wait-ready DURATION waits for it", "within --wait-ready"},
		{[]string{"--wait-ready", "1s"}, "did not accept connections within --wait-ready 1s", "--wait-ready DURATION"},
	} {
		r := pgarena(t, nil, append([]string{"run", "tpcb", "-T", "1s", "--dsn", dsn, "--results", t.TempDir()}, c.args...)...)
		if r.code == ExitOK {
			t.Fatalf("connected to a closed port:\n%s", r)
		}
		if n := strings.Count(r.stderr, "connection refused"); n != 1 {
			t.Errorf("%v: the dial error is printed %d times, want once:\n%s", c.args, n, r.stderr)
		}
		if !strings.Contains(r.stderr, c.hint) || strings.Contains(r.stderr, c.notHint) {
			t.Errorf("%v: want the hint %q (and not %q):\n%s", c.args, c.hint, c.notHint, r.stderr)
		}
	}
}
