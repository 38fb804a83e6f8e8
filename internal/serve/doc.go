// Package serve is pgarena's web service over a results directory: the runs
// list (filters, sorting, plans grouped with their cells), a live run page
// that follows a run directory as it grows (server-sent events) and shows
// how close each autostop rule is, compare (the noise-band table and
// overlaid charts), downloads (HTML, CSV, JSON, PNG charts one by one or
// zipped) and plan status.
//
// It is read-only: it never changes or deletes a run. Pages are rendered by
// internal/report (the same HTML as `pgarena report`); every string that
// comes from a run is escaped for its context (internal/report/htmlw, as
// html/template would), and targets are shown as the
// store recorded them (passwords already redacted).
package serve
