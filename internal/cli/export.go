package cli

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/report"
	"github.com/pgarena/pgarena/internal/store"
)

// runSelection is how report, compare and export name runs: ids (or
// unambiguous prefixes), "last", "last~N", "label~GLOB" (every run whose
// label matches the shell pattern), and --since.
type runSelection struct {
	results string
	since   string
	src     store.Source // opened by the first read
	done    func()
}

// source opens the selection's source once.
func (s *runSelection) source(a *app) (store.Source, error) {
	if s.src == nil {
		src, done, err := a.source(s.results)
		if err != nil {
			return nil, err
		}
		s.src, s.done = src, done
	}
	return s.src, nil
}

// close releases the source, if it was opened.
func (s *runSelection) close() {
	if s.done != nil {
		s.done()
	}
}

const selectionHelp = `Runs are named by id (or an unambiguous prefix), "last", "last~N" (the Nth
before the last), or "label~GLOB" (every run whose label matches the shell
pattern, oldest first). --since keeps runs created at or after a time
(2026-11-22, 2026-11-22T03:00:00Z) or within a duration (24h).`

func (s *runSelection) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.results, "results", "", resultsHelp)
	cmd.Flags().StringVar(&s.since, "since", "", "only runs created at or after this time (2026-11-22, RFC 3339) or within this duration (24h)")
}

// parseSince reads --since relative to now.
func parseSince(v string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--since %q: want a time (2026-11-22, 2026-11-22T03:00:00Z) or a duration (24h)", v)
}

// load resolves refs (or, with none, the runs defaults gives) and loads them
// in order, each once. A reference that names no run is a usage error.
func (s *runSelection) load(a *app, refs, defaults []string) ([]*store.Run, error) {
	st, err := s.source(a)
	if err != nil {
		return nil, err
	}
	var since time.Time
	if s.since != "" {
		if since, err = parseSince(s.since, time.Now()); err != nil {
			return nil, err
		}
	}
	if len(refs) == 0 {
		refs = defaults
	}
	var ids []string
	var list []store.RunInfo // oldest first, read once
	for _, ref := range refs {
		if glob, ok := strings.CutPrefix(ref, "label~"); ok {
			if _, err := path.Match(glob, ""); err != nil {
				return nil, usagef("bad label pattern %q: %v", glob, err)
			}
			if list == nil {
				l, err := st.List()
				if err != nil {
					return nil, err
				}
				slices.Reverse(l)
				list = l
			}
			n := 0
			for _, ri := range list {
				if ok, _ := path.Match(glob, ri.Label); ok {
					ids = append(ids, ri.ID)
					n++
				}
			}
			if n == 0 {
				return nil, usagef("no run in %s has a label matching %q (see pgarena list)", st.Where(), glob)
			}
			continue
		}
		id, err := st.Resolve(ref)
		if err != nil {
			if errors.Is(err, store.ErrNoRun) || errors.Is(err, store.ErrAmbiguous) {
				return nil, usagef("%s", err)
			}
			return nil, err
		}
		ids = append(ids, id)
	}
	var runs []*store.Run
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		r, err := st.Load(id)
		if err != nil {
			return nil, err
		}
		if !since.IsZero() && r.Spec.Created.Before(since) {
			continue
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, usagef("no runs selected in %s (see pgarena list)", st.Where())
	}
	return runs, nil
}

// allRuns lists every run id in the store, oldest first.
func (s *runSelection) allRuns(a *app) ([]string, error) {
	st, err := s.source(a)
	if err != nil {
		return nil, err
	}
	l, err := st.List()
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(l))
	for i, ri := range l {
		ids[len(l)-1-i] = ri.ID
	}
	return ids, nil
}

func (a *app) exportCommand() *cobra.Command {
	var (
		sel    runSelection
		format string
	)
	cmd := &cobra.Command{
		Use:   "export [RUN...]",
		Short: "Export runs as CSV (one row per run or sweep step) or JSON (everything about each run)",
		Long: `Export runs to stdout. CSV has one row per run, or one per step of a sweep
(-c 2,4,8: the step column numbers them and each row holds that step's own
clients and numbers), with a stable column order (columns are only ever
added at the end); without runs it exports every run, oldest first. Latencies are in milliseconds, err_* count failed transactions
by class, params is key=value pairs joined by ';'. JSON writes, for each run,
one object with its spec, server, summary, every interval and the full
latency histogram of each transaction type (base64 HdrHistogram V2).

CSV columns: ` + strings.Join(report.CSVColumns, ", ") + `

` + selectionHelp,
		Example: "  pgarena export --format csv > results.csv\n  pgarena export last --format json\n  pgarena export 'label~pool-*' --since 24h",
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "csv" && format != "json" {
				return usagef("--format %q: want csv or json", format)
			}
			defer sel.close()
			defaults, err := sel.allRuns(a)
			if err != nil {
				return err
			}
			runs, err := sel.load(a, args, defaults)
			if err != nil {
				return err
			}
			if format == "csv" {
				return report.WriteCSV(a.Stdout, runs)
			}
			for _, r := range runs {
				hists, err := r.Histograms()
				if err != nil {
					return fmt.Errorf("run %s: %w", r.ID, err)
				}
				e, err := report.NewRunExport(r, hists)
				if err != nil {
					return err
				}
				if err := e.WriteJSON(a.Stdout); err != nil {
					return err
				}
			}
			return nil
		},
	}
	sel.addFlags(cmd)
	cmd.Flags().StringVar(&format, "format", "csv", "csv or json")
	return cmd
}
