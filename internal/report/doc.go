// Package report renders runs for people: the progress line printed during
// a run, the pgbench-style text summary, run listings, comparisons with
// confidence intervals and verdicts, CSV and JSON export, self-contained
// HTML reports (uPlot embedded with go:embed) and PNG charts (golang.org/x/image).
// It is pure rendering: it never talks to a database and reads nothing but
// its arguments (runs loaded by internal/store).
package report
