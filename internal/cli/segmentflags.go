package cli

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/pgarena/pgarena/internal/driver"
	"github.com/pgarena/pgarena/internal/session"
)

// maxStartWait bounds how far ahead --start-at may be: a wait has a deadline.
const maxStartWait = 24 * time.Hour

// applySegment puts --segment, --segment-of and --start-at into spec (bad
// input: exit 2).
func (a *app) applySegment(spec *session.Spec, f *runFlags) error {
	if f.SegmentOf != "" && f.Segment == "" {
		return usagef("--segment-of names the whole run a segment belongs to: give --segment i/N too")
	}
	var at time.Time
	if f.StartAt != "" {
		var err error
		if at, err = parseStartAt(f.StartAt, time.Now()); err != nil {
			return err
		}
		spec.StartAt = at
	}
	if f.Segment != "" {
		seg, err := driver.ParseSegment(f.Segment, a.getenv("JOB_COMPLETION_INDEX"))
		if err != nil {
			return usagef("%s", err)
		}
		if at.IsZero() {
			return usagef("--segment %s needs --start-at: the segments of a run start together (give each the same time)", f.Segment)
		}
		for _, st := range f.run.Steps {
			if st.Clients < seg.Count {
				return usagef("--segment %s: %d clients cannot be split into %d segments: give -c %d or more", f.Segment, st.Clients, seg.Count, seg.Count)
			}
		}
		if err := checkSegmentOf(f.SegmentOf); err != nil {
			return err
		}
		spec.Segment, spec.SegmentOf, f.parsed = seg, cmp.Or(f.SegmentOf, segmentRunID(at, "")), seg
	}
	if f.SegmentIDFile != "" {
		created := spec.Hooks.Created
		spec.Hooks.Created = func(id, dir string) {
			if err := os.WriteFile(f.SegmentIDFile, []byte(id+"\n"), 0o644); err != nil {
				a.notef("--segment-id-file: %v", err)
			}
			if created != nil {
				created(id, dir)
			}
		}
	}
	return nil
}

// segmentRunID is a whole run's identity (--segment-of): its start, and a
// random tag from --agents and pgarena k8s, which make one run each call
// (segments started by hand share only the time).
func segmentRunID(at time.Time, tag string) string {
	id := at.UTC().Format("20060102T150405.999999999Z")
	if tag != "" {
		id += "-" + tag
	}
	return id
}

// randomTag is eight random letters and digits.
func randomTag() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// checkSegmentOf checks a --segment-of value: printable, one word.
func checkSegmentOf(v string) error {
	if len(v) > 100 || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0 {
		return usagef("--segment-of %q: give one word of at most 100 characters", v)
	}
	return nil
}

// share describes the first line's clients ("8 clients") for a segment:
// its share of the whole run's ("segment 0/4: 2 of 8 clients").
func (f *runFlags) share(st session.Step) string {
	if f.parsed.Whole() {
		return st.String()
	}
	lo, hi := f.parsed.Block(st.Clients)
	return fmt.Sprintf("segment %s: %d of %s", f.parsed, hi-lo, st)
}

// parseStartAt parses --start-at: RFC 3339, ahead of now by at most
// maxStartWait.
func parseStartAt(v string, now time.Time) (time.Time, error) {
	at, err := time.Parse(time.RFC3339Nano, v)
	switch {
	case err != nil:
		return time.Time{}, usagef("--start-at %q: expected an RFC 3339 time such as 2026-12-01T10:00:00Z", v)
	case at.Before(now):
		return time.Time{}, usagef("--start-at %s is %s in the past: give a time ahead, the same for every segment", v, now.Sub(at).Round(time.Millisecond))
	case at.Sub(now) > maxStartWait:
		return time.Time{}, usagef("--start-at %s is more than %s ahead: give a nearer time", v, maxStartWait)
	}
	return at, nil
}
