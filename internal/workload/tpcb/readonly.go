package tpcb

import "github.com/pgarena/pgarena/internal/workload"

// SplitReadOnly implements workload.ReadOnlySplitter: a run of the
// select-only builtin alone reads only (the whole run may go to a
// replica); tpcb-like, simple-update and -f scripts may write, so a mix
// that holds any of them stays on the primary.
func (w *Workload) SplitReadOnly() (reads, writes workload.Workload, share float64) {
	for _, t := range w.TxTypes() {
		if t != ScriptSelectOnly {
			return nil, w, 0
		}
	}
	return w, nil, 1
}
