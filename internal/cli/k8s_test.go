package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	yaml3 "gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/pgarena/pgarena/internal/runconfig"
)

// TestK8sBadInput: each exits 2 with one line, and no password is printed.
func TestK8sBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"password in url", []string{"--agents", "2", "--dsn", "postgres://bench:s3cret@db/bench"}, []string{"password", "--dsn-secret NAME"}},
		{"password keyword", []string{"--agents", "2", "--dsn=host=db password=s3cret"}, []string{"password", "--env-secret NAME"}},
		{"password in another dsn", []string{"--agents", "2", "--dsn", "host=db", "--read-dsn", "postgres://u:s3cret@replica/b"}, []string{"password"}},
		{"no agents", []string{"--dsn", "host=db"}, []string{"--agents N", "at least 1"}},
		{"zero agents", []string{"--agents", "0", "--dsn", "host=db"}, []string{"--agents N", "at least 1"}},
		{"more agents than clients", []string{"--agents", "9", "--dsn", "host=db"}, []string{"-c must be at least 9"}},
		{"no target", []string{"--agents", "2"}, []string{"--dsn", "--dsn-secret"}},
		{"dsn and dsn secret", []string{"--agents", "2", "--dsn", "host=db", "--dsn-secret", "s"}, []string{"either --dsn or --dsn-secret"}},
		{"segment", []string{"--agents", "2", "--dsn", "host=db", "--segment", "0/2"}, []string{"leave out --segment"}},
		{"init", []string{"--agents", "2", "--dsn", "host=db", "--init"}, []string{"leave out --init"}},
		{"bad name", []string{"--agents", "2", "--dsn", "host=db", "--name", "Tpcb_1"}, []string{`name "Tpcb_1"`}},
		{"bad start", []string{"--agents", "2", "--dsn", "host=db", "--start-at", "soon"}, []string{"RFC 3339"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := pgarena(t, nil, append([]string{"k8s", "tpcb", "-c", "8"}, c.args...)...)
			wantUsage(t, r, c.want...)
			if strings.Contains(r.stderr, "s3cret") {
				t.Errorf("the password was printed: %s", r.stderr)
			}
		})
	}
}

// TestK8sManifest: the run flags after the workload reach every pod, the
// flags the manifest sets do not, and the Job decodes into batch/v1.
func TestK8sManifest(t *testing.T) {
	t.Parallel()
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	r := pgarena(t, nil, "k8s", "tpcb", "-c", "64", "--agents", "4", "-T", "10m", "-M", "prepared", "--label", "k",
		"--dsn", "host=db user=bench", "--env-secret", "pg", "--name", "tpcb-4", "--start-at", start,
		"--cpu", "3", "--image", "reg/pgarena:1")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r)
	}
	docs := strings.Split(r.stdout, "\n---\n")
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[len(docs)-1]), &job); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	c := job.Spec.Template.Spec.Containers[0]
	// Every pod gets one identity of the whole run (--segment-of); a
	// second manifest for the same start gets another.
	runOf := segmentOfArg(t, c.Args)
	// The pods get the run's configuration as one argument; the manifest
	// adds the target, the segment, the start and the results directory.
	want := []string{"--dsn", "host=db user=bench", "--segment", "/4", "--start-at", start, "--segment-of", runOf, "--results", "/results/tpcb-4"}
	if len(c.Args) != 3+len(want) || !slices.Equal(c.Args[:2], []string{"run", "--config-yaml"}) || !slices.Equal(c.Args[3:], want) {
		t.Errorf("args\n%q\nwant run --config-yaml CONFIG then\n%q", c.Args, want)
	}
	var cfg runconfig.Config
	if err := yaml3.Unmarshal([]byte(c.Args[2]), &cfg); err != nil {
		t.Fatalf("the pods' configuration: %v\n%s", err, c.Args[2])
	}
	if cfg.Workload != "tpcb" || cfg.Clients != "64" || runconfig.Val(cfg.Time) != 10*time.Minute || cfg.Protocol != "prepared" ||
		cfg.Label != "k" || cfg.DSN != "" || cfg.Agents != nil || cfg.Segment != "" {
		t.Errorf("the pods' configuration:\n%s", c.Args[2])
	}
	again := pgarena(t, nil, "k8s", "tpcb", "-c", "64", "--agents", "4", "--dsn", "host=db", "--name", "tpcb-4", "--start-at", start)
	var job2 batchv1.Job
	if err := yaml.Unmarshal([]byte(again.stdout[strings.LastIndex(again.stdout, "\n---\n"):]), &job2); err != nil {
		t.Fatal(err)
	}
	if other := segmentOfArg(t, job2.Spec.Template.Spec.Containers[0].Args); other == runOf {
		t.Errorf("two manifests share the run identity %q: their segments would merge", runOf)
	}
	if *job.Spec.Completions != 4 || *job.Spec.Parallelism != 4 || c.Image != "reg/pgarena:1" || c.Resources.Requests.Cpu().String() != "3" {
		t.Errorf("job %+v", job.Spec)
	}
	if !strings.Contains(r.stdout, "pgarena merge --results ./tpcb-4 --segments 4") || !strings.Contains(r.stderr, start) {
		t.Errorf("no collect-and-merge instructions:\n%s", r)
	}
	// Without --start-at the start is now plus --start-margin.
	r = pgarena(t, nil, "k8s", "tpcb", "-c", "8", "--agents", "2", "--dsn-secret", "dsn", "--start-margin", "5m")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r)
	}
	if err := yaml.Unmarshal([]byte(r.stdout[strings.LastIndex(r.stdout, "\n---\n"):]), &job); err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, job.Annotations["pgarena.dev/start-at"])
	if d := time.Until(at); err != nil || d < 4*time.Minute || d > 5*time.Minute {
		t.Errorf("start-at %s (%v): want about 5 minutes from now", at, err)
	}
	if !strings.HasPrefix(job.Name, "pgarena-tpcb-") {
		t.Errorf("default name %q", job.Name)
	}
}

// segmentOfArg is the value of --segment-of in a pod's args.
func segmentOfArg(t *testing.T, args []string) string {
	t.Helper()
	i := slices.Index(args, "--segment-of")
	if i < 0 || i+1 >= len(args) || args[i+1] == "" {
		t.Fatalf("no --segment-of in the pods' args %q", args)
	}
	return args[i+1]
}
