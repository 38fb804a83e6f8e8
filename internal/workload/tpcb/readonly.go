package tpcb

import "github.com/pgarena/pgarena/internal/workload"

// SplitReadOnly implements workload.ReadOnlySplitter: the select-only
// script reads only (the whole run may go to a replica); tpcb-like and
// simple-update write in every transaction.
func (w *Workload) SplitReadOnly() (reads, writes workload.Workload, share float64) {
	if s, _ := w.script(); s == ScriptSelectOnly {
		return w, nil, 1
	}
	return nil, w, 0
}
