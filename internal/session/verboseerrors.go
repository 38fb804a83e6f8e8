package session

import (
	"fmt"
	"sync"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/pgerr"
)

// verboseErrorsPerSecond bounds the failure lines of --verbose-errors: a
// server refusing every transaction must not flood the terminal (nor hold
// clients on a slow one). The lines left out are counted in the next one.
const verboseErrorsPerSecond = 20

// verboseErrors prints one line per failed transaction (pgbench
// --verbose-errors): the client, the transaction type, the tries and what
// the server said. A driver.TxObserver.
type verboseErrors struct {
	print    func(line string)
	txNames  []string
	maxTries int

	mu      sync.Mutex
	second  int64 // unix second of the current budget
	printed int
	dropped int
}

func (v *verboseErrors) ObserveTx(e driver.TxEvent) {
	if e.Class == pgerr.ClassNone || e.Skipped {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s := e.End.Unix(); s != v.second {
		v.second, v.printed = s, 0
	}
	if v.printed >= verboseErrorsPerSecond {
		v.dropped++
		return
	}
	v.printed++
	name := fmt.Sprint(e.Type)
	if e.Type >= 0 && e.Type < len(v.txNames) {
		name = v.txNames[e.Type]
	}
	line := fmt.Sprintf("client %d: %s failed (%s", e.Client, name, e.Class)
	if v.maxTries > 1 {
		line += fmt.Sprintf(", try %d/%d", e.Retries+1, v.maxTries)
	}
	line += "): " + pgerr.Describe(e.Err)
	if v.dropped > 0 {
		line += fmt.Sprintf(" [%d more failures not shown: at most %d lines a second]", v.dropped, verboseErrorsPerSecond)
		v.dropped = 0
	}
	v.print(line)
}

// finish prints the count of the lines left out since the last one.
func (v *verboseErrors) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dropped > 0 {
		v.print(fmt.Sprintf("%d more failures not shown (at most %d lines a second)", v.dropped, verboseErrorsPerSecond))
		v.dropped = 0
	}
}

// observers calls several observers in turn.
type observers []driver.TxObserver

func (o observers) ObserveTx(e driver.TxEvent) {
	for _, x := range o {
		x.ObserveTx(e)
	}
}
