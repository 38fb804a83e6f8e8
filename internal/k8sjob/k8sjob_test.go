package k8sjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/pgarena/pgarena/internal/golden"
)

var start = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func spec() Spec {
	cpu, mem := Requests(PerAgent(256, 4))
	return Spec{Name: "tpcc-4x64", Image: "pgarena:0.1.0", Workload: "tpcc",
		RunArgs: []string{"run", "tpcc", "-c", "256", "-T", "10m", "--label", "tpcc $(x)"},
		Agents:  4, StartAt: start, SegmentOf: "20261201T100000Z-k3f9x2qa", DSN: "host=db.bench user=bench dbname=bench", EnvSecret: "pg-password",
		CPU: cpu, Memory: mem}
}

// decode splits the manifest into documents and decodes each strictly
// (an unknown field is an error) into the Kubernetes API's type.
func decode(t *testing.T, m []byte) (*corev1.PersistentVolumeClaim, *batchv1.Job) {
	t.Helper()
	var pvc *corev1.PersistentVolumeClaim
	var job *batchv1.Job
	for _, doc := range strings.Split(string(m), "\n---\n")[1:] {
		var tm struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		var into any
		switch tm.Kind {
		case "Job":
			job = &batchv1.Job{}
			into = job
		case "PersistentVolumeClaim":
			pvc = &corev1.PersistentVolumeClaim{}
			into = pvc
		default:
			t.Fatalf("unexpected kind %q in\n%s", tm.Kind, doc)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s does not decode into the Kubernetes type: %v\n%s", tm.Kind, err, doc)
		}
	}
	if job == nil {
		t.Fatal("no Job in the manifest")
	}
	return pvc, job
}

func TestManifestDecodesIntoJob(t *testing.T) {
	m, err := Manifest(spec())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tpcc-4x64.golden", m)
	pvc, job := decode(t, m)
	if job.APIVersion != "batch/v1" || job.Name != "tpcc-4x64" {
		t.Errorf("job %s %s", job.APIVersion, job.Name)
	}
	js := job.Spec
	if js.CompletionMode == nil || *js.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", js.CompletionMode)
	}
	if *js.Completions != 4 || *js.Parallelism != 4 || *js.BackoffLimitPerIndex != 0 {
		t.Errorf("completions %d parallelism %d backoffLimitPerIndex %d", *js.Completions, *js.Parallelism, *js.BackoffLimitPerIndex)
	}
	pod := js.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod %+v", pod)
	}
	c := pod.Containers[0]
	want := []string{"run", "tpcc", "-c", "256", "-T", "10m", "--label", "tpcc $$(x)", "--dsn", "host=db.bench user=bench dbname=bench",
		"--segment", "/4", "--start-at", "2026-12-01T10:00:00Z", "--segment-of", "20261201T100000Z-k3f9x2qa", "--results", "/results/tpcc-4x64"}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args\n%q\nwant\n%q", c.Args, want)
	}
	if c.Resources.Requests.Cpu().Cmp(resource.MustParse("1850m")) != 0 || c.Resources.Requests.Memory().Cmp(resource.MustParse("68Mi")) != 0 {
		t.Errorf("requests %v", c.Resources.Requests)
	}
	if len(c.Resources.Limits) != 0 {
		t.Errorf("limits %v: none wanted (a CPU limit throttles the clients)", c.Resources.Limits)
	}
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef.Name != "pg-password" || len(c.Env) != 0 {
		t.Errorf("env %+v envFrom %+v", c.Env, c.EnvFrom)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/results" ||
		pod.Volumes[0].PersistentVolumeClaim.ClaimName != "tpcc-4x64-results" {
		t.Errorf("mounts %+v volumes %+v", c.VolumeMounts, pod.Volumes)
	}
	if pvc == nil || pvc.Name != "tpcc-4x64-results" || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany ||
		pvc.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("claim %+v", pvc)
	}
}

// With an existing claim and the DSN in a Secret, the manifest is the Job
// alone and the DSN comes from the Secret through $(PGARENA_DSN).
func TestManifestDSNSecretExistingClaim(t *testing.T) {
	s := spec()
	s.DSN, s.EnvSecret, s.DSNSecret, s.ResultsPVC, s.Namespace = "", "", "bench-dsn", "bench-results", "bench"
	s.Agents = 2
	m, err := Manifest(s)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "dsn-secret.golden", m)
	pvc, job := decode(t, m)
	if pvc != nil {
		t.Error("a claim was written though --results-pvc names one")
	}
	c := job.Spec.Template.Spec.Containers[0]
	if i := slices.Index(c.Args, "--dsn"); i < 0 || c.Args[i+1] != "$(PGARENA_DSN)" {
		t.Errorf("args %q", c.Args)
	}
	if len(c.Env) != 1 || c.Env[0].Name != DSNEnv || c.Env[0].ValueFrom.SecretKeyRef.Name != "bench-dsn" ||
		c.Env[0].ValueFrom.SecretKeyRef.Key != "dsn" {
		t.Errorf("env %+v", c.Env)
	}
	if job.Namespace != "bench" || job.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "bench-results" {
		t.Errorf("namespace %q volumes %+v", job.Namespace, job.Spec.Template.Spec.Volumes)
	}
	if !strings.Contains(string(m), "# Merge") || !strings.Contains(string(m), "kubectl -n bench cp") {
		t.Error("the header does not say how to collect and merge")
	}
}

func TestManifestBadInput(t *testing.T) {
	for _, c := range []struct {
		edit func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Agents = 0 }, "agents must be at least 1"},
		{func(s *Spec) { s.Name = "Bad_Name" }, `name "Bad_Name"`},
		{func(s *Spec) { s.Name = "" }, `name ""`},
		{func(s *Spec) { s.Namespace = "-x" }, `namespace "-x"`},
		{func(s *Spec) { s.Image = "" }, "image"},
	} {
		s := spec()
		c.edit(&s)
		if _, err := Manifest(s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func TestRequests(t *testing.T) {
	for _, c := range []struct {
		clients  int
		cpu, mem string
	}{{1, "275m", "65Mi"}, {64, "1850m", "68Mi"}, {1000, "25250m", "127Mi"}} {
		if cpu, mem := Requests(c.clients); cpu != c.cpu || mem != c.mem {
			t.Errorf("Requests(%d) = %s %s, want %s %s", c.clients, cpu, mem, c.cpu, c.mem)
		}
	}
	if PerAgent(10, 4) != 3 || PerAgent(8, 4) != 2 {
		t.Error("PerAgent")
	}
}

func TestExpandArgsAsKubelet(t *testing.T) {
	got := ExpandArgs([]string{"$(A)", "x$(A)y", "$$(A)", "$(MISSING)", "$$", "a$", "$(unclosed"},
		map[string]string{"A": "1"})
	want := []string{"1", "x1y", "$(A)", "$(MISSING)", "$", "a$", "$(unclosed"}
	if !slices.Equal(got, want) {
		t.Fatalf("ExpandArgs = %q, want %q", got, want)
	}
	// A DSN holding "$(" reaches the pod as written.
	s := spec()
	s.DSN = "host=db password_file=$(HOME)/x"
	args := ExpandArgs(PodArgs(s), map[string]string{"HOME": "/root"})
	if !slices.Contains(args, s.DSN) {
		t.Fatalf("the DSN was expanded: %q", args)
	}
}

func TestInitManifestHasNoVolume(t *testing.T) {
	s := spec()
	s.Verb, s.RunArgs = VerbInit, []string{"init", "tpcc", "-w", "8"}
	m, err := Manifest(s)
	if err != nil {
		t.Fatal(err)
	}
	pvc, job := decode(t, m)
	if pvc != nil || len(job.Spec.Template.Spec.Volumes) != 0 {
		t.Fatalf("a load's manifest claims a volume:\n%s", m)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "/4") || slices.Contains(args, "--start-at") || *job.Spec.BackoffLimitPerIndex != 2 {
		t.Fatalf("args %q backoffLimitPerIndex %d", args, *job.Spec.BackoffLimitPerIndex)
	}
	s.LegacyBackoff = true
	m, _ = Manifest(s)
	_, job = decode(t, m)
	if job.Spec.BackoffLimitPerIndex != nil || job.Spec.BackoffLimit == nil {
		t.Fatalf("--legacy-backoff: per index %v, job %v", job.Spec.BackoffLimitPerIndex, job.Spec.BackoffLimit)
	}
}
