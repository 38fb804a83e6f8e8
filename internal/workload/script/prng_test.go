package script

import "testing"

// The clients' seeds looked up from the kept draws are those clientSeeds
// draws for each client, whatever the order the clients ask in.
func TestSeedDrawsMatchClientSeeds(t *testing.T) {
	var d seedDraws
	for _, c := range []struct {
		seed uint64
		n    int
	}{{1, 1}, {1, 8}, {42, 8}, {42, 3}, {7, 1000}} {
		for _, id := range []int{c.n, c.n - 1, 0, c.n / 2, c.n + 3} {
			fn, def := d.clientSeeds(c.seed, id, c.n)
			wantFn, wantDef := clientSeeds(c.seed, id, c.n)
			if fn != wantFn || def != wantDef {
				t.Fatalf("seed %d, client %d of %d: %v %d, want %v %d", c.seed, id, c.n, fn, def, wantFn, wantDef)
			}
		}
	}
}
