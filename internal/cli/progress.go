package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loadProgress renders loader progress on stderr: on a terminal a bar
// redrawn in place, otherwise a line every few seconds (logs stay short).
// It implements loader.Progress.
type loadProgress struct {
	w     io.Writer
	tty   bool
	rows  atomic.Int64
	total atomic.Int64

	mu      sync.Mutex
	phase   string
	start   time.Time
	quit    chan struct{}
	stopped chan struct{}
}

func newLoadProgress(w io.Writer, tty bool) *loadProgress {
	p := &loadProgress{w: w, tty: tty, start: time.Now(), quit: make(chan struct{}), stopped: make(chan struct{})}
	go p.loop()
	return p
}

func (p *loadProgress) Begin(total int64) {
	p.total.Store(total)
	p.mu.Lock()
	p.start = time.Now()
	p.mu.Unlock()
}

func (p *loadProgress) Add(rows int64) { p.rows.Add(rows) }

func (p *loadProgress) Phase(name string) {
	p.mu.Lock()
	prev := p.phase
	p.phase = name
	p.mu.Unlock()
	if prev == "load" {
		p.draw(true)
	}
	if name != "load" {
		p.clearLine()
		fmt.Fprintf(p.w, "%s...\n", name)
	}
}

func (p *loadProgress) loop() {
	defer close(p.stopped)
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.mu.Lock()
			loading := p.phase == "load"
			p.mu.Unlock()
			if loading {
				p.draw(false)
			}
		case <-p.quit:
			return
		}
	}
}

func (p *loadProgress) clearLine() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// draw prints rows, rows/s and the ETA; final ends the line.
func (p *loadProgress) draw(final bool) {
	rows, total := p.rows.Load(), p.total.Load()
	p.mu.Lock()
	elapsed := time.Since(p.start)
	p.mu.Unlock()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(rows) / elapsed.Seconds()
	}
	frac := 0.0
	if total > 0 {
		frac = float64(rows) / float64(total)
	}
	eta := "?"
	if rate > 0 && total >= rows {
		eta = time.Duration(float64(total-rows) / rate * float64(time.Second)).Round(time.Second).String()
	}
	line := fmt.Sprintf("load %s %d/%d rows (%3.0f%%), %.0f rows/s, elapsed %s, ETA %s",
		bar(frac, 30), rows, total, frac*100, rate, elapsed.Round(100*time.Millisecond), eta)
	if p.tty {
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\r\033[K%s%s", line, end)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func bar(frac float64, width int) string {
	if frac > 1 {
		frac = 1
	}
	n := int(frac * float64(width))
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// finish stops redrawing.
func (p *loadProgress) finish() {
	select {
	case <-p.quit:
	default:
		close(p.quit)
	}
	<-p.stopped
}
