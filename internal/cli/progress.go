package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pgarena/pgarena/internal/loader"
)

// loadProgress renders loader progress on stderr, per table: rows, rows/s
// and ETA of each table being loaded and of the whole load, and one line
// per table when it is done. On a terminal the live lines are redrawn in
// place; otherwise a line every few seconds (logs stay short). It
// implements loader.Progress.
type loadProgress struct {
	w   io.Writer
	tty bool

	mu      sync.Mutex
	phase   string
	start   time.Time
	tables  []tableProgress // fixed after Begin
	drawn   int             // live lines on screen (tty)
	quit    chan struct{}
	stopped chan struct{}
}

type tableProgress struct {
	loader.TableRows
	rows    atomic.Int64
	started atomic.Int64 // unix nanoseconds of the first rows; 0: not yet
	done    bool         // guarded by mu
}

func newLoadProgress(w io.Writer, tty bool) *loadProgress {
	p := &loadProgress{w: w, tty: tty, start: time.Now(), quit: make(chan struct{}), stopped: make(chan struct{})}
	go p.loop()
	return p
}

func (p *loadProgress) Begin(tables []loader.TableRows) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.start = time.Now()
	p.tables = make([]tableProgress, len(tables))
	for i, t := range tables {
		p.tables[i].TableRows = t
	}
}

func (p *loadProgress) Add(table int, rows int64) {
	t := &p.tables[table]
	if t.rows.Add(rows) == rows {
		t.started.CompareAndSwap(0, time.Now().UnixNano())
	}
}

func (p *loadProgress) TableDone(table int, rows int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := &p.tables[table]
	t.done = true
	t.Rows = rows // the estimate becomes the count
	t.rows.Store(rows)
	p.clearLive()
	took := time.Duration(0)
	if s := t.started.Load(); s > 0 {
		took = time.Since(time.Unix(0, s))
	}
	fmt.Fprintf(p.w, "loaded %-12s %11s rows in %6.1f s (%s rows/s)\n", t.Name, thousands(rows), took.Seconds(), rate(rows, took))
	if p.tty {
		p.drawLive()
	}
}

func (p *loadProgress) Phase(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.phase
	p.phase = name
	if prev == "load" {
		p.clearLive()
		p.writeLive(p.totalLine(true))
		p.drawn = 0
	}
	if name != "load" {
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
			if p.phase == "load" {
				if p.tty {
					p.clearLive()
					p.drawLive()
				} else {
					p.writeLive(p.totalLine(false))
				}
			}
			p.mu.Unlock()
		case <-p.quit:
			return
		}
	}
}

// clearLive erases the live lines of a terminal (mu held).
func (p *loadProgress) clearLive() {
	if p.tty && p.drawn > 0 {
		fmt.Fprintf(p.w, "\033[%dA\r\033[J", p.drawn)
		p.drawn = 0
	}
}

// drawLive prints a line per table being loaded and the total (mu held,
// tty).
func (p *loadProgress) drawLive() {
	for i := range p.tables {
		t := &p.tables[i]
		if t.done || t.started.Load() == 0 {
			continue
		}
		p.writeLive(tableLine(t))
	}
	p.writeLive(p.totalLine(false))
}

func (p *loadProgress) writeLive(line string) {
	fmt.Fprintln(p.w, line)
	if p.tty {
		p.drawn++
	}
}

// tableLine: "  stock        [######....]  45%   450,000/1,000,000  120,000 rows/s  ETA 5s".
func tableLine(t *tableProgress) string {
	rows := t.rows.Load()
	took := time.Since(time.Unix(0, t.started.Load()))
	return fmt.Sprintf("  %-12s %s %3.0f%% %11s/%-11s %9s rows/s  ETA %s", t.Name, bar(frac(rows, t.Rows), 20),
		100*frac(rows, t.Rows), thousands(rows), thousands(t.Rows), rate(rows, took), eta(rows, t.Rows, took))
}

// totalLine sums the tables (mu held); without a terminal it also names
// the tables in progress.
func (p *loadProgress) totalLine(final bool) string {
	var rows, total int64
	var busy []string
	for i := range p.tables {
		t := &p.tables[i]
		n := t.rows.Load()
		rows += n
		total += max(t.Rows, n)
		if !t.done && t.started.Load() != 0 {
			busy = append(busy, fmt.Sprintf("%s %.0f%%", t.Name, 100*frac(n, t.Rows)))
		}
	}
	took := time.Since(p.start)
	line := fmt.Sprintf("load %s %3.0f%% %s/%s rows, %s rows/s, elapsed %s", bar(frac(rows, total), 30),
		100*frac(rows, total), thousands(rows), thousands(total), rate(rows, took), took.Round(100*time.Millisecond))
	if !final {
		line += ", ETA " + eta(rows, total, took)
		if !p.tty && len(busy) > 0 {
			line += "; loading " + strings.Join(busy, ", ")
		}
	}
	return line
}

func frac(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return min(1, float64(n)/float64(of))
}

func rate(rows int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return thousands(int64(float64(rows) / d.Seconds()))
}

func eta(rows, total int64, took time.Duration) string {
	if rows <= 0 || took <= 0 {
		return "?"
	}
	if rows >= total {
		return "0s"
	}
	left := time.Duration(float64(total-rows) / (float64(rows) / took.Seconds()) * float64(time.Second))
	return left.Round(time.Second).String()
}

// thousands formats n with thousands separators: 1,234,567.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func bar(frac float64, width int) string {
	n := int(min(frac, 1) * float64(width))
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase == "load" {
		p.clearLive()
		p.writeLive(p.totalLine(true))
		p.drawn = 0
	}
}
