package pooler

import (
	"os"
	"strings"
	"testing"

	"github.com/pgarena/pgarena/internal/target"
)

// missing is a kind whose program is not installed anywhere.
type missing struct{ pgbouncer }

func (missing) program() (string, string, string) {
	return "pgarena-no-such-pooler", "pgarena-no-such-package", "--version"
}

func TestMissingProgram(t *testing.T) {
	_, err := findProgram(missing{}, "/usr/bin:/bin")
	if err == nil || err.Error() != "install pgarena-no-such-pooler (apt-get install pgarena-no-such-package)" {
		t.Errorf("error %v", err)
	}
}

func TestNewAndQueryModes(t *testing.T) {
	inner := &target.DSN{}
	for _, c := range []struct{ kind, mode, want string }{
		{"nginx", "", `unknown pooler "nginx" (use haproxy, pgbouncer, pgpool)`},
		{"pgbouncer", "sideways", `pgbouncer has no mode "sideways" (use transaction, session, statement)`},
		{"haproxy", "transaction", `haproxy has no mode "transaction" (use tcp)`},
	} {
		if _, err := New(inner, Options{Kind: c.kind, Mode: c.mode}); err == nil || err.Error() != c.want {
			t.Errorf("%s:%s: %v, want %s", c.kind, c.mode, err, c.want)
		}
	}
	for _, c := range []struct {
		kind, mode, qmode string
		refused           bool
	}{
		{"pgbouncer", "", "prepared", true}, // transaction by default
		{"pgbouncer", "statement", "prepared", true},
		{"pgbouncer", "session", "prepared", false},
		{"pgbouncer", "transaction", "extended", false},
		{"haproxy", "", "prepared", false},
		{"pgpool", "", "prepared", false},
	} {
		p, err := New(inner, Options{Kind: c.kind, Mode: c.mode})
		if err != nil {
			if strings.HasPrefix(err.Error(), "install ") && os.Getenv("PGARENA_REQUIRE_PG") != "1" {
				t.Skip(err)
			}
			t.Fatal(err)
		}
		if err := p.CheckQueryMode(c.qmode); (err != nil) != c.refused {
			t.Errorf("%s:%s -M %s: %v", c.kind, c.mode, c.qmode, err)
		}
	}
	p, _ := New(inner, Options{Kind: "pgbouncer"})
	if p.opts.PoolSize != DefaultPoolSize || p.opts.Mode != "transaction" || !p.Pools() {
		t.Errorf("defaults %+v", p.opts)
	}
}
