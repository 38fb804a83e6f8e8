package qgen

import (
	"fmt"
	"strings"
)

// params are one query's substitution parameters: params[i] replaces :i
// in its template (params[0] is unused).
type params []string

// validation returns query q's validation parameters (Clause 2.4.q.4;
// qgen -d). Q11's FRACTION is 0.0001/SF at every scale, as qgen -d
// prints it, so the validation query stays meaningful below SF 1.
func validation(q int, sf float64) params {
	p := map[int][]string{
		1:  {"90"},
		2:  {"15", "BRASS", "EUROPE"},
		3:  {"BUILDING", "1995-03-15"},
		4:  {"1993-07-01"},
		5:  {"ASIA", "1994-01-01"},
		6:  {"1994-01-01", "0.06", "24"},
		7:  {"FRANCE", "GERMANY"},
		8:  {"BRAZIL", "AMERICA", "ECONOMY ANODIZED STEEL"},
		9:  {"green"},
		10: {"1993-10-01"},
		11: {"GERMANY", q11Fraction(sf)},
		12: {"MAIL", "SHIP", "1994-01-01"},
		13: {"special", "requests"},
		14: {"1995-09-01"},
		15: {"1996-01-01"},
		16: {"Brand#45", "MEDIUM POLISHED", "49", "14", "23", "45", "19", "3", "36", "9"},
		17: {"Brand#23", "MED BOX"},
		18: {"300"},
		19: {"Brand#12", "Brand#23", "Brand#34", "1", "10", "20"},
		20: {"forest", "1994-01-01", "CANADA"},
		21: {"SAUDI ARABIA"},
		22: {"13", "31", "23", "29", "30", "18", "17"},
	}[q]
	return append(params{""}, p...)
}

// q11Fraction is Q11's FRACTION, 0.0001/SF (Clause 2.4.11.3), printed as
// qgen prints it ("%11.10f").
func q11Fraction(sf float64) string { return fmt.Sprintf("%11.10f", 0.0001/sf) }

// state is what one qgen run keeps between queries besides the streams:
// varsub.c's static arrays that Q16 and Q22 shuffle in place.
type state struct {
	rng   *streams
	sizes []int64 // Q16's sizes 1..50
	codes []int64 // Q22's country codes 0..24 (+10 when printed)
}

func newState(seed int64) *state {
	st := &state{rng: newStreams(seed), sizes: make([]int64, 50), codes: make([]int64, 25)}
	for i := range st.sizes {
		st.sizes[i] = int64(i + 1)
	}
	for i := range st.codes {
		st.codes[i] = int64(i)
	}
	return st
}

// monthFrom formats the first of the month m months after January 1993.
func monthFrom(m int64) string { return fmt.Sprintf("19%02d-%02d-01", 93+m/12, m%12+1) }

// yearStart formats January 1st of 19yy.
func yearStart(yy int64) string { return fmt.Sprintf("19%02d-01-01", yy) }

// brand draws a Brand#MN with M and N in 1..5 (Clause 4.2.3: P_BRAND).
func (st *state) brand(q int) string {
	m := st.rng.unifInt(1, 5, q)
	n := st.rng.unifInt(1, 5, q)
	return fmt.Sprintf("Brand#%d%d", m, n)
}

// draw returns query q's parameters drawn as qgen's varsub.c draws them,
// within the ranges of Clause 2.4.q.3.
func (st *state) draw(q int, sf float64) params {
	r, fd := st.rng, fileDists.Get()
	p := params{""}
	add := func(v ...string) { p = append(p, v...) }
	switch q {
	case 1: // DELTA in [60, 120]
		add(fmt.Sprint(r.unifInt(60, 120, q)))
	case 2: // SIZE in [1, 50]; TYPE a syllable 3; REGION
		add(fmt.Sprint(r.unifInt(1, 50, q)))
		t, _ := r.pick(fd.types, q)
		add(t[strings.LastIndexByte(t, ' ')+1:])
		reg, _ := r.pick(fd.regions, q)
		add(reg)
	case 3: // SEGMENT; DATE in [1995-03-01, 1995-03-31]
		seg, _ := r.pick(fd.segments, q)
		add(seg, fmt.Sprintf("1995-03-%02d", r.unifInt(0, 30, q)+1))
	case 4: // DATE: first of a month from 1993-01 to 1997-10
		add(monthFrom(r.unifInt(0, 57, q)))
	case 5: // REGION; DATE: January 1st of 1993..1997
		reg, _ := r.pick(fd.regions, q)
		add(reg, yearStart(r.unifInt(93, 97, q)))
	case 6: // DATE; DISCOUNT in [0.02, 0.09]; QUANTITY in [24, 25]
		add(yearStart(r.unifInt(93, 97, q)))
		add(fmt.Sprintf("0.%02d", r.unifInt(2, 9, q)))
		add(fmt.Sprint(r.unifInt(24, 25, q)))
	case 7: // NATION1 != NATION2
		n1, i1 := r.pick(fd.nations2, q)
		n2, i2 := r.pick(fd.nations2, q)
		for i2 == i1 {
			n2, i2 = r.pick(fd.nations2, q)
		}
		add(n1, n2)
	case 8: // NATION; REGION its region; TYPE
		n, i := r.pick(fd.nations2, q)
		t, _ := r.pick(fd.types, q)
		add(n, fd.regions.names[fd.nationRegion[i]], t)
	case 9: // COLOR
		c, _ := r.pick(fd.colors, q)
		add(c)
	case 10: // DATE: first of a month from 1993-02 to 1995-01
		add(monthFrom(r.unifInt(1, 24, q)))
	case 11: // NATION; FRACTION = 0.0001/SF
		n, _ := r.pick(fd.nations2, q)
		add(n, q11Fraction(sf))
	case 12: // SHIPMODE1 != SHIPMODE2; DATE: January 1st of 1993..1997
		m1, i1 := r.pick(fd.shipModes, q)
		m2, i2 := r.pick(fd.shipModes, q)
		for i2 == i1 {
			m2, i2 = r.pick(fd.shipModes, q)
		}
		add(m1, m2, yearStart(r.unifInt(93, 97, q)))
	case 13: // WORD1; WORD2
		w1, _ := r.pick(fd.q13a, q)
		w2, _ := r.pick(fd.q13b, q)
		add(w1, w2)
	case 14: // DATE: first of a month from 1993-01 to 1997-12
		add(monthFrom(r.unifInt(0, 59, q)))
	case 15: // DATE: first of a month from 1993-01 to 1997-10
		add(monthFrom(r.unifInt(0, 57, q)))
	case 16: // BRAND; TYPE syllables 1-2; SIZE1..8 distinct in [1, 50]
		add(st.brand(q))
		t, _ := r.pick(fd.types, q)
		add(t[:strings.LastIndexByte(t, ' ')])
		r.permute(st.sizes, q)
		for _, s := range st.sizes[:8] {
			add(fmt.Sprint(s))
		}
	case 17: // BRAND; CONTAINER
		b := st.brand(q)
		c, _ := r.pick(fd.containers, q)
		add(b, c)
	case 18: // QUANTITY in [312, 315]
		add(fmt.Sprint(r.unifInt(312, 315, q)))
	case 19: // BRAND1..3; QUANTITY1 in [1, 10], 2 in [10, 20], 3 in [20, 30]
		add(st.brand(q), st.brand(q), st.brand(q))
		add(fmt.Sprint(r.unifInt(1, 10, q)), fmt.Sprint(r.unifInt(10, 20, q)), fmt.Sprint(r.unifInt(20, 30, q)))
	case 20: // COLOR; DATE: January 1st of 1993..1997; NATION
		c, _ := r.pick(fd.colors, q)
		d := yearStart(r.unifInt(93, 97, q))
		n, _ := r.pick(fd.nations2, q)
		add(c, d, n)
	case 21: // NATION
		n, _ := r.pick(fd.nations2, q)
		add(n)
	case 22: // I1..I7 distinct country codes in [10, 34]
		r.permute(st.codes, q)
		for _, c := range st.codes[:7] {
			add(fmt.Sprint(10 + c))
		}
	}
	return p
}
