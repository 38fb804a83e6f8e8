// Package csv is the output `--out csv=FILE`: a row per transaction type
// per interval, written as each interval ends, with the header below. Cells
// are safe to open in a spreadsheet (report.SafeCSVCell). Latencies are
// milliseconds, end − intended start, of committed transactions; the error
// columns count failures by class (DESIGN.md "Errors").
package csv

import (
	"bufio"
	stdcsv "encoding/csv"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/pgerr"
	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/session"
)

// Kind describes csv to the registry (internal/output/all registers it).
var Kind = output.Kind{Name: "csv", Usage: "csv=FILE", ArgRequired: true,
	Help: "a row per transaction type per interval, as the run goes (safe to open in a spreadsheet)",
	New:  New}

// Header is the first row; the error columns follow, one per class
// ("errors_" + class name).
var Header = []string{"run", "seq", "start", "end", "warmup", "step", "connected", "target_rate",
	"type", "committed", "tps", "failed", "retries", "skipped", "late",
	"latency_mean_ms", "latency_p50_ms", "latency_p90_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms"}

// Output writes interval rows.
type Output struct {
	name string
	f    *os.File
	b    *bufio.Writer
	w    *stdcsv.Writer
	run  string
}

// New creates (or truncates) the file p.Arg names and writes the header.
func New(p output.Params) (session.Output, error) {
	f, err := os.OpenFile(p.Arg, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	o := &Output{name: "csv=" + p.Arg, f: f, b: bufio.NewWriter(f)}
	o.w = stdcsv.NewWriter(o.b)
	head := append([]string(nil), Header...)
	for c := pgerr.ClassNone + 1; c < pgerr.ErrorClass(pgerr.NumClasses); c++ {
		head = append(head, "errors_"+c.String())
	}
	if err := o.write(head); err != nil {
		f.Close()
		return nil, err
	}
	return o, nil
}

func (o *Output) String() string { return o.name }

// BorrowsRecords (a session.Borrower): Write turns an interval into rows and keeps nothing of it.
func (o *Output) BorrowsRecords() {}

// Write adds the rows of an interval (other records only name the run).
func (o *Output) Write(r session.Record) error {
	switch {
	case r.Start != nil:
		o.run = r.Start.ID
	case r.Interval != nil:
		iv := r.Interval
		for i := range iv.Tx {
			if err := o.w.Write(o.row(iv, &iv.Tx[i])); err != nil {
				return err
			}
		}
		o.w.Flush()
		return errors.Join(o.w.Error(), o.b.Flush())
	}
	return nil
}

func (o *Output) row(iv *metrics.Interval, t *metrics.TxStats) []string {
	secs := iv.Duration().Seconds()
	tps := 0.0
	if secs > 0 {
		tps = float64(t.Count) / secs
	}
	row := []string{report.SafeCSVCell(o.run), strconv.Itoa(iv.Seq), stamp(iv.Start), stamp(iv.End),
		strconv.FormatBool(iv.Warmup), strconv.Itoa(iv.Step), strconv.Itoa(iv.Connected), num(iv.TargetRate),
		report.SafeCSVCell(t.Name), strconv.FormatInt(t.Count, 10), num(tps), strconv.FormatInt(t.Errors.Total(), 10),
		strconv.FormatInt(t.Retries, 10), strconv.FormatInt(t.Skipped, 10), strconv.FormatInt(t.Late, 10)}
	if h := t.Latency; h != nil && h.TotalCount() > 0 {
		row = append(row, num(h.Mean()/1e3), ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(90)),
			ms(h.ValueAtQuantile(95)), ms(h.ValueAtQuantile(99)), ms(h.Max()))
	} else {
		row = append(row, "", "", "", "", "", "")
	}
	for c := pgerr.ClassNone + 1; c < pgerr.ErrorClass(pgerr.NumClasses); c++ {
		row = append(row, strconv.FormatInt(t.Errors[c], 10))
	}
	return row
}

func (o *Output) write(row []string) error {
	if err := o.w.Write(row); err != nil {
		return err
	}
	o.w.Flush()
	return errors.Join(o.w.Error(), o.b.Flush())
}

// Close flushes, syncs and closes the file.
func (o *Output) Close() error {
	o.w.Flush()
	return errors.Join(o.w.Error(), o.b.Flush(), o.f.Sync(), o.f.Close())
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
func num(v float64) string     { return strconv.FormatFloat(v, 'f', -1, 64) }
func ms(us int64) string       { return strconv.FormatFloat(float64(us)/1e3, 'f', -1, 64) }
