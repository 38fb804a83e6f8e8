// Package jsonl is the output `--out jsonl=FILE|-`: one JSON object per
// line for every record of the run, as it happens, each
//
//	{"type": T, "run": ID, "data": ...}
//
// with T one of start (data: spec and server, as spec.json and server.json),
// step (a sweep step begins), interval (a metrics.Interval as in
// intervals.jsonl, histograms included), sample (one store.Sample as in
// samples.jsonl) and end (summary and findings as recorded; absent when the
// run failed or was interrupted). Each line is flushed when written, so the
// file can be followed while the run goes on.
package jsonl

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/session"
)

// Kind describes jsonl to the registry (internal/output/all registers it).
var Kind = output.Kind{Name: "jsonl", Usage: "jsonl=FILE|-", ArgRequired: true,
	Help: "one JSON object per line for every interval, sample and event of the run (- : stdout)",
	New:  New, UsesStdout: func(arg string) bool { return arg == "-" }}

// Output writes records as JSON lines.
type Output struct {
	name string
	w    *bufio.Writer
	f    *os.File // nil for stdout
	run  string
}

// New creates (or truncates) the file p.Arg names; "-" writes to p.Stdout.
func New(p output.Params) (session.Output, error) {
	if p.Arg == "-" {
		return &Output{name: "jsonl=-", w: bufio.NewWriter(p.Stdout)}, nil
	}
	f, err := os.OpenFile(p.Arg, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &Output{name: "jsonl=" + p.Arg, w: bufio.NewWriter(f), f: f}, nil
}

func (o *Output) String() string { return o.name }

// BorrowsRecords (a session.Borrower): Write encodes a record and keeps nothing of it.
func (o *Output) BorrowsRecords() {}

type line struct {
	Type string `json:"type"`
	Run  string `json:"run"`
	Data any    `json:"data"`
}

type start struct {
	Spec   any `json:"spec"`
	Server any `json:"server"`
}

type step struct {
	N       int     `json:"n"`
	Of      int     `json:"of"`
	Clients int     `json:"clients"`
	Rate    float64 `json:"rate,omitempty"`
	Text    string  `json:"text"`
}

type end struct {
	Summary  any `json:"summary"`
	Findings any `json:"findings"`
}

// Write writes r as one line per interval, sample or event.
func (o *Output) Write(r session.Record) error {
	enc := json.NewEncoder(o.w)
	var err error
	switch {
	case r.Start != nil:
		o.run = r.Start.ID
		err = enc.Encode(line{"start", o.run, start{r.Start.Spec, r.Start.Server}})
	case r.Step != nil:
		s := r.Step
		err = enc.Encode(line{"step", o.run, step{s.N, s.Of, s.Step.Clients, s.Step.Rate, s.Step.String()}})
	case r.Interval != nil:
		err = enc.Encode(line{"interval", o.run, r.Interval})
	case r.Samples != nil:
		for _, s := range r.Samples {
			if err = enc.Encode(line{"sample", o.run, s}); err != nil {
				break
			}
		}
	case r.End != nil:
		err = enc.Encode(line{"end", o.run, end{&r.End.Summary, r.End.Findings}})
	}
	return errors.Join(err, o.w.Flush())
}

// Close flushes and closes the file (stdout stays open).
func (o *Output) Close() error {
	err := o.w.Flush()
	if o.f != nil {
		err = errors.Join(err, o.f.Sync(), o.f.Close())
	}
	return err
}

var _ io.Closer = (*Output)(nil)
