package metrics

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pgarena/pgarena/internal/pgerr"
)

func detail(at time.Duration, code, msg string) pgerr.ErrorDetail {
	return pgerr.ErrorDetail{Time: t0.Add(at), Severity: "ERROR", SQLState: code, Message: msg}
}

// TestErrorExamplesFirstAndLast: each interval keeps the first and last
// failure per type and class, with its text; the accumulator keeps the
// first-ever and last-ever over intervals, and both survive JSON.
func TestErrorExamplesFirstAndLast(t *testing.T) {
	r := NewRecorder([]string{"a", "b"}, t0)
	h1, h2 := r.NewHandle(), r.NewHandle()
	h1.Fail(0, pgerr.ClassOther, detail(2*time.Millisecond, "42P01", `relation "x" does not exist`))
	h2.Fail(0, pgerr.ClassOther, detail(1*time.Millisecond, "42P01", `relation "first" does not exist`))
	h1.Fail(0, pgerr.ClassOther, detail(5*time.Millisecond, "42P01", `relation "last" does not exist`))
	h1.Fail(0, pgerr.ClassDeadlock, detail(3*time.Millisecond, "40P01", "deadlock detected"))
	h2.Fail(1, pgerr.ClassPreparedStatements, detail(4*time.Millisecond, "26000", `prepared statement "s" does not exist`))
	h1.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassNone)
	iv1 := r.Tick(t0.Add(time.Second))

	a := iv1.Tx[0]
	if a.Errors[pgerr.ClassOther] != 3 || a.Errors[pgerr.ClassDeadlock] != 1 || a.Count != 1 {
		t.Fatalf("counts %v, committed %d", a.Errors, a.Count)
	}
	if len(a.Examples) != 2 || a.Examples[0].Class != pgerr.ClassDeadlock || a.Examples[1].Class != pgerr.ClassOther {
		t.Fatalf("examples %+v", a.Examples)
	}
	other, _ := a.Examples.Get(pgerr.ClassOther)
	if !strings.Contains(other.First.Message, "first") || !strings.Contains(other.Last.Message, "last") {
		t.Fatalf("first %q, last %q", other.First.Message, other.Last.Message)
	}
	if ex, ok := iv1.Tx[1].Examples.Get(pgerr.ClassPreparedStatements); !ok || ex.First.SQLState != "26000" {
		t.Fatalf("type b examples %+v", iv1.Tx[1].Examples)
	}

	// An interval with no failures carries no examples; the next one's
	// failure becomes the run's last.
	iv2 := r.Tick(t0.Add(2 * time.Second))
	if len(iv2.Tx[0].Examples) != 0 {
		t.Fatalf("a quiet interval kept examples %+v", iv2.Tx[0].Examples)
	}
	h2.Fail(0, pgerr.ClassOther, detail(2500*time.Millisecond, "42P01", `relation "later" does not exist`))
	iv3 := r.Tick(t0.Add(3 * time.Second))

	b, err := json.Marshal(iv1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"error_examples":[{"class":"deadlock"`) || !strings.Contains(string(b), `"sqlstate":"42P01"`) {
		t.Fatalf("interval JSON lacks the examples: %s", b)
	}
	var back Interval
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if ex, _ := back.Tx[0].Examples.Get(pgerr.ClassOther); ex.First != other.First || ex.Last != other.Last {
		t.Fatalf("round trip: %+v", back.Tx[0].Examples)
	}
	if b2, _ := json.Marshal(iv2); strings.Contains(string(b2), "error_examples") {
		t.Fatalf("a quiet interval writes examples: %s", b2)
	}

	var acc Accumulator
	for _, iv := range []Interval{back, iv2, iv3} {
		acc.Add(iv)
	}
	var sum Summary
	acc.Fill(&sum)
	ex, _ := sum.Tx[0].ErrorExamples.Get(pgerr.ClassOther)
	if !strings.Contains(ex.First.Message, "first") || !strings.Contains(ex.Last.Message, "later") {
		t.Fatalf("run first %q, last %q", ex.First.Message, ex.Last.Message)
	}
	if sum.ErrorAdvice["prepared_statements"] == "" || len(sum.ErrorAdvice) != 1 {
		t.Fatalf("advice %v", sum.ErrorAdvice)
	}
	sb, _ := json.Marshal(sum)
	if !strings.Contains(string(sb), `"error_advice":{"prepared_statements":"`) || !strings.Contains(string(sb), `"error_examples"`) {
		t.Fatalf("summary JSON: %s", sb)
	}
}

// A successful record must not allocate (the hot path).
func TestRecordSuccessDoesNotAllocate(t *testing.T) {
	r := NewRecorder([]string{"x"}, t0)
	h := r.NewHandle()
	for i := 0; i < 10000; i++ { // grow the buffers first
		h.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassNone)
	}
	r.Tick(t0.Add(time.Second))
	r.Tick(t0.Add(2 * time.Second))
	if n := testing.AllocsPerRun(1000, func() { h.Record(0, t0, t0, t0.Add(time.Millisecond), pgerr.ClassNone) }); n != 0 {
		t.Fatalf("Record of a success allocates %v times", n)
	}
}
