package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestServeCommand: a bad --addr is bad input (exit 2, one line); serve on a
// free loopback port prints where it serves, with no token, and stops
// cleanly when interrupted.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"nonsense", "127.0.0.1:notaport"} {
		r := pgarena(t, nil, "serve", "--results", t.TempDir(), "--addr", addr)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--addr") {
			t.Errorf("serve --addr %s: want exit 2 and one line naming --addr\n%s", addr, r)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	r := pgarenaCtx(t, ctx, nil, "serve", "--results", t.TempDir(), "--addr", "127.0.0.1:0")
	if r.code != 0 || !strings.Contains(r.stderr, "serving ") || strings.Contains(r.stderr, "token=") {
		t.Errorf("serve on loopback:\n%s", r)
	}
}
