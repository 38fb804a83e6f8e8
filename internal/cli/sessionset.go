package cli

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/pgarena/pgarena/internal/session"
	"github.com/pgarena/pgarena/internal/target"
)

// applyWorkerDSNs parses --worker-dsn into the spec.
func (a *app) applyWorkerDSNs(spec *session.Spec, dsns []string) error {
	for _, d := range dsns {
		cfg, err := target.ParseDSN(d, a.getenv)
		if err != nil {
			return usagef("--worker-dsn: %s", err)
		}
		spec.CitusWorkers = append(spec.CitusWorkers, cfg)
	}
	return nil
}

// settingName is a configuration parameter's name, custom ones
// (citus.enable_repartition_joins) included.
var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$`)

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
		case !ok || !settingName.MatchString(key):
			return usagef("--session-set %q: want key=value or group:key=value (a configuration parameter's name, e.g. work_mem=64MB)", s)
		case grouped && !names[group]:
			known := "this run has one client group: leave out the group"
			if len(names) > 0 {
				known = "the run's groups are " + strings.Join(slices.Sorted(maps.Keys(names)), ", ")
			}
			return usagef("--session-set %q: no client group %q (%s)", s, group, known)
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
