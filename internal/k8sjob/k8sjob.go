// Package k8sjob writes the Kubernetes manifest of a run split into
// segments (pgarena k8s): an Indexed Job of N pods, each running
// `pgarena run ... --segment /N` (the index from JOB_COMPLETION_INDEX, which
// Kubernetes sets in an Indexed Job's pods) with one shared --start-at, all
// writing to one results directory on a PersistentVolumeClaim. The segments'
// runs are then merged with pgarena merge.
//
// No headless Service is written: segments align on --start-at, not on a
// barrier, so the pods never talk to each other. The types here mirror the
// few fields of the Kubernetes API that the manifest uses (the tests decode
// the output into k8s.io/api's types, strictly).
package k8sjob

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pgarena/pgarena/internal/lazy"
)

// ResultsMount is where the results volume is mounted in each pod.
const ResultsMount = "/results"

// DSNEnv is the container variable that carries the DSN from Spec.DSNSecret.
const DSNEnv = "PGARENA_DSN"

// DSNSecretKey is the key of Spec.DSNSecret that holds the DSN.
const DSNSecretKey = "dsn"

// The verbs a manifest's pods run.
const (
	VerbRun  = "run"  // a benchmark: one segment of the run per pod (the default)
	VerbInit = "init" // a load: one slice of the data per pod, keys built by the last
)

// Spec is what the manifest is built from.
type Spec struct {
	// Verb is VerbRun (empty) or VerbInit.
	Verb      string
	Name      string // Job name (and results subdirectory): a DNS label
	Namespace string // empty: the namespace kubectl applies to
	Image     string // a pgarena image with the binary on PATH as "pgarena"
	Workload  string
	// RunArgs is the pods' command line after "pgarena": run, the workload,
	// its arguments and run flags, without --segment, --start-at, --results
	// and --dsn, which the manifest adds.
	RunArgs []string
	Agents  int
	StartAt time.Time
	// SegmentOf is the whole run's identity, passed to every pod
	// (--segment-of): pgarena merge joins only segments of one run.
	SegmentOf string
	// The target: DSN is passed as --dsn (it must hold no password);
	// DSNSecret names a Secret whose key "dsn" is the DSN (passed as
	// --dsn $(PGARENA_DSN)); EnvSecret names a Secret whose keys become
	// environment variables, e.g. PGPASSWORD (PG* variables work as in
	// psql). A DSNSecret wins over DSN.
	DSN, DSNSecret, EnvSecret string
	// ResultsPVC is an existing claim to mount at /results; empty: the
	// manifest claims Name-results, ResultsSize large, ReadWriteMany.
	ResultsPVC, ResultsSize, StorageClass string
	CPU, Memory                           string // each pod's requests (see Requests)
	// StartMargin is how long after the manifest is written the run starts
	// measuring (StartAt - now), named in the header with what it covers.
	StartMargin time.Duration
	// LegacyBackoff writes backoffLimit: 0 instead of backoffLimitPerIndex,
	// for clusters older than Kubernetes 1.29: a failed pod then fails the
	// Job and stops its other pods, rather than being run again later.
	LegacyBackoff bool
}

// IsInit reports whether the manifest loads data rather than runs.
func (s Spec) IsInit() bool { return s.Verb == VerbInit }

// StartMargin is the default time between writing a run's manifest and
// its start: a minute to apply it and schedule the pods, a minute to pull
// the image, and a minute more when the manifest claims a new volume
// (dynamic provisioning, then attaching it).
func StartMargin(claimsVolume bool) time.Duration {
	if claimsVolume {
		return 3 * time.Minute
	}
	return 2 * time.Minute
}

// Requests sizes a pod's requests from its clients: 250m CPU plus 25m per
// client (a core per 40 clients), 64 MiB plus 64 KiB per client (measured
// ~30 KB per client at 10,000 clients: the margin covers histograms and
// the workload's state). No limits are set: a CPU limit throttles the
// clients and shows up as latency.
func Requests(clients int) (cpu, memory string) {
	return fmt.Sprintf("%dm", 250+25*clients), fmt.Sprintf("%dMi", 64+(clients+15)/16)
}

// PerAgent is the largest segment's share of clients split over agents.
func PerAgent(clients, agents int) int { return (clients + agents - 1) / agents }

var dnsLabel = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`) }}

// CheckName checks a Kubernetes object name used as a DNS label.
func CheckName(what, s string) error {
	if len(s) > 63 || !dnsLabel.Get().MatchString(s) {
		return fmt.Errorf("%s %q: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit", what, s)
	}
	return nil
}

// Manifest returns the multi-document YAML: a PersistentVolumeClaim for
// the results unless s.ResultsPVC names one, then the Job. Comments at the
// top say how to apply it, collect the runs and merge them.
func Manifest(s Spec) ([]byte, error) {
	switch {
	case s.Agents < 1:
		return nil, errors.New("agents must be at least 1")
	case s.Image == "":
		return nil, errors.New("an image is needed")
	}
	for _, c := range []struct{ what, v string }{{"name", s.Name}, {"namespace", s.Namespace},
		{"results PVC", s.ResultsPVC}, {"DSN secret", s.DSNSecret}, {"env secret", s.EnvSecret}} {
		if c.v != "" || c.what == "name" {
			if err := CheckName(c.what, c.v); err != nil {
				return nil, err
			}
		}
	}
	var b bytes.Buffer
	if s.IsInit() {
		b.WriteString(initHeader(s))
		if err := writeDoc(&b, job(s, "")); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	b.WriteString(header(s))
	claim := s.ResultsPVC
	if claim == "" {
		claim = s.Name + "-results"
		if err := writeDoc(&b, resultsClaim(s, claim)); err != nil {
			return nil, err
		}
	}
	if err := writeDoc(&b, job(s, claim)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeDoc(b *bytes.Buffer, v any) error {
	b.WriteString("---\n")
	enc := yaml.NewEncoder(b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// PodArgs is a pod's command line after "pgarena": s.RunArgs and the DSN
// (with "$(" escaped, as Kubernetes expands $(VAR) in args), the segment
// from the completion index and, for a run, the shared start, the whole
// run's identity and the results directory.
func PodArgs(s Spec) []string {
	args := make([]string, 0, len(s.RunArgs)+8)
	for _, a := range s.RunArgs {
		args = append(args, escapeArg(a))
	}
	switch {
	case s.DSNSecret != "":
		args = append(args, "--dsn", "$("+DSNEnv+")")
	case s.DSN != "":
		args = append(args, "--dsn", escapeArg(s.DSN))
	}
	args = append(args, "--segment", "/"+strconv.Itoa(s.Agents))
	if s.IsInit() {
		return args
	}
	args = append(args, "--start-at", s.StartAt.UTC().Format(time.RFC3339))
	if s.SegmentOf != "" {
		args = append(args, "--segment-of", s.SegmentOf)
	}
	return append(args, "--results", ResultsDir(s))
}

// escapeArg keeps Kubernetes from expanding $(VAR) in a literal argument.
func escapeArg(a string) string { return strings.ReplaceAll(a, "$(", "$$(") }

// ExpandArgs expands $(VAR) in args as the kubelet does (a reference to a
// variable not in env is left as written; $$ is a literal $), so tests can
// run a manifest's pods as local processes.
func ExpandArgs(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		var b strings.Builder
		for j := 0; j < len(a); j++ {
			if a[j] != '$' || j+1 >= len(a) {
				b.WriteByte(a[j])
				continue
			}
			switch a[j+1] {
			case '$':
				b.WriteByte('$')
				j++
			case '(':
				if end := strings.IndexByte(a[j+2:], ')'); end >= 0 {
					name := a[j+2 : j+2+end]
					if v, ok := env[name]; ok {
						b.WriteString(v)
					} else {
						b.WriteString(a[j : j+3+end])
					}
					j += 2 + end
					continue
				}
				b.WriteByte('$')
			default:
				b.WriteByte('$')
			}
		}
		out[i] = b.String()
	}
	return out
}

// ResultsDir is the pods' shared results directory: one per Job on the
// volume. Run ids are created with mkdir, so the pods' runs do not collide.
func ResultsDir(s Spec) string { return ResultsMount + "/" + s.Name }
