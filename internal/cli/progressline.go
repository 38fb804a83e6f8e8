package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/workload"
)

// progressOutput prints a progress line every `every` of run time,
// covering the intervals since the previous line, and a line at each sweep
// step. It is a session output: it runs off the run's clock.
type progressOutput struct {
	w      io.Writer
	every  time.Duration
	figure workload.ProgressFigurer // nil: none
	start  time.Time
	// line adds up the intervals since the previous line; committed and
	// span are their commits by type and length, for the figure
	line      report.Progress
	committed map[string]int64
	span      time.Duration
	// due is when the next line is due, in run time: a multiple of every.
	// The clock's ticks are due at multiples of its tick and served at or
	// after them; a line goes out with the first interval that ends at or
	// after its due time (less a millisecond), so a tick served late does
	// not push the next line's due time and merge it with the one after.
	due   time.Duration
	epoch bool // --progress-timestamp: Unix epoch times instead of elapsed
}

func newProgressOutput(w io.Writer, every time.Duration, wl workload.Workload) *progressOutput {
	p := &progressOutput{w: w, every: every}
	p.figure, _ = wl.(workload.ProgressFigurer)
	return p
}

func (p *progressOutput) String() string { return "progress lines" }

// BorrowsRecords (a session.Borrower): intervals are added up as they
// come, none is kept.
func (p *progressOutput) BorrowsRecords() {}

// SkipsSamples (a session.SampleSkipper): progress lines show no samples.
func (p *progressOutput) SkipsSamples() {}

// clearLine starts the next line's sums.
func (p *progressOutput) clearLine() {
	p.line.Reset()
	p.span = 0
	clear(p.committed)
}

func (p *progressOutput) Write(r session.Record) error {
	switch {
	case r.Step != nil:
		fmt.Fprintf(p.w, "step %d/%d: %s\n", r.Step.N, r.Step.Of, r.Step.Step)
		p.start, p.due = time.Time{}, 0
		p.clearLine()
	case r.Interval != nil:
		p.add(*r.Interval)
	}
	return nil
}

func (p *progressOutput) add(iv metrics.Interval) {
	if p.every <= 0 {
		return
	}
	if p.start.IsZero() {
		p.start, p.due = iv.Start, p.every
	}
	p.line.Add(iv)
	if p.figure != nil {
		if p.committed == nil {
			p.committed = map[string]int64{}
		}
		p.span += iv.Duration()
		for _, t := range iv.Tx {
			p.committed[t.Name] += t.Count
		}
	}
	elapsed := iv.End.Sub(p.start)
	if elapsed >= p.due-time.Millisecond {
		var extra []string
		if p.figure != nil {
			f := p.figure.ProgressFigure(p.committed, p.span)
			extra = append(extra, fmt.Sprintf("%s %.0f", f.Name, f.Value))
		}
		line := p.line.Line(elapsed, extra...)
		if p.epoch {
			line = epochHead(line, iv.End)
		}
		fmt.Fprintln(p.w, line)
		p.clearLine()
		for p.due <= elapsed+time.Millisecond {
			p.due += p.every
		}
	}
}
