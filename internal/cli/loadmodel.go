package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/session"
)

// loadFlags choose the load model: closed loop (clients), open loop (-R,
// --schedule), ramp-up, warm-up, autostop rules, and sweeps (lists of
// client counts or rates run as consecutive steps).
type loadFlags struct {
	clients      string
	rate         string
	schedule     string
	arrival      string
	latencyLimit time.Duration
	ramp         time.Duration
	warmup       time.Duration
	autostop     []string
}

func (l *loadFlags) add(fl *pflag.FlagSet) {
	fl.StringVarP(&l.clients, "clients", "c", "1", "concurrent clients, one connection each; a list (1,2,4,8) runs a sweep, one step per count")
	fl.StringVarP(&l.rate, "rate", "R", "", "open loop: transactions per second (Poisson arrivals), a list (100,200,400) runs a sweep")
	fl.StringVar(&l.schedule, "schedule", "", "open loop rate schedule: line(from,to,dur) const(rate,dur) step(from,to,step,dur), concatenated")
	fl.StringVar(&l.arrival, "arrival", driver.ArrivalPoisson, "open loop arrivals: poisson or uniform")
	fl.VarP(millis{&l.latencyLimit}, "latency-limit", "L", "open loop: skip transactions already later than this, count those finishing later (ms or 50ms, 1s)")
	fl.Var(seconds{&l.ramp}, "ramp", "start clients one after another over this time")
	fl.Var(seconds{&l.warmup}, "warmup", "flag the first part of the run as warm-up: recorded, excluded from the summary")
	fl.StringArrayVar(&l.autostop, "autostop", nil, "stop the run when a rule holds, e.g. 'errors>25/s for 10s', 'p95>500ms for 10s', 'tps<10 for 30s' (repeatable; exit code 3)")
}

// plan validates the load flags (before anything connects) and returns the
// steps and the rules. duration is -T (0 with -t).
func (l *loadFlags) plan(duration time.Duration, transactions int) ([]session.Step, []driver.Rule, error) {
	clients, err := parseList(l.clients, "clients", func(s string) (float64, error) {
		n, err := strconv.Atoi(s)
		return float64(n), err
	})
	if err != nil {
		return nil, nil, err
	}
	var rates []float64
	if l.rate != "" {
		if rates, err = parseList(l.rate, "rate", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
			return nil, nil, err
		}
	}
	if len(clients) > 1 && len(rates) > 1 {
		return nil, nil, usagef("sweep either clients or rates, not both (-c %s -R %s)", l.clients, l.rate)
	}
	var sched driver.Schedule
	if l.schedule != "" {
		if len(rates) > 0 {
			return nil, nil, usagef("give either -R or --schedule, not both")
		}
		if sched, err = driver.ParseSchedule(l.schedule); err != nil {
			return nil, nil, usagef("%s", err)
		}
	}
	open := len(rates) > 0 || l.schedule != ""
	if l.schedule != "" && transactions > 0 {
		return nil, nil, usagef("a --schedule run lasts its schedule, not -t")
	}
	if l.arrival != driver.ArrivalPoisson && l.arrival != driver.ArrivalUniform {
		return nil, nil, usagef("--arrival %q: use poisson or uniform", l.arrival)
	}
	if !open && l.latencyLimit > 0 {
		return nil, nil, usagef("--latency-limit applies to open-loop runs (-R or --schedule)")
	}
	var rules []driver.Rule
	for _, a := range l.autostop {
		r, err := driver.ParseRule(a)
		if err != nil {
			return nil, nil, usagef("%s", err)
		}
		rules = append(rules, r)
	}
	var steps []session.Step
	switch {
	case len(rates) > 0:
		for _, c := range clients {
			for _, r := range rates {
				length := l.warmup + duration
				if transactions > 0 {
					// -t with -R, as pgbench: the rate until each client
					// has run its transactions (the driver stops there)
					length = openEnded
				}
				steps = append(steps, session.Step{Clients: int(c), Rate: r, Schedule: driver.ConstSchedule(r, length)})
			}
		}
	case l.schedule != "":
		for _, c := range clients {
			steps = append(steps, session.Step{Clients: int(c), Schedule: sched})
		}
	default:
		for _, c := range clients {
			steps = append(steps, session.Step{Clients: int(c)})
		}
	}
	return steps, rules, nil
}

// openEnded is the length of a -R schedule under -t: longer than any run
// (ten years), ended by the transaction count.
const openEnded = 10 * 365 * 24 * time.Hour

// maxClients is the largest client count of the plan.
func maxClients(steps []session.Step) int {
	m := 0
	for _, s := range steps {
		m = max(m, s.Clients)
	}
	return m
}

// parseList reads "8" or "1,2,4,8": positive numbers.
func parseList(s, what string, parse func(string) (float64, error)) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		v, err := parse(part)
		if err != nil {
			return nil, usagef("%s %q: not a number (in %q)", what, part, s)
		}
		if v <= 0 {
			if what == "clients" {
				return nil, usagef("clients must be at least 1 (got %s)", part)
			}
			return nil, usagef("%s must be positive (got %s)", what, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// rateWarning says when a rate cannot be carried by the clients: by
// Little's law each client must finish a transaction in clients/rate
// seconds, and under a millisecond is beyond most servers.
func rateWarning(s session.Step) string {
	rate := s.Rate
	if rate == 0 {
		rate = s.Schedule.MaxRate()
	}
	if rate == 0 {
		return ""
	}
	per := time.Duration(float64(s.Clients) / rate * float64(time.Second))
	if per < time.Millisecond {
		return fmt.Sprintf("%g tx/s with %d clients needs every transaction to finish within %s (Little's law): expect queueing; add clients (-c) if the server can take them",
			rate, s.Clients, per.Round(time.Microsecond))
	}
	return ""
}

// millis is a duration flag whose bare numbers are milliseconds, as
// pgbench's -L.
type millis struct{ d *time.Duration }

func (m millis) String() string {
	if m.d == nil || *m.d == 0 {
		return "0"
	}
	return m.d.String()
}

func (m millis) Set(v string) error {
	if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		if n < 0 {
			return fmt.Errorf("must not be negative")
		}
		*m.d = time.Duration(n * float64(time.Millisecond))
		return nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 {
		return fmt.Errorf("not a duration (milliseconds, or 50ms, 1s)")
	}
	*m.d = d
	return nil
}

func (m millis) Type() string { return "duration" }

// describe records the load model in the run spec.
func (l *loadFlags) describe(steps []session.Step) map[string]string {
	m := map[string]string{"model": "closed"}
	if l.rate != "" || l.schedule != "" {
		m["model"] = "open"
		m["arrival"] = l.arrival
	}
	if l.rate != "" {
		m["rate"] = l.rate
	}
	if l.schedule != "" {
		m["schedule"] = l.schedule
	}
	if l.latencyLimit > 0 {
		m["latency_limit"] = l.latencyLimit.String()
	}
	if l.ramp > 0 {
		m["ramp"] = l.ramp.String()
	}
	if l.warmup > 0 {
		m["warmup"] = l.warmup.String()
	}
	if len(l.autostop) > 0 {
		m["autostop"] = strings.Join(l.autostop, "; ")
	}
	if len(steps) > 1 {
		var s []string
		for _, st := range steps {
			s = append(s, st.String())
		}
		m["sweep"] = strings.Join(s, ", ")
	}
	return m
}
