package runconfig

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/session"
)

// LoadPlan is the load model's steps and autostop rules: closed loop
// (clients), open loop (rate, schedule), sweeps (lists of client counts or
// rates run as consecutive steps). duration is the run's -T (0 with -t).
func (c *Config) LoadPlan(duration time.Duration, transactions int) ([]session.Step, []driver.Rule, error) {
	clients, err := parseList(c.Clients, "clients", func(s string) (float64, error) {
		n, err := strconv.Atoi(s)
		return float64(n), err
	})
	if err != nil {
		return nil, nil, err
	}
	var rates []float64
	if c.Rate != "" {
		if rates, err = parseList(c.Rate, "rate", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
			return nil, nil, err
		}
	}
	if len(clients) > 1 && len(rates) > 1 {
		return nil, nil, fmt.Errorf("sweep either clients or rates, not both (-c %s -R %s)", c.Clients, c.Rate)
	}
	var sched driver.Schedule
	if c.Schedule != "" {
		if len(rates) > 0 {
			return nil, nil, fmt.Errorf("give either -R or --schedule, not both")
		}
		if sched, err = driver.ParseSchedule(c.Schedule); err != nil {
			return nil, nil, err
		}
	}
	open := len(rates) > 0 || c.Schedule != ""
	switch {
	case c.Schedule != "" && transactions > 0:
		return nil, nil, fmt.Errorf("a --schedule run lasts its schedule, not -t")
	case c.Arrival != driver.ArrivalPoisson && c.Arrival != driver.ArrivalUniform:
		return nil, nil, fmt.Errorf("--arrival %q: use poisson or uniform", c.Arrival)
	case !open && c.LatencyLimit > 0:
		return nil, nil, fmt.Errorf("--latency-limit applies to open-loop runs (-R or --schedule)")
	}
	var rules []driver.Rule
	for _, a := range c.Autostop {
		r, err := driver.ParseRule(a)
		if err != nil {
			return nil, nil, err
		}
		rules = append(rules, r)
	}
	var steps []session.Step
	for _, n := range clients {
		switch {
		case len(rates) > 0:
			for _, r := range rates {
				length := c.Warmup + duration
				if transactions > 0 {
					// -t with -R, as pgbench: the rate until each client
					// has run its transactions (the driver stops there)
					length = openEnded
				}
				steps = append(steps, session.Step{Clients: int(n), Rate: r, Schedule: driver.ConstSchedule(r, length)})
			}
		case c.Schedule != "":
			steps = append(steps, session.Step{Clients: int(n), Schedule: sched})
		default:
			steps = append(steps, session.Step{Clients: int(n)})
		}
	}
	return steps, rules, nil
}

// openEnded is the length of a -R schedule under -t: longer than any run
// (ten years), ended by the transaction count.
const openEnded = 10 * 365 * 24 * time.Hour

// parseList reads "8" or "1,2,4,8": positive numbers.
func parseList(s, what string, parse func(string) (float64, error)) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		v, err := parse(part)
		if err != nil {
			return nil, fmt.Errorf("%s %q: not a number (in %q)", what, part, s)
		}
		if v <= 0 {
			if what == "clients" {
				return nil, fmt.Errorf("clients must be at least 1 (got %s)", part)
			}
			return nil, fmt.Errorf("%s must be positive (got %s)", what, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// DescribeLoad is the load model as the run spec records it.
func (c *Config) DescribeLoad(steps []session.Step) map[string]string {
	m := map[string]string{"model": "closed"}
	if c.Rate != "" || c.Schedule != "" {
		m["model"] = "open"
		m["arrival"] = c.Arrival
	}
	if c.Rate != "" {
		m["rate"] = c.Rate
	}
	if c.Schedule != "" {
		m["schedule"] = c.Schedule
	}
	if c.LatencyLimit > 0 {
		m["latency_limit"] = c.LatencyLimit.String()
	}
	if c.Ramp > 0 {
		m["ramp"] = c.Ramp.String()
	}
	if c.Warmup > 0 {
		m["warmup"] = c.Warmup.String()
	}
	if len(c.Autostop) > 0 {
		m["autostop"] = strings.Join(c.Autostop, "; ")
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
