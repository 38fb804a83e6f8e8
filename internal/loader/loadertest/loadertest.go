// Package loadertest loads a workload into a fresh test database, for the
// tests of workload packages.
package loadertest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// Loaded loads w into a fresh database of the test cluster (two loader
// connections) and returns its DSN.
func Loaded(t testing.TB, w workload.Workload) string {
	t.Helper()
	dsn := pgtest.DSN(t)
	dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
	if _, err := loader.Init(context.Background(), dial, w, loader.Options{Workers: 2}); err != nil {
		t.Fatalf("init: %v", err)
	}
	return dsn
}
