package qgen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// Answer is an expected result: column names and rows as text.
type Answer struct {
	Columns []string
	Rows    [][]string
}

// kind says how a result column is compared (Clause 2.1.3.5; the TPC
// tools' check_answers/colprecision.txt names the kind of every column).
type kind byte

const (
	kStr kind = 's' // strings: equal after trailing blanks are removed (CHAR padding)
	kCnt kind = 'c' // counts: equal
	kInt kind = 'i' // integers and singleton keys: equal
	kNum kind = 'n' // singleton decimals: equal when rounded to 1/100
	kSum kind = 'S' // sums: within 100 (the spec's "$100")
	kAvg kind = 'a' // averages: within 1% when rounded to 1/100
	kRat kind = 'r' // ratios: within 1% when rounded to 1/100
)

// columnKinds are the kinds of each query's columns, in select-list order.
var columnKinds = [23]string{
	1:  "ssSSSSaaac",
	2:  "nssissss",
	3:  "iSsi",
	4:  "sc",
	5:  "sS",
	6:  "S",
	7:  "ssiS",
	8:  "ir",
	9:  "siS",
	10: "isSnssss",
	11: "iS",
	12: "sSS",
	13: "cc",
	14: "r",
	15: "isssS",
	16: "ssnc",
	17: "a",
	18: "siisnS",
	19: "S",
	20: "ss",
	21: "sc",
	22: "ncS",
}

// Check compares a query's result rows (text, as PostgreSQL returns them)
// with want, with the spec's tolerances (Clause 2.1.3.5): strings, counts
// and integers exactly, singleton decimals to the cent, sums within 100,
// averages and ratios within 1% at 1/100; rows in order (every validation
// query has an ORDER BY or one row). A NULL is written \N, as COPY's text
// format writes it (Q17 is NULL at SF 0.01), and equals only \N. nil if
// equal enough; else one error naming the first difference (row, column,
// got, want).
func Check(n int, got [][]string, want Answer) error {
	mustQuery(n)
	kinds := columnKinds[n]
	if len(got) != len(want.Rows) {
		return fmt.Errorf("Q%d: %d rows, want %d", n, len(got), len(want.Rows))
	}
	for r := range got {
		if len(got[r]) != len(kinds) || len(want.Rows[r]) != len(kinds) {
			return fmt.Errorf("Q%d row %d: %d columns, want %d", n, r+1, len(got[r]), len(kinds))
		}
		for c := range got[r] {
			if err := compare(kind(kinds[c]), got[r][c], want.Rows[r][c]); err != nil {
				name := fmt.Sprintf("column %d", c+1)
				if c < len(want.Columns) {
					name = fmt.Sprintf("column %d (%s)", c+1, want.Columns[c])
				}
				return fmt.Errorf("Q%d row %d %s: got %q, want %q: %v", n, r+1, name, got[r][c], want.Rows[r][c], err)
			}
		}
	}
	return nil
}

func hundred() *big.Rat { return big.NewRat(100, 1) }
func onePct() *big.Rat  { return big.NewRat(1, 100) }

// Null is how a NULL value is written in rows given to Check and in
// answer sets: \N, as PostgreSQL's COPY text format writes it.
const Null = `\N`

// compare compares one value of kind k.
func compare(k kind, got, want string) error {
	if got == Null || want == Null {
		if got != want {
			return fmt.Errorf("NULL and a value")
		}
		return nil
	}
	if k == kStr {
		if strings.TrimRight(got, " ") != strings.TrimRight(want, " ") {
			return fmt.Errorf("strings differ")
		}
		return nil
	}
	g, ok1 := new(big.Rat).SetString(strings.TrimSpace(got))
	w, ok2 := new(big.Rat).SetString(strings.TrimSpace(want))
	if !ok1 || !ok2 {
		return fmt.Errorf("not a number")
	}
	switch k {
	case kCnt, kInt:
		if g.Cmp(w) != 0 {
			return fmt.Errorf("not equal")
		}
	case kNum:
		if cents(g).Cmp(cents(w)) != 0 {
			return fmt.Errorf("not equal to the cent")
		}
	case kSum:
		if d := new(big.Rat).Sub(g, w); d.Abs(d).Cmp(hundred()) > 0 {
			return fmt.Errorf("differs by more than 100")
		}
	case kAvg, kRat:
		gc, wc := cents(g), cents(w)
		d := new(big.Rat).Sub(gc, wc)
		lim := new(big.Rat).Mul(new(big.Rat).Abs(wc), onePct())
		if d.Abs(d).Cmp(lim) > 0 {
			return fmt.Errorf("differs by more than 1%% at 1/100")
		}
	}
	return nil
}

// cents rounds x to 1/100, halves away from zero.
func cents(x *big.Rat) *big.Rat {
	y := new(big.Rat).Mul(x, hundred())
	if y.Sign() >= 0 {
		y.Add(y, big.NewRat(1, 2))
	} else {
		y.Sub(y, big.NewRat(1, 2))
	}
	q := new(big.Int).Quo(y.Num(), y.Denom()) // truncates toward zero
	return new(big.Rat).SetFrac(q, big.NewInt(100))
}

// answerFiles are the pinned answer sets, one file per scale factor, all
// DuckDB's results of the 22 validation queries (this package's SQL) over
// tpchgen-cli's data, which is byte-identical to dbgen's
// (bench/tpch-answers.py):
//
//	sf0.01.txt, sf0.1.txt  as computed
//	sf1.txt.gz             as computed, and checked against the spec's
//	                       answer set (the TPC-H tools' answers/qN.out):
//	                       with Check in full for the 14 queries of
//	                       testdata/sf1-official-part.txt (a test re-checks
//	                       them), every row's keys and figures for Q10,
//	                       Q18, Q21 (by a one-off script), and
//	                       first rows, last rows and row counts for Q2,
//	                       Q9, Q11, Q16, Q20
//
// PostgreSQL 15 running this package's SQL over the same data matches all
// 22 at each of the three scales (TestValidationOnPostgres, run by hand).
//
// Format: "# ..." comment lines; "-- qN" starts query N; its next line is
// the column names, then one line per row; fields separated by '|'; \N
// is NULL.
//
//go:embed answers
var answerFiles embed.FS

// Answers returns the pinned answer set for sf (0.01, 0.1 and 1; see
// answerFiles), or false. It parses the embedded file on every call.
func Answers(sf float64) (map[int]Answer, bool) {
	name := "answers/sf" + strconv.FormatFloat(sf, 'f', -1, 64) + ".txt"
	data, err := answerFiles.ReadFile(name)
	if err != nil {
		gz, err := answerFiles.ReadFile(name + ".gz")
		if err != nil {
			return nil, false
		}
		r, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, false
		}
		if data, err = io.ReadAll(r); err != nil {
			return nil, false
		}
	}
	set, err := parseAnswers(data)
	if err != nil {
		return nil, false
	}
	return set, true
}

// parseAnswers reads an answer file (the format of answerFiles).
func parseAnswers(data []byte) (map[int]Answer, error) {
	set := map[int]Answer{}
	q := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "-- q"):
			n, err := strconv.Atoi(line[4:])
			if err != nil || n < 1 || n > NumQueries {
				return nil, fmt.Errorf("bad section %q", line)
			}
			q = n
		case q == 0:
			return nil, fmt.Errorf("line outside a section: %q", line)
		default:
			a := set[q]
			if a.Columns == nil {
				a.Columns = strings.Split(line, "|")
			} else {
				a.Rows = append(a.Rows, strings.Split(line, "|"))
			}
			set[q] = a
		}
	}
	return set, sc.Err()
}
