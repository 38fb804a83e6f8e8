package script

import (
	"errors"
	"strings"
	"testing"
)

// evalString parses and evaluates src with no variables but :default_seed.
func evalString(t *testing.T, src string) (value, error) {
	t.Helper()
	var syms symbols
	n, err := parseExpr(src, &syms)
	if err != nil {
		return value{}, err
	}
	s := &state{names: syms.names, vars: make([]variable, len(syms.names))}
	if i, ok := syms.idx["default_seed"]; ok {
		s.setValue(i, intVal(0))
	}
	s.rng.seed(1)
	return s.eval(n)
}

func TestExpressions(t *testing.T) {
	for src, want := range map[string]string{
		"1 + 2 * 3":                            "7",
		"(1 + 2) * 3":                          "9",
		"7 / 2":                                "3",
		"-7 / 2":                               "-3",
		"-7 % 3":                               "-1",
		"7.0 / 2":                              "3.5",
		"mod(-7, 3)":                           "-1",
		"1 << 3 | 1":                           "9",
		"~0":                                   "-1",
		"5 # 3":                                "6",
		"-9223372036854775808":                 "-9223372036854775808",
		"int(2.5)":                             "2",
		"int(3.5)":                             "4",
		"int(-2.5)":                            "-2",
		"abs(-3)":                              "3",
		"abs(-3.5)":                            "3.5",
		"greatest(1, 2.5, 2)":                  "2.5",
		"least(3, 1, 2)":                       "1",
		"pi()":                                 "3.14159265358979",
		"sqrt(2.0)":                            "1.4142135623731",
		"double(1) / 3":                        "0.333333333333333",
		"1e3":                                  "1000",
		".5 + 1":                               "1.5",
		"pow(2, 10)":                           "1024",
		"1 < 2":                                "true",
		"2 >= 3":                               "false",
		"1 <> 1 OR 2 != 3":                     "true",
		"NOT 1 = 2":                            "true",
		"NULL IS NULL":                         "true",
		"1 ISNULL":                             "false",
		"1 NOTNULL":                            "true",
		"TRUE IS NOT FALSE":                    "true",
		"NULL + 1":                             "NULL",
		"NULL AND TRUE":                        "NULL",
		"FALSE AND NULL":                       "false",
		"CASE WHEN 1 > 2 THEN 1 ELSE 2 END":    "2",
		"CASE WHEN 1 > 2 THEN 1 END":           "NULL",
		"case when true then 'x' end" + "":     "",
		"hash_fnv1a(10, 5432)":                 "-7793829335365542153",
		"hash_murmur2(10, 5432)":               "-5817877081768721676",
		"permute(0, 1)":                        "0",
		"9223372036854775807 - 1 + 1":          "9223372036854775807",
		"random(5, 5)":                         "5",
		"CASE WHEN 0 THEN 1 WHEN 2 THEN 3 END": "3",
	} {
		if strings.Contains(src, "'") {
			continue
		}
		v, err := evalString(t, src)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if got := string(v.appendText(nil)); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}

func TestExpressionErrors(t *testing.T) {
	for src, want := range map[string]string{
		"9223372036854775807 + 1":      "bigint add out of range",
		"-9223372036854775808 - 1":     "bigint sub out of range",
		"9223372036854775807 * 2":      "bigint mul out of range",
		"-9223372036854775808 / -1":    "bigint div out of range",
		"1 / 0":                        "division by zero",
		"int(1e30)":                    "double to int overflow",
		"random(2, 1)":                 "empty range given to random",
		"random_gaussian(1, 10, 1)":    "gaussian parameter must be at least",
		"random_zipfian(1, 10, 1.0)":   "zipfian parameter must be in range",
		"random_exponential(1, 10, 0)": "exponential parameter must be greater than zero",
		"permute(1, 0)":                "permute size parameter",
		"NOT 1":                        "cannot coerce int to boolean",
		"9223372036854775808":          "bigint constant overflow",
		"foo(1)":                       "unexpected function name",
		"random(1)":                    "unexpected number of arguments",
		"1 +":                          "syntax error",
		"(1":                           "missing )",
		"1 < 2 < 3":                    "do not associate",
		":undefined":                   "undefined variable",
	} {
		_, err := evalString(t, src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	var p Program
	_, err := p.Add("bad.sql", "SELECT 1;\n\\set x 1 +\n", 1)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.Col != 11 {
		t.Fatalf("got %v, want bad.sql:2:11", err)
	}
	_, err = p.Add("bad.sql", "\\set aid random(1, 10)\n\\set y  foo(:aid)\n", 1)
	if !errors.As(err, &se) || se.Error() != `bad.sql:2:9: unexpected function name "foo" in \set` {
		t.Fatalf("got %v", err)
	}
	for text, want := range map[string]string{
		"\\if 1\nSELECT 1;\n":                 "x.sql:1:1: \\if without matching \\endif",
		"\\else\n":                            "x.sql:1:1: \\else without matching \\if",
		"\\if 1\n\\else\n\\elif 2\n\\endif\n": "x.sql:3:1: \\elif after \\else",
		"\\gset\n":                            "x.sql:1:1: \\gset must follow an SQL command",
		"\\foo\n":                             "x.sql:1:1: invalid command \\foo",
		"\\sleep 1 min\n":                     "x.sql:1:10: unrecognized time unit",
		"SELECT 'abc;\n":                      "x.sql:1:8: unterminated quoted string",
		"\\startpipeline\nSELECT 1;\n":        "x.sql:1:1: \\startpipeline without \\endpipeline",
	} {
		_, err := p.Add("x.sql", text, 1)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
}

func TestSQLVariables(t *testing.T) {
	var p Program
	s, err := p.Add("v.sql", "SELECT :a::int, ':b', x[1:2], :a FROM t WHERE c = :c;", 1)
	if err != nil {
		t.Fatal(err)
	}
	c := s.cmds[0]
	if c.ext != "SELECT $1::int, '$2', x[1:2], $3 FROM t WHERE c = $4;" {
		t.Errorf("ext: %s", c.ext)
	}
	r := p.NewRunner(0, 1, 1, nil)
	r.st.setValue(p.syms.idx["a"], intVal(7))
	r.st.setText(p.syms.idx["b"], []byte("x"))
	if got := r.text(&c); got != "SELECT 7::int, 'x', x[1:2], 7 FROM t WHERE c = :c;" {
		t.Errorf("simple: %s", got)
	}
}

func TestDocExamplesParse(t *testing.T) {
	files := docFiles(t)
	for _, f := range files {
		var p Program
		if err := LoadFiles(&p, []string{f}); err != nil {
			t.Errorf("%v", err)
		}
	}
}
