// Package golden is the golden-file helper of pgarena's tests: Check
// compares a test's output with a file under the package's testdata/, and
// `go test -update` rewrites the files instead.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with testdata/name (the file's whole name, e.g.
// "summary.golden"); under -update it writes got there first.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update creates it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (go test -run %s -update rewrites it):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}
