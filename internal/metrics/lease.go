package metrics

import (
	"sync"
	"sync/atomic"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Reuse of intervals' histograms.
//
// Each Tick fills a latency and a service histogram per transaction type:
// 184 KB each (pgarena's bounds), and for a reader of an interval only a
// moment's work. A Recorder that reuses histograms (ReuseHistograms) lends
// them to the interval it cuts (a lease) and takes them back once nothing
// reads the interval any more: the lease counts its holders; the Recorder
// holds it until its next Tick, and whoever reads the interval later
// (an output on another goroutine) holds it by Retain until Release. A
// holder that never releases keeps the histograms its own (the garbage
// collector frees them with the interval), so the default is safe.

// lease is one interval's histograms and the count of their holders.
type lease struct {
	refs  atomic.Int32
	hists []*hdr.Histogram
	pool  *histPool
}

func (l *lease) release() {
	switch n := l.refs.Add(-1); {
	case n == 0:
		l.pool.put(l.hists)
	case n < 0:
		panic("metrics: interval released more often than retained")
	}
}

// histPool holds empty histograms for Tick, at most limit of them: one
// interval's worth, what Tick takes next (an interval its outputs finish
// after the next Tick returns its histograms before the Tick after).
type histPool struct {
	mu    sync.Mutex
	free  []*hdr.Histogram
	limit int
}

// get returns an empty histogram with pgarena's bounds.
func (p *histPool) get() *hdr.Histogram {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		h := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return h
	}
	return NewHistogram()
}

// put empties hs and keeps those the pool has room for.
func (p *histPool) put(hs []*hdr.Histogram) {
	for _, h := range hs {
		h.Reset()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range hs {
		if len(p.free) < p.limit {
			p.free = append(p.free, h)
		}
	}
}

// ReuseHistograms makes the Recorder reuse the histograms of the intervals
// it cuts: an interval's histograms may be emptied and refilled from the
// Recorder's next Tick on, unless retained (Interval.Retain) until
// released. Call it before the first Tick, and only if whatever reads an
// interval after the next Tick retains it.
func (r *Recorder) ReuseHistograms() { r.pool = &histPool{} }

// Retain keeps iv's histograms from being reused until a matching Release.
// It does nothing for an interval whose Recorder does not reuse them.
func (iv *Interval) Retain() {
	if iv.lease != nil {
		iv.lease.refs.Add(1)
	}
}

// Release ends one Retain of iv: after it, the caller reads nothing of
// iv's histograms.
func (iv *Interval) Release() {
	if iv.lease != nil {
		iv.lease.release()
	}
}

// lend returns the histograms for an interval of n transaction types and
// its lease, held by the Recorder (nil without reuse), after dropping the
// Recorder's hold on the previous interval's.
func (r *Recorder) lend(n int) (hists []*hdr.Histogram, l *lease) {
	if r.pool == nil {
		hists = make([]*hdr.Histogram, 2*n)
		for i := range hists {
			hists[i] = NewHistogram()
		}
		return hists, nil
	}
	if r.held != nil {
		r.held.release()
	}
	r.pool.mu.Lock()
	r.pool.limit = 2 * n
	r.pool.mu.Unlock()
	l = &lease{hists: make([]*hdr.Histogram, 2*n), pool: r.pool}
	for i := range l.hists {
		l.hists[i] = r.pool.get()
	}
	l.refs.Store(1)
	r.held = l
	return l.hists, l
}
