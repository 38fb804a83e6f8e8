package sampler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/sampled"
	"github.com/pgarena/pgarena/internal/store"
)

// Thresholds of the findings.
const (
	cpuBusyPct       = 90   // client-bound: host CPU busy above this...
	cpuBusyShare     = 0.5  // ...in at least this share of the samples
	clientShare      = 0.5  // ...and pgarena used at least this share of the busy CPU
	diskUtilPct      = 90   // IO-bound: a device's %util above this...
	diskUtilShare    = 0.25 // ...in at least this share of the samples
	iowaitPct        = 20   // or mean iowait above this
	lockShare        = 0.3  // lock-bound: Lock waits over this share of active sessions
	dropShare        = 0.9  // connections dropped below this share of their peak...
	dropMin          = 3    // ...and by at least this many
	steadyShare      = 0.10 // not steady: first and last thirds differ by more than this
	steadyMinSamples = 6
	cacheHitPct      = 90
)

// analyzer follows the samples of a run and turns them into findings. The
// sampler's goroutine feeds it; Stop reads it once that goroutine is done.
type analyzer struct {
	// dbLocal: the server, or a pooler in front of it, shares this host
	// (Options.DBHostLocal, or a loopback or Unix-socket address).
	dbLocal bool

	notes    []store.Finding
	notesSet map[string]bool

	connPeak   float64
	connPeakAt time.Time
	// drop is the largest confirmed drop of connections; pending a drop
	// seen at the last sample, confirmed if commits go on at the next one
	// (when the load ends, connections drop and commits stop with them).
	drop, pending connDrop
	commitPeak    float64
	connMax       float64
	connLimitAt   time.Time

	cpuSamples, cpuBusy int
	busy                float64 // sum of host.cpu.busy_pct
	pgarenaCPU          float64 // sum of host.pgarena.cpu_pct
	iowait              float64 // sum of host.cpu.iowait_pct

	diskSamples map[string]int
	diskBusy    map[string]int
	diskMax     map[string]float64

	commits []timedValue // pg.xact_commit_per_s
	// stepStarts are the starts of a sweep's steps (Sampler.MarkStep), in
	// order: steadiness is judged within each step.
	stepStarts []time.Time
	// steady are the windows of constant load (Sampler.MarkSteady); when
	// steadySet, steadiness is judged within them only
	steady    []Window
	steadySet bool

	active, lockWaits float64 // sums over samples
	waits             map[string]float64

	replLag map[string]float64 // max lag_bytes per standby
}

type timedValue struct {
	at time.Time
	v  float64
}

type connDrop struct {
	from, to float64
	at       time.Time
}

func newAnalyzer(dbLocal bool) *analyzer {
	return &analyzer{
		dbLocal:     dbLocal,
		notesSet:    map[string]bool{},
		diskSamples: map[string]int{},
		diskBusy:    map[string]int{},
		diskMax:     map[string]float64{},
		waits:       map[string]float64{},
		replLag:     map[string]float64{},
	}
}

func (a *analyzer) add(batch []store.Sample) {
	commitRate := -1.0 // none in this batch
	for i := range batch {
		if c, ok := batch[i].Values[sampled.XactCommitPerS]; ok {
			commitRate = c
			a.commitPeak = max(a.commitPeak, c)
		}
	}
	if a.pending.from > 0 && commitRate >= 0 {
		if commitRate >= 0.1*a.commitPeak && a.pending.from-a.pending.to > a.drop.from-a.drop.to {
			a.drop = a.pending
		}
		a.pending = connDrop{}
	}
	for i := range batch {
		s := &batch[i]
		if s.Note != "" && !a.notesSet[s.Note] {
			a.notesSet[s.Note] = true
			sev := s.Labels["severity"]
			if sev == "" {
				sev = store.SeverityInfo
			}
			a.notes = append(a.notes, store.Finding{Severity: sev, Kind: "sampler_note", Message: s.Note, Time: s.Time})
		}
		v := s.Values
		switch s.Source {
		case "activity":
			a.addConnections(s.Time, v[sampled.ConnectionsTotal], v[sampled.ConnectionsMax])
			a.active += v[sampled.Active]
			a.lockWaits += v[sampled.WaitTypeLock]
			for k, n := range v {
				if w, ok := strings.CutPrefix(k, sampled.Wait); ok && w != "other" {
					a.waits[w] += n
				}
			}
		case "pg_stat_database":
			if c, ok := v[sampled.XactCommitPerS]; ok {
				a.commits = append(a.commits, timedValue{s.Time, c})
			}
		case "host_cpu":
			busy, ok := v[sampled.CPUBusyPct]
			if !ok {
				continue
			}
			a.cpuSamples++
			if busy > cpuBusyPct {
				a.cpuBusy++
			}
			a.busy += busy
			a.pgarenaCPU += v[sampled.PgarenaCPUPct]
			a.iowait += v[sampled.CPUIOWaitPct]
		case "host_disk":
			for k, u := range v {
				dev, ok := strings.CutSuffix(strings.TrimPrefix(k, sampled.Disk), "."+sampled.DiskUtilPct)
				if !ok {
					continue
				}
				a.diskSamples[dev]++
				if u > diskUtilPct {
					a.diskBusy[dev]++
				}
				a.diskMax[dev] = max(a.diskMax[dev], u)
			}
		case "replication":
			for k, lag := range v {
				if name, ok := strings.CutSuffix(strings.TrimPrefix(k, sampled.Replication), sampled.LagBytes); ok {
					a.replLag[name] = max(a.replLag[name], lag)
				}
			}
		}
	}
}

func (a *analyzer) addConnections(at time.Time, n, limit float64) {
	if n >= a.connPeak {
		a.connPeak, a.connPeakAt = n, at
	} else if n < a.connPeak*dropShare && a.connPeak-n >= dropMin {
		a.pending = connDrop{from: a.connPeak, to: n, at: at}
	}
	a.connMax = max(a.connMax, n)
	// +1: the sampler's own connection, which the count leaves out.
	if limit > 0 && n+1 >= limit && a.connLimitAt.IsZero() {
		a.connLimitAt = at
	}
}

// findings returns what the run showed, most severe first. srv and logs
// may be nil (no server, no log).
func (a *analyzer) findings(srv *totals, logs map[string]float64) []store.Finding {
	var fs []store.Finding
	add := func(sev, kind string, at time.Time, format string, args ...any) {
		fs = append(fs, store.Finding{Severity: sev, Kind: kind, Message: fmt.Sprintf(format, args...), Time: at})
	}
	clock := func(t time.Time) string { return t.UTC().Format("15:04:05") }

	if a.drop.from > 0 {
		add(store.SeverityWarning, "connections_dropped", a.drop.at, "connections dropped from %.0f to %.0f at %s UTC",
			a.drop.from, a.drop.to, clock(a.drop.at))
	}
	if !a.connLimitAt.IsZero() && srv != nil {
		add(store.SeverityWarning, "connection_limit", a.connLimitAt, "connections reached the server's limit (%d for ordinary roles) at %s UTC",
			srv.maxConns, clock(a.connLimitAt))
	}
	if srv != nil {
		c := srv.counts
		if n := c["deadlocks"]; n > 0 {
			add(store.SeverityWarning, "deadlocks", time.Time{}, "%s (pg_stat_database)", plural(n, "deadlock"))
		}
		if n := c["conflicts"]; n > 0 {
			add(store.SeverityWarning, "conflicts", time.Time{}, "%s with recovery (pg_stat_database)", plural(n, "query conflict"))
		}
		if commit, rollback := c["xact_commit"], c["xact_rollback"]; rollback > 0 && rollback/(commit+rollback) > 0.01 {
			add(store.SeverityInfo, "rollbacks", time.Time{}, "%.1f%% of transactions rolled back (%.0f of %.0f)",
				100*rollback/(commit+rollback), rollback, commit+rollback)
		}
		// Counted only between samples of one server life (see
		// counters.restarted): an end-of-recovery checkpoint is requested
		// too, but not by WAL volume.
		if n := c["checkpoints_req"]; n > 0 {
			add(store.SeverityWarning, "checkpoints_requested", time.Time{}, "checkpoints requested %.0f (by WAL volume, a CHECKPOINT or a backup: max_wal_size too small?)", n)
		}
		if n := c["checkpoints_timed"]; n > 0 {
			add(store.SeverityInfo, "checkpoints_timed", time.Time{}, "%s during the run", plural(n, "timed checkpoint"))
		}
		if n := c["temp_files"]; n > 0 {
			add(store.SeverityInfo, "temp_files", time.Time{}, "%s written, %s (work_mem too small?)", plural(n, "temporary file"), bytesText(c["temp_bytes"]))
		}
		if h, r := c["blks_hit"], c["blks_read"]; r > 0 && 100*h/(h+r) < cacheHitPct {
			add(store.SeverityInfo, "cache_hit", time.Time{}, "buffer cache hit ratio %.1f%%: reads went to the OS or disk", 100*h/(h+r))
		}
	}
	a.cpuFindings(add)
	a.diskFindings(add)
	a.waitFindings(add)
	a.steadiness(add)
	if len(logs) > 0 {
		a.logFindings(logs, add)
	}
	for name, lag := range a.replLag {
		if lag > 0 {
			add(store.SeverityInfo, "replication_lag", time.Time{}, "standby %s: replay lag up to %s", name, bytesText(lag))
		}
	}
	fs = append(fs, a.notes...)
	rank := map[string]int{store.SeverityCritical: 0, store.SeverityWarning: 1, store.SeverityInfo: 2}
	slices.SortStableFunc(fs, func(x, y store.Finding) int { return cmp.Compare(rank[x.Severity], rank[y.Severity]) })
	return fs
}

type addFunc func(sev, kind string, at time.Time, format string, args ...any)

func (a *analyzer) cpuFindings(add addFunc) {
	if a.cpuSamples == 0 {
		return
	}
	own := a.pgarenaCPU / float64(a.cpuSamples)
	busy := a.busy / float64(a.cpuSamples)
	if float64(a.cpuBusy) >= cpuBusyShare*float64(a.cpuSamples) {
		switch {
		case a.dbLocal:
			// The server (or a pooler in front of it) burns the same CPUs:
			// the host is the limit, not necessarily the client.
			add(store.SeverityWarning, "host_saturated", time.Time{},
				"host CPU busy over %d%% in %d of %d samples: host saturated, pgarena used %.0f%%: client and server share this host",
				cpuBusyPct, a.cpuBusy, a.cpuSamples, own)
		case own < clientShare*busy:
			add(store.SeverityWarning, "host_saturated", time.Time{},
				"client host CPU busy over %d%% in %d of %d samples: host saturated, pgarena used %.0f%%: other processes on this host (a local server, pooler or other load?) took the rest",
				cpuBusyPct, a.cpuBusy, a.cpuSamples, own)
		default:
			add(store.SeverityWarning, "client_bound", time.Time{},
				"client host CPU busy over %d%% in %d of %d samples: client-bound, the numbers may understate the server (pgarena used %.0f%% of it)",
				cpuBusyPct, a.cpuBusy, a.cpuSamples, own)
		}
	}
	if iw := a.iowait / float64(a.cpuSamples); iw > iowaitPct {
		add(store.SeverityWarning, "io_bound", time.Time{}, "CPU iowait averaged %.0f%%: IO-bound", iw)
	}
}

func (a *analyzer) diskFindings(add addFunc) {
	devs := make([]string, 0, len(a.diskBusy))
	for d := range a.diskBusy {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	for _, d := range devs {
		n, busy := a.diskSamples[d], a.diskBusy[d]
		if n > 0 && float64(busy) >= diskUtilShare*float64(n) {
			add(store.SeverityWarning, "io_bound", time.Time{}, "device %s %%util over %d%% in %d of %d samples (max %.0f%%): IO-bound",
				d, diskUtilPct, busy, n, a.diskMax[d])
		}
	}
}

func (a *analyzer) waitFindings(add addFunc) {
	if a.active <= 0 {
		return
	}
	type wait struct {
		name string
		n    float64
	}
	var ws []wait
	for k, n := range a.waits {
		ws = append(ws, wait{k, n})
	}
	slices.SortFunc(ws, func(x, y wait) int { return cmp.Or(cmp.Compare(y.n, x.n), strings.Compare(x.name, y.name)) })
	if share := a.lockWaits / a.active; share > lockShare {
		top := ""
		for _, w := range ws {
			if strings.HasPrefix(w.name, "Lock:") {
				top = " (top: " + w.name + ")"
				break
			}
		}
		add(store.SeverityWarning, "lock_bound", time.Time{}, "Lock waits dominate: %.0f%% of active sessions were waiting on locks%s", 100*share, top)
	}
	var parts []string
	for i, w := range ws {
		if i == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", w.name, 100*w.n/a.active))
	}
	if len(parts) > 0 {
		add(store.SeverityInfo, "top_waits", time.Time{}, "active sessions: %s", strings.Join(parts, ", "))
	}
}

// steadiness compares the server's commit rate in the first and last
// thirds of the run, leaving out the quiet samples before the load starts
// and after it ends. In a sweep each step is judged on its own: the rise
// from one step to the next is the sweep, not drift.
func (a *analyzer) steadiness(add addFunc) {
	if a.steadySet {
		for _, w := range a.steady {
			var seg []timedValue
			for _, c := range a.commits {
				if !c.at.Before(w.From) && !c.at.After(w.To) {
					seg = append(seg, c)
				}
			}
			a.steadySegment(add, w.Label, seg)
		}
		return
	}
	if len(a.stepStarts) == 0 {
		a.steadySegment(add, "", a.commits)
		return
	}
	for i, from := range a.stepStarts {
		var seg []timedValue
		for _, c := range a.commits {
			if !c.at.Before(from) && (i+1 == len(a.stepStarts) || c.at.Before(a.stepStarts[i+1])) {
				seg = append(seg, c)
			}
		}
		a.steadySegment(add, fmt.Sprintf("step %d: ", i+1), seg)
	}
}

// steadySegment judges one stretch of commit-rate samples; prefix names
// it in the message.
func (a *analyzer) steadySegment(add addFunc, prefix string, seg []timedValue) {
	peak := 0.0
	for _, c := range seg {
		peak = max(peak, c.v)
	}
	cs := make([]float64, 0, len(seg))
	for _, c := range seg {
		cs = append(cs, c.v)
	}
	for len(cs) > 0 && cs[0] < 0.1*peak {
		cs = cs[1:]
	}
	for len(cs) > 0 && cs[len(cs)-1] < 0.1*peak {
		cs = cs[:len(cs)-1]
	}
	n := len(cs)
	if n < steadyMinSamples {
		return
	}
	third := n / 3
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	first, last := mean(cs[:third]), mean(cs[n-third:])
	if first <= 0 {
		return
	}
	if d := (last - first) / first; d > steadyShare || d < -steadyShare {
		dir := "lower"
		if d > 0 {
			dir = "higher"
		}
		add(store.SeverityWarning, "not_steady", time.Time{},
			"%snot steady: the server's commit rate in the last third is %.0f%% %s than in the first (%.0f/s vs %.0f/s: caching, burst credits, bloat?)",
			prefix, 100*max(d, -d), dir, last, first)
	}
}

func (a *analyzer) logFindings(logs map[string]float64, add addFunc) {
	var parts []string
	kinds := make([]string, 0, len(logs))
	for k := range logs {
		if k != "error" && k != "fatal" && k != "panic" && logs[k] > 0 {
			kinds = append(kinds, k)
		}
	}
	slices.SortFunc(kinds, func(x, y string) int { return cmp.Or(cmp.Compare(logs[y], logs[x]), strings.Compare(x, y)) })
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%.0f '%s'", logs[k], strings.ReplaceAll(k, "_", " ")))
	}
	if p := logs["panic"]; p > 0 {
		parts = append(parts, plural(p, "PANIC"))
	}
	if len(parts) == 0 {
		return
	}
	sev := store.SeverityWarning
	if logs["panic"] > 0 {
		sev = store.SeverityCritical
	}
	add(sev, "server_log", time.Time{}, "server log: %s (%.0f ERROR, %.0f FATAL, %.0f PANIC lines)",
		strings.Join(parts, ", "), logs["error"], logs["fatal"], logs["panic"])
}

func plural(n float64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%.0f %ss", n, what)
}

func bytesText(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
