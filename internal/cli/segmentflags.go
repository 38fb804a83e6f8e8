package cli

import (
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/session"
)

// segmentFlags split a run over several processes: --segment i/N runs one
// share here, --start-at aligns the segments on the wall clock, --agents N
// runs all N as child processes of this one and merges them.
type segmentFlags struct {
	segment string
	startAt string
	agents  int
	idFile  string // hidden: where a child of --agents writes its run id
}

// maxStartWait bounds how far ahead --start-at may be: a wait has a deadline.
const maxStartWait = 24 * time.Hour

func (s *segmentFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&s.segment, "segment", "", "run only segment i of N of the run (i/N; /N takes i from JOB_COMPLETION_INDEX): its share of the clients and open-loop arrivals; merge the segments' runs with pgarena merge")
	fl.StringVar(&s.startAt, "start-at", "", "start measuring at this time (RFC 3339, e.g. 2026-12-01T10:00:00Z; at most 24h ahead), so segments on several machines share interval boundaries")
	fl.IntVar(&s.agents, "agents", 0, "run as N local child processes, each a --segment, merged into one run at the end")
	fl.StringVar(&s.idFile, "segment-id-file", "", "write the run id to this file once the run is recorded (used by --agents)")
	_ = fl.MarkHidden("segment-id-file")
}

// applySegment puts --segment and --start-at into spec (bad input: exit 2).
func (a *app) applySegment(spec *session.Spec, f *runFlags) error {
	s := &f.seg
	if s.segment != "" {
		seg, err := driver.ParseSegment(s.segment, a.getenv("JOB_COMPLETION_INDEX"))
		if err != nil {
			return usagef("%s", err)
		}
		for _, st := range f.steps {
			if st.Clients < seg.Count {
				return usagef("--segment %s: %d clients cannot be split into %d segments: give -c %d or more", s.segment, st.Clients, seg.Count, seg.Count)
			}
		}
		spec.Segment = seg
	}
	if s.startAt != "" {
		at, err := parseStartAt(s.startAt, time.Now())
		if err != nil {
			return err
		}
		spec.StartAt = at
	}
	if s.idFile != "" {
		created := spec.Hooks.Created
		spec.Hooks.Created = func(id, dir string) {
			if err := os.WriteFile(s.idFile, []byte(id+"\n"), 0o644); err != nil {
				a.notef("--segment-id-file: %v", err)
			}
			if created != nil {
				created(id, dir)
			}
		}
	}
	return nil
}

// parseStartAt parses --start-at: RFC 3339, at most maxStartWait ahead.
func parseStartAt(v string, now time.Time) (time.Time, error) {
	at, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, usagef("--start-at %q: expected an RFC 3339 time such as 2026-12-01T10:00:00Z", v)
	}
	if at.Sub(now) > maxStartWait {
		return time.Time{}, usagef("--start-at %s is more than %s ahead: give a nearer time", v, maxStartWait)
	}
	return at, nil
}
