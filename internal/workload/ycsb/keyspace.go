package ycsb

import (
	"sync"
	"sync/atomic"
)

// keySpace is the key numbers of one workload instance, shared by all its
// clients: which exist (are readable), and which the next insert takes.
// It plays YCSB's AcknowledgedCounterGenerator: inserts take key numbers
// from a counter starting at the rows present when the run began, and the
// readable space grows only over a contiguous run of inserted keys, so a
// read never picks a key whose insert is still in flight or failed.
//
// Unlike YCSB, which acknowledges a key whether its insert succeeded or
// not, a key whose insert failed is not acknowledged: it is handed out
// again to the next insert (by any client) and the readable space waits
// for it. An insert that fails because the key exists (an earlier attempt
// committed but its answer was lost) acknowledges it: the row is there.
//
// The counter counts indexes, which keynum maps to key numbers. A process
// running segment seg of segs (--segment, workload.Segmenter) takes its
// own stripe of the new keys: index rows+j is key number rows + j*segs +
// seg, so segments sharing a table never insert the same key, and its
// readable space is the loaded rows plus its own acknowledged inserts.
// Without segments (segs 1) an index is its key number.
type keySpace struct {
	// readable is the count of indexes known to exist: all of
	// 0..readable-1.
	readable atomic.Int64

	rows, seg, segs int64 // the rows at the start, and the segment

	// sequential counts the draws of the sequential request
	// distribution, shared by the clients as YCSB's SequentialGenerator
	// is by its threads.
	sequential atomic.Int64

	mu    sync.Mutex
	next  int64              // the next fresh key number
	acked map[int64]struct{} // inserted keys above readable, waiting for a gap to fill
	retry []int64            // keys whose insert failed, to be taken again first
}

// newKeySpace returns the key space of segment seg of segs (0 of 1: the
// whole run) over rows existing rows.
func newKeySpace(rows int64, seg, segs int) *keySpace {
	k := &keySpace{next: rows, acked: map[int64]struct{}{}, rows: rows, seg: int64(seg), segs: max(int64(segs), 1)}
	k.readable.Store(rows)
	return k
}

// keynum maps index x to its key number: the rows at the start, then the
// segment's stripe of the new keys.
func (k *keySpace) keynum(x int64) int64 {
	if x < k.rows {
		return x
	}
	return k.rows + (x-k.rows)*k.segs + k.seg
}

// take returns the index of the key the next insert uses.
func (k *keySpace) take() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n := len(k.retry); n > 0 {
		key := k.retry[n-1]
		k.retry = k.retry[:n-1]
		return key
	}
	key := k.next
	k.next++
	return key
}

// done acknowledges the key of index key: its row exists. The readable space extends over
// every contiguous acknowledged key.
func (k *keySpace) done(key int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.readable.Load()
	if key < r {
		return
	}
	k.acked[key] = struct{}{}
	for {
		if _, ok := k.acked[r]; !ok {
			break
		}
		delete(k.acked, r)
		r++
	}
	k.readable.Store(r)
}

// failed returns the key of index key to be inserted again: its row does not exist (or is
// not known to).
func (k *keySpace) failed(key int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.retry = append(k.retry, key)
}

// count returns the number of readable indexes.
func (k *keySpace) count() int64 { return k.readable.Load() }
