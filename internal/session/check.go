package session

import (
	"context"
	"errors"
	"time"

	"github.com/pgarena/pgarena/internal/pgtext"
	"github.com/pgarena/pgarena/internal/workload"
)

// CheckResult is the outcome of a workload's consistency checks.
type CheckResult struct {
	Workload string
	// Skipped is set when the workload has no checks.
	Skipped bool
	// Err is a failed check; Note a remark on a check that passed.
	Err  error
	Note string
	Took time.Duration
}

// Check runs w's consistency checks on conn.
func Check(ctx context.Context, conn pgtext.Querier, w workload.Workload) CheckResult {
	res := CheckResult{Workload: w.Meta().Name}
	c, ok := w.(workload.Checker)
	if !ok {
		res.Skipped = true
		return res
	}
	if p, ok := w.(workload.Preparer); ok {
		if err := p.Prepare(ctx, conn); err != nil {
			res.Err = err
			return res
		}
	}
	t0 := time.Now()
	err := c.Check(ctx, conn)
	res.Took = time.Since(t0)
	var note *workload.CheckNote
	if errors.As(err, &note) {
		res.Note = oneLine(note.Error())
		return res
	}
	res.Err = err
	return res
}
