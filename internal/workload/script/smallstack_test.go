package script

import "testing"

// SmallStack is true for scripts whose every answer a client waits for in
// the lean path (pgbench's select-only), false for those with a command
// that goes deeper (pgbench's tpcb-like, with its BEGIN and END).
func TestSmallStack(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"\\set aid random(1, 100000 * :scale)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n", true},
		{"\\if :x > 1\nSELECT 1;\n\\else\nSELECT 2;\n\\endif\n", true},
		{"BEGIN;\nSELECT 1;\nEND;\n", false},
		{"select 1;\n  commit;\n", false},
		{"SELECT 1 \\gset\n", false},
		{"\\sleep 1 ms\nSELECT 1;\n", false},
		{"SELECT 1;\n\\shell true\n", false},
	} {
		p := &Program{}
		if _, err := p.Add("t.sql", c.text, 1); err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		p.Define("x", "2")
		p.Define("scale", "1")
		if got := p.NewRunner(0, 1, 1, nil).SmallStack(); got != c.want {
			t.Errorf("%q: SmallStack %v, want %v", c.text, got, c.want)
		}
	}
}
