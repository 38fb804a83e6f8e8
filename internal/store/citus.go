package store

import (
	"fmt"
	"sort"
	"strings"
)

// CitusInfo is a Citus coordinator's topology as a run found it, in
// server.json: version, nodes, and the distribution of the workload's
// tables and functions.
type CitusInfo struct {
	Version string `json:"version"` // citus_version(): "Citus 13.2.2 on ..."
	// Workers are the primary worker nodes (pg_dist_node, group ≠ 0);
	// Coordinator the node with group 0 when it holds placements.
	Workers     []CitusNode  `json:"workers"`
	Coordinator *CitusNode   `json:"coordinator,omitempty"`
	Tables      []CitusTable `json:"tables"`
	// Functions are the distributed functions (create_distributed_function).
	Functions []CitusFunction `json:"functions,omitempty"`
}

// CitusNode is one node and the placements of the workload's tables on
// it (shards of distributed tables and their bytes, reference tables
// excluded: they are on every node).
type CitusNode struct {
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Active bool   `json:"active"`
	Shards int    `json:"shards"`
	Bytes  int64  `json:"bytes"`
}

// CitusTable is one table's distribution: Type is citus_tables' table
// type (distributed, reference, local).
type CitusTable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Column     string `json:"column,omitempty"` // the distribution column
	Colocation int    `json:"colocation"`
	Shards     int    `json:"shards"`
}

// CitusFunction is a distributed function: its signature, the argument
// that routes a call (1-based, 0: none) and its colocation group.
type CitusFunction struct {
	Signature  string `json:"signature"`
	Arg        int    `json:"arg,omitempty"`
	Colocation int    `json:"colocation,omitempty"`
}

// ActiveWorkers counts the active workers.
func (c *CitusInfo) ActiveWorkers() int {
	n := 0
	for _, w := range c.Workers {
		if w.Active {
			n++
		}
	}
	return n
}

// Lines describes the topology in a few lines for people: the workers,
// the distributed and reference tables, the functions, and warnings (0
// workers; placement skew).
func (c *CitusInfo) Lines() []string {
	version := c.Version
	if f := strings.Fields(version); len(f) >= 2 {
		version = f[0] + " " + f[1]
	}
	var nodes []string
	for _, w := range c.Workers {
		s := fmt.Sprintf("%s:%d (%d shards, %s)", w.Host, w.Port, w.Shards, bytesText(w.Bytes))
		if !w.Active {
			s += " inactive"
		}
		nodes = append(nodes, s)
	}
	out := []string{fmt.Sprintf("citus: %s, %d workers", version, c.ActiveWorkers())}
	if len(nodes) > 0 {
		out[0] += ": " + strings.Join(nodes, ", ")
	}
	if c.Coordinator != nil && c.Coordinator.Shards > 0 {
		out[0] += fmt.Sprintf("; the coordinator holds %d shards (%s)", c.Coordinator.Shards, bytesText(c.Coordinator.Bytes))
	}
	byColocation := map[int][]string{}
	var reference, local []string
	for _, t := range c.Tables {
		switch t.Type {
		case "distributed":
			byColocation[t.Colocation] = append(byColocation[t.Colocation], fmt.Sprintf("%s by %s", t.Name, t.Column))
		case "reference":
			reference = append(reference, t.Name)
		default:
			local = append(local, t.Name)
		}
	}
	var groups []int
	for g := range byColocation {
		groups = append(groups, g)
	}
	sort.Ints(groups)
	for _, g := range groups {
		shards := 0
		for _, t := range c.Tables {
			if t.Colocation == g && t.Type == "distributed" {
				shards = t.Shards
			}
		}
		out = append(out, fmt.Sprintf("citus: distributed, colocated (group %d, %d shards): %s", g, shards, strings.Join(byColocation[g], ", ")))
	}
	if len(reference) > 0 {
		out = append(out, "citus: reference tables: "+strings.Join(reference, ", "))
	}
	if len(local) > 0 {
		out = append(out, "citus: not distributed: "+strings.Join(local, ", "))
	}
	if len(c.Functions) > 0 {
		var fs []string
		for _, f := range c.Functions {
			fs = append(fs, fmt.Sprintf("%s by $%d", f.Signature, f.Arg))
		}
		out = append(out, "citus: distributed functions: "+strings.Join(fs, ", "))
	}
	if c.ActiveWorkers() == 0 {
		out = append(out, "citus: warning: 0 active workers: every shard is on the coordinator (add workers with citus_add_node, then rebalance)")
	} else if s := c.Skew(); s != "" {
		out = append(out, "citus: warning: "+s)
	}
	return out
}

// Skew says when one active worker holds much more than its share of the
// distributed tables' bytes (over 1.25 times the mean: 62.5% of 2 workers'), or "".
func (c *CitusInfo) Skew() string {
	var total int64
	n := 0
	for _, w := range c.Workers {
		if w.Active {
			total += w.Bytes
			n++
		}
	}
	if n < 2 || total == 0 {
		return ""
	}
	mean := float64(total) / float64(n)
	for _, w := range c.Workers {
		if w.Active && float64(w.Bytes) > 1.25*mean {
			return fmt.Sprintf("placement skew: worker %s:%d holds %.0f%% of the distributed tables' bytes (%d workers)", w.Host, w.Port, 100*float64(w.Bytes)/float64(total), n)
		}
	}
	return ""
}

func bytesText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d kB", b/1024)
}
