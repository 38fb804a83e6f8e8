// Package loadertest is the tests' helper for workload packages: it
// configures a workload from flags (Configured) and loads it into a fresh
// test database (Loaded).
package loadertest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgarena/pgarena/internal/loader"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/workload"
)

// Configured parses args into w's flags, validates w and returns it; a
// bad argument fails the test.
func Configured[W interface {
	workload.Workload
	workload.Flagser
}](t testing.TB, w W, args ...string) W {
	t.Helper()
	if err := w.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

// Loaded loads w into a fresh database of the test cluster (two loader
// connections) and returns its DSN.
func Loaded(t testing.TB, w workload.Workload) string {
	t.Helper()
	return LoadedAt(t, w, pgtest.DSN(t))
}

// LoadedAt loads w into the database of dsn (e.g. pgtest.CitusDSN's) and
// returns dsn.
func LoadedAt(t testing.TB, w workload.Workload, dsn string) string {
	t.Helper()
	dial := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }
	if _, err := loader.Init(context.Background(), dial, w, loader.Options{Workers: 2}); err != nil {
		t.Fatalf("init: %v", err)
	}
	return dsn
}
