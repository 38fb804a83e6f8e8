package script

import (
	"os"
	"path/filepath"
	"testing"
)

// addScriptSeeds adds every script under testdata (and its docs examples)
// to the fuzzer's seed corpus.
func addScriptSeeds(f *testing.F) {
	for _, glob := range []string{"testdata/*.sql", "testdata/docs/*.sql"} {
		paths, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(b))
		}
	}
}

// FuzzParseScript: any text is a script or a *SyntaxError naming a
// position inside it; never a panic.
func FuzzParseScript(f *testing.F) {
	addScriptSeeds(f)
	for _, s := range []string{
		"SELECT 1;", "\\set x 1 +", "\\if 1\n\\elif 2\n\\else\n\\endif", "SELECT $$a;$$;", "/* /* */ */ SELECT 1",
		"\\startpipeline\nSELECT 1;\n\\endpipeline", "SELECT :'x';", "\\sleep :x ms", "\\setshell x echo 1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var p Program
		s, err := p.Add("f.sql", text, 1)
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("error %T %v, want a *SyntaxError", err, err)
			}
			if se.Line < 1 || se.Col < 1 {
				t.Fatalf("error at line %d column %d: %v", se.Line, se.Col, err)
			}
			return
		}
		_ = s.Commands()
	})
}

// FuzzExpression: any \set expression parses or fails with an error, and
// one that parses evaluates to a value or an error; never a panic
// (pgbench's overflow rules are errors, not traps).
func FuzzExpression(f *testing.F) {
	for _, s := range []string{
		"1 + 2 * 3", "-9223372036854775808 / -1", "9223372036854775807 + 1", "-9223372036854775808 % -1",
		"abs(-9223372036854775808)", "int(1e300)", "pow(2, 1024)", "sqrt(-1)", "ln(0)", "exp(1000)",
		"random(1, 10)", "random_zipfian(1, 100, 1.07)", "random_exponential(1, 10, 2.5)",
		"random_gaussian(1, 10, 2.5)", "permute(3, 10, 7)", "hash(1)", "hash_fnv1a(1, 2)", "hash_murmur2(1)",
		"CASE WHEN 1 < 2 THEN 1 ELSE 2 END", "NULL IS NOT NULL", "1 << 63", "~0 >> 64", "5 # 3",
		"greatest(1, 2.5, NULL)", "least()", "debug(1)", "double(1) / 0", "1 / 0", "mod(7, 0)", ":default_seed",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var syms symbols
		n, err := parseExpr(src, &syms)
		if err != nil {
			return
		}
		s := &state{names: syms.names, vars: make([]variable, len(syms.names))}
		for i := range s.vars {
			s.setValue(i, intVal(int64(i)+1))
		}
		s.rng.seed(1)
		_, _ = s.eval(n)
	})
}
