package workload

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// StringArrayVarP's flag behaves as pflag's own StringArrayVarP with a nil
// default: values, text, list operations and usage.
func TestStringArrayAsPflags(t *testing.T) {
	var mine, theirs []string
	m, p := pflag.NewFlagSet("m", pflag.ContinueOnError), pflag.NewFlagSet("p", pflag.ContinueOnError)
	StringArrayVarP(m, &mine, "set", "s", "a setting (repeatable)")
	p.StringArrayVarP(&theirs, "set", "s", nil, "a setting (repeatable)")
	same := func(step string) {
		t.Helper()
		mf, pf := m.Lookup("set"), p.Lookup("set")
		if !slices.Equal(mine, theirs) || mf.Value.String() != pf.Value.String() || mf.Value.Type() != pf.Value.Type() ||
			m.FlagUsages() != p.FlagUsages() {
			t.Errorf("%s: %q %s %s %q, pflag's %q %s %s %q", step, mine, mf.Value, mf.Value.Type(), m.FlagUsages(),
				theirs, pf.Value, pf.Value.Type(), p.FlagUsages())
		}
		ms, ps := mf.Value.(pflag.SliceValue).GetSlice(), pf.Value.(pflag.SliceValue).GetSlice()
		if !slices.Equal(ms, ps) {
			t.Errorf("%s: GetSlice %q, pflag's %q", step, ms, ps)
		}
	}
	same("default")
	args := []string{"-s", "a=1", "--set", `b="x,y"`, "--set=c"}
	if err1, err2 := m.Parse(args), p.Parse(args); err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	same("parsed")
	for _, fs := range []*pflag.FlagSet{m, p} {
		sv := fs.Lookup("set").Value.(pflag.SliceValue)
		_ = sv.Append("d")
		_ = sv.Replace([]string{"e", ""})
	}
	same("replaced")
	for _, fs := range []*pflag.FlagSet{m, p} {
		_ = fs.Lookup("set").Value.(pflag.SliceValue).Replace(nil)
	}
	same("emptied")
	if got, err := m.GetStringArray("set"); err != nil || len(got) != 0 {
		t.Errorf("GetStringArray: %q %v", got, err)
	}
}
