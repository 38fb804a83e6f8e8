package runconfig

import (
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/netio"
	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/workload"
)

// Run is a valid configuration resolved against its workload: what the
// session runs. Spec lacks what only the caller knows: its record's
// provenance (version, command line, host, threads, plan), its hooks, its
// segment (the clock) and the Citus workers' connections (the
// environment).
type Run struct {
	Config       *Config
	Workload     workload.Workload
	Protocol     string // the workload's default when not given
	Duration     time.Duration
	Transactions int
	Steps        []session.Step
	Rules        []driver.Rule
	Clients      int  // the most clients connected at once
	StdoutOut    bool // an --out writes to stdout
	Notes        []string
	Spec         session.Spec
}

// Build validates c (every error at once), makes its workload and
// resolves what depends on it: the protocol, the length, the load plan,
// the client groups. Its errors are the user's to fix.
func (c *Config) Build() (*Run, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w, err := c.NewWorkload()
	if err != nil {
		return nil, err
	}
	r := &Run{Config: c, Workload: w, Protocol: c.Protocol, Duration: Val(c.Time), Transactions: c.Transactions}
	if r.Protocol == "" {
		r.Protocol = "simple"
		if m := w.Meta().QueryMode; m != "" {
			r.Protocol = m
		}
	}
	if c.ProgressTimestamp && c.Progress == 10*time.Second {
		r.Notes = append(r.Notes, "--progress-timestamp: progress lines every 10 s (-P sets how often)")
	}
	if r.StdoutOut, err = c.StdoutOut(); err != nil {
		return nil, err
	}
	if err := r.operationCount(w); err != nil {
		return nil, err
	}
	r.finisherLength(w)
	if r.Duration == 0 && r.Transactions == 0 {
		r.Duration = 60 * time.Second
	}
	if r.Steps, r.Rules, err = c.LoadPlan(r.Duration, r.Transactions); err != nil {
		return nil, err
	}
	if r.Clients, err = r.clients(); err != nil {
		return nil, err
	}
	return r, r.spec()
}

// spec is the session spec of r: one client group of the workload, or
// its Grouper's groups, or reads sent to a replica; the session settings.
func (r *Run) spec() error {
	c, first := r.Config, r.Steps[0]
	netMode, _ := netio.ParseMode(c.NetIO)
	r.Spec = session.Spec{
		Groups: []session.Group{{Workload: r.Workload, Clients: first.Clients, Schedule: first.Schedule,
			Arrival: c.Arrival, LatencyLimit: c.LatencyLimit, QueryMode: r.Protocol,
			ConnectPerTx: c.Connect, MaxTries: c.MaxTries}},
		Steps: r.Steps, Duration: r.Duration, Transactions: r.Transactions, Tick: c.Interval,
		Warmup: c.Warmup, Ramp: c.Ramp, Autostop: r.Rules, Seed: c.Seed, Init: c.Init,
		StatementLatencies: c.ReportPerCommand, LoadWorkers: c.LoadWorkers, Check: c.Check,
		MaxErrorRate: c.MaxErrorRate / 100, ProceedWithConnected: c.ProceedWithConnected,
		SampleEvery: c.SampleInterval, CatchUpTimeout: c.CatchUpTimeout, Failover: c.failover(),
		NetIO: netMode, Jobs: c.Jobs, AdaptProcs: !c.FixedProcs, Drain: c.DrainTimeout,
	}
	if c.DrainTimeout == 0 {
		r.Spec.Drain = driver.NoDrain
	}
	r.Spec.Record.Label, r.Spec.Record.Load = c.Label, c.DescribeLoad(r.Steps)
	if c.Log {
		r.Spec.TxLog = &session.TxLog{Prefix: c.LogPrefix, PID: os.Getpid(), Threads: max(c.Jobs, 1),
			AggregateInterval: time.Duration(Val(c.AggregateInterval)) * time.Second, SamplingRate: Val(c.SamplingRate),
			FailuresDetailed: c.FailuresDetailed, Throttled: c.Rate != "" || c.Schedule != "",
			LatencyLimit: c.LatencyLimit > 0, MaxTries: c.MaxTries}
	}
	splitGroups(&r.Spec, r.Workload)
	if err := splitReads(&r.Spec, c.ReadDSN); err != nil {
		return err
	}
	return applySessionSets(&r.Spec, c.SessionSet)
}

// failover is the run's --failover, nil without one.
func (c *Config) failover() *session.Failover {
	if c.Failover == 0 {
		return nil
	}
	return &session.Failover{After: c.Failover, Command: c.FailoverCommand, External: c.FailoverExternal, Timeout: c.FailoverTimeout}
}

// clients is the most clients a run connects at once: -c, or for a
// workload.Grouper (chbench) the sum of its groups' clients, which its own
// flags give in place of -c. A Grouper runs closed-loop groups of fixed
// sizes: a sweep, an open loop or --read-dsn is refused.
func (r *Run) clients() (int, error) {
	gr, ok := GrouperOf(r.Workload)
	if !ok {
		m := 0
		for _, s := range r.Steps {
			m = max(m, s.Clients)
		}
		return m, nil
	}
	name := r.Workload.Meta().Name
	switch {
	case r.Config.Clients != "1":
		return 0, fmt.Errorf("%s runs several client groups, each with its own clients (%s): leave out -c", name, groupFlags(r.Workload))
	case r.Steps[0].Rate > 0 || !r.Steps[0].Schedule.Empty():
		return 0, fmt.Errorf("%s runs closed-loop client groups: leave out -R and --schedule", name)
	case r.Config.ReadDSN != "":
		return 0, fmt.Errorf("%s runs its own client groups: --read-dsn does not apply", name)
	}
	n := 0
	for _, p := range gr.Groups() {
		n += p.Clients
	}
	return n, nil
}

// splitGroups makes a Grouper's parts the run's client groups, each with
// the load settings of the one group the flags made, and the whole
// workload the source of the run's figures of merit.
func splitGroups(spec *session.Spec, w workload.Workload) {
	gr, ok := GrouperOf(w)
	if !ok {
		return
	}
	base := spec.Groups[0]
	spec.Groups = nil
	for _, p := range gr.Groups() {
		g := base
		g.Name, g.Workload, g.Clients, g.After = p.Name, p.Workload, p.Clients, p.After
		spec.Groups = append(spec.Groups, g)
	}
	spec.Steps = []session.Step{{Clients: spec.Groups[0].Clients}}
	spec.Figures, _ = w.(workload.FigureReporter)
}

// ReadReplica is the kind of the replica --read-dsn names.
const ReadReplica = "read" // as replica.DSN names it

// splitReads makes the run's one client group two when --read-dsn is
// given: the workload's read-only transactions go to the replica (group
// "replica", clients in the mix's proportion, at least one), the rest to
// the primary (group "primary"). A workload whose every transaction reads
// only runs wholly on the replica.
func splitReads(spec *session.Spec, readDSN string) error {
	if readDSN == "" {
		return nil
	}
	g := spec.Groups[0]
	switch {
	case len(spec.Steps) > 1:
		return fmt.Errorf("--read-dsn runs a client group on the replica beside the primary's: give one client count, not a sweep")
	case !g.Schedule.Empty():
		return fmt.Errorf("--read-dsn splits closed-loop clients between primary and replica: leave out the open-loop rate")
	}
	sp, ok := g.Workload.(workload.ReadOnlySplitter)
	if !ok {
		return fmt.Errorf("--read-dsn: workload %s does not say which of its transactions only read", g.Workload.Meta().Name)
	}
	reads, writes, share := sp.SplitReadOnly()
	switch {
	case reads == nil:
		return fmt.Errorf("--read-dsn: no transaction of %s as configured only reads (tpcb: -S)", g.Workload.Meta().Name)
	case writes == nil:
		g.Replica = ReadReplica
		spec.Groups[0] = g
		return nil
	case g.Clients < 2:
		return fmt.Errorf("--read-dsn splits the clients between the primary and the replica: give -c 2 or more")
	}
	nr := min(max(1, int(math.Round(float64(g.Clients)*share))), g.Clients-1)
	w, rd := g, g
	w.Name, w.Workload, w.Clients = "primary", writes, g.Clients-nr
	rd.Name, rd.Workload, rd.Clients, rd.Replica = "replica", reads, nr, ReadReplica
	spec.Groups = []session.Group{w, rd}
	spec.Steps = []session.Step{{Clients: w.Clients}}
	return nil
}

// settingName is a configuration parameter's name, custom ones
// (citus.enable_repartition_joins) included.
var settingName = lazy.Value[*regexp.Regexp]{New: buildSettingName}

func buildSettingName() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$`)
}

// applySessionSets gives the run's client groups their --session-set
// settings and records them in the spec. A group prefix must name one of
// the run's groups.
func applySessionSets(spec *session.Spec, sets []string) error {
	if len(sets) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, g := range spec.Groups {
		if g.Name != "" {
			names[g.Name] = true
		}
	}
	for _, s := range sets {
		kv, value, ok := strings.Cut(s, "=")
		group, key, grouped := strings.Cut(kv, ":")
		if !grouped {
			group, key = "", kv
		}
		switch {
		case !ok || !settingName.Get().MatchString(key):
			return fmt.Errorf("--session-set %q: want key=value or group:key=value (a configuration parameter's name, e.g. work_mem=64MB)", s)
		case grouped && !names[group]:
			known := "this run has one client group: leave out the group"
			if len(names) > 0 {
				known = "the run's groups are " + strings.Join(slices.Sorted(maps.Keys(names)), ", ")
			}
			return fmt.Errorf("--session-set %q: no client group %q (%s)", s, group, known)
		}
		for i := range spec.Groups {
			if !grouped || spec.Groups[i].Name == group {
				if spec.Groups[i].Settings == nil {
					spec.Groups[i].Settings = map[string]string{}
				}
				spec.Groups[i].Settings[key] = value
			}
		}
	}
	spec.Record.SessionSettings = slices.Clone(sets)
	return nil
}

// groupFlags names a Grouper's flags that set its groups' clients.
func groupFlags(w workload.Workload) string {
	var names []string
	if fl, ok := w.(workload.Flagser); ok {
		for _, p := range w.(workload.Grouper).Groups() {
			if fl.Flags().Lookup(p.Name+"-clients") != nil {
				names = append(names, "--"+p.Name+"-clients")
			}
		}
	}
	if len(names) == 0 {
		return "set by its mode's flags"
	}
	return strings.Join(names, ", ")
}

// operationCount maps a workload's total operation count
// (workload.OperationCounter: ycsb --operation-count, YCSB's
// operationcount) to -t: the clients share it evenly, so exactly that many
// transactions run (each client's failed ones count against its share, as
// with -t).
func (r *Run) operationCount(w workload.Workload) error {
	f := r.Config
	oc, ok := w.(workload.OperationCounter)
	if !ok || oc.OperationCount() <= 0 {
		return nil
	}
	n := oc.OperationCount()
	if f.Time != nil || f.Transactions > 0 {
		return fmt.Errorf("give either --operation-count or -T/--time or -t/--transactions, not two of them")
	}
	clients, err := strconv.Atoi(f.Clients)
	if err != nil || clients < 1 {
		return fmt.Errorf("--operation-count needs one client count (-c N), not a sweep (-c %s)", f.Clients)
	}
	if n%clients != 0 {
		return fmt.Errorf("--operation-count %d cannot be shared evenly by %d clients (pgarena runs -t transactions per client): give a multiple of %d", n, clients, clients)
	}
	r.Transactions = n / clients
	return nil
}

// finisherLength gives a run of a workload.Finisher (tpch's power and
// throughput tests) without -T or -t the length of its clients' lists: the
// run ends when every client has run its list. -T or -t still bound it.
func (r *Run) finisherLength(w workload.Workload) {
	if fin, ok := w.(workload.Finisher); ok && r.Duration == 0 && r.Transactions == 0 {
		r.Transactions = fin.Transactions()
	}
}

// GrouperOf returns w's client groups (workload.Grouper), or false when it
// runs as one group of -c clients: not a Grouper, or one whose parameters
// make no groups (tpch's looped streams).
func GrouperOf(w workload.Workload) (workload.Grouper, bool) {
	gr, ok := w.(workload.Grouper)
	if !ok || len(gr.Groups()) == 0 {
		return nil, false
	}
	return gr, true
}
