package cli

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/pgarena/pgarena/internal/k8sjob"
	"github.com/pgarena/pgarena/internal/metrics"
	"github.com/pgarena/pgarena/internal/pgtest"
	"github.com/pgarena/pgarena/internal/store"
)

// TestK8sFlowFromZero follows README's Kubernetes flow with each pod of a
// Job run as a local process (this test binary as pgarena), as the kubelet
// would run it: command and args read from the manifest, $(VAR) expanded,
// JOB_COMPLETION_INDEX set, the results claim's mount mapped to a
// directory. A load as a Job, check, a benchmark as a Job, merge.
func TestK8sFlowFromZero(t *testing.T) {
	t.Parallel()
	c := pgtest.NewCluster(t, nil)
	dsn := c.DSN("postgres")

	load := mustRun(t, "k8s", "init", "tpcc", "-w", "4", "--agents", "4", "--load-workers", "2",
		"--dsn", dsn, "--name", "load")
	runPods(t, jobOf(t, load.stdout), "")
	mustRun(t, "check", "tpcc", "--dsn", dsn)

	results := t.TempDir()
	start := time.Now().Add(15 * time.Second).UTC().Truncate(time.Second).Format(time.RFC3339)
	bench := mustRun(t, "k8s", "tpcc", "-c", "4", "--agents", "2", "-T", "3s", "--interval", "1s", "-P", "0",
		"--dsn", dsn, "--name", "bench", "--start-at", start)
	runPods(t, jobOf(t, bench.stdout), results)

	// The header's merge command, run where the runs were copied to.
	dir := filepath.Join(results, "bench")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%s holds %d runs (%v), want the 2 segments", dir, len(entries), err)
	}
	args := []string{"merge", "--results", dir, "--segments", "2", "--label", "bench"}
	for _, e := range entries {
		args = append(args, e.Name())
	}
	mustRun(t, args...)
	merged, err := store.OpenReadOnly(dir).Load("last")
	if err != nil {
		t.Fatal(err)
	}
	if merged.Status != metrics.StatusComplete || len(merged.Spec.MergedFrom) != 2 || merged.Summary.Transactions == 0 {
		t.Fatalf("merged run: status %s, merged from %v, %d transactions", merged.Status, merged.Spec.MergedFrom, merged.Summary.Transactions)
	}
}

// TestK8sInitBadInput: a load Job for a workload that cannot be sliced, or
// with more pods than slices, is refused in one line.
func TestK8sInitBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"tpcb", "--agents", "2", "--dsn", "host=db"}, []string{"tpcb cannot be loaded in slices"}},
		{[]string{"tpcc", "-w", "2", "--agents", "3", "--dsn", "host=db"}, []string{"at most 2 pods"}},
		{[]string{"tpch", "--scale", "0.01", "--agents", "16", "--dsn", "host=db"}, []string{"at most 15 pods"}},
		{[]string{"tpcc", "--agents", "0", "--dsn", "host=db"}, []string{"--agents N"}},
		{[]string{"tpcc", "--agents", "2", "--dsn", "postgres://u:s3cret@db/b"}, []string{"password"}},
		{[]string{"tpcc", "--agents", "2", "--dsn", "host=db", "--warehouse-range", "1-2"}, []string{"either --segment or --warehouse-range"}},
	} {
		r := pgarena(t, nil, append([]string{"k8s", "init"}, c.args...)...)
		wantUsage(t, r, c.want...)
	}
}

func jobOf(t *testing.T, manifest string) batchv1.Job {
	t.Helper()
	docs := strings.Split(manifest, "\n---\n")
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[len(docs)-1]), &job); err != nil {
		t.Fatalf("%v\n%s", err, manifest)
	}
	return job
}

// runPods runs every pod of an Indexed Job at once as a local process and
// fails the test unless each exits 0. results replaces the claim's mount
// point in the pods' arguments.
func runPods(t *testing.T, job batchv1.Job, results string) {
	t.Helper()
	n := int(*job.Spec.Completions)
	c := job.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 1 || c.Command[0] != "pgarena" {
		t.Fatalf("the pods run %v, want pgarena", c.Command)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		env := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
		args := k8sjob.ExpandArgs(c.Args, env)
		for j, a := range args {
			if results != "" && strings.HasPrefix(a, k8sjob.ResultsMount+"/") {
				args[j] = results + strings.TrimPrefix(a, k8sjob.ResultsMount)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := osexec.Command(os.Args[0], args...)
			cmd.Env = append(cleanEnv(), cliMainEnv+"=1", "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("pod %d (pgarena %s): %v\n%s", i, strings.Join(args, " "), err, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}
