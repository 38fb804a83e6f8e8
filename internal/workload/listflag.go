package workload

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// StringArrayVarP is fs.StringArrayVarP(p, name, shorthand, nil, usage):
// the same flag (type stringArray; each use appends, the first replaces
// the default; its text "[a,b]" in CSV; usage shows no default) without
// the CSV writer pflag runs to write the default's text, a 4 KB buffer
// per flag left resident (14 in a run, built more than once).
func StringArrayVarP(fs *pflag.FlagSet, p *[]string, name, shorthand, usage string) {
	*p = nil
	fl := fs.VarPF(&stringArray{value: p}, name, shorthand, usage)
	fl.DefValue = "" // only usage reads it: as pflag's "[]" for its own type, no default shown
}

// stringArray is pflag's stringArrayValue, but for String on no values.
type stringArray struct {
	value   *[]string
	changed bool
}

func (s *stringArray) Set(val string) error {
	if !s.changed {
		*s.value = []string{val}
		s.changed = true
	} else {
		*s.value = append(*s.value, val)
	}
	return nil
}

func (s *stringArray) Append(val string) error {
	*s.value = append(*s.value, val)
	return nil
}

func (s *stringArray) Replace(val []string) error {
	*s.value = append([]string{}, val...)
	return nil
}

func (s *stringArray) GetSlice() []string { return append([]string{}, *s.value...) }

func (s *stringArray) Type() string { return "stringArray" }

func (s *stringArray) String() string {
	if len(*s.value) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(*s.value) // writes to a bytes.Buffer do not fail
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
