package cli

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pgarena/pgarena/internal/k8sjob"
	"github.com/pgarena/pgarena/internal/lazy"
	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/target"
	"github.com/pgarena/pgarena/internal/workload"
)

const k8sLong = `Write the Kubernetes manifest of a benchmark split over N pods: an Indexed
Job (completionMode Indexed, completions = parallelism = --agents N) whose pod
i runs "pgarena run WORKLOAD ... --segment /N" (i from JOB_COMPLETION_INDEX)
with one shared --start-at, all recording their runs in one directory on a
ReadWriteMany PersistentVolumeClaim (--results-pvc, or one the manifest
claims). The run flags after the workload are passed to every pod. Collect the
runs and merge them with pgarena merge: the manifest's top comments say how.

The target: --dsn without a password (the password in a Secret given by
--env-secret, whose keys such as PGPASSWORD become the pods' environment: PG*
variables work as in psql), or --dsn-secret NAME, a Secret whose key "dsn"
holds the whole DSN. A password is never written into the manifest.

Each pod requests 250m CPU + 25m per client and 64Mi + 64Ki per client (its
share of -c), no limits (a CPU limit throttles the clients and shows up as
latency); --cpu and --memory override. No headless Service is written: the
segments align on --start-at, not on a barrier.`

// k8sFlags are pgarena k8s's own flags; the rest are run's.
type k8sFlags struct {
	image, namespace, name         string
	resultsPVC, resultsSize, class string
	cpu, memory                    string
	dsnSecret, envSecret           string
	startMargin                    time.Duration
	legacyBackoff                  bool
}

// k8sOwnFlags are the flags of k8sFlags plus the run flags the manifest
// sets itself: none of them is passed to the pods as given.
var k8sOwnFlags = []string{"--image", "--namespace", "--name", "--results-pvc", "--results-size", "--storage-class",
	"--cpu", "--memory", "--dsn-secret", "--env-secret", "--start-margin", "--legacy-backoff",
	"--agents", "--start-at", "--segment", "--segment-of", "--segment-id-file", "--results", "--dsn"}

// add adds pgarena k8s WORKLOAD's flags: the Job's (common) and the
// results volume and start.
func (k *k8sFlags) add(fl *pflag.FlagSet) {
	k.common(fl, "pgarena-WORKLOAD-TIME", "250m + 25m per client of the pod", "64Mi + 64Ki per client of the pod")
	fl.StringVar(&k.resultsPVC, "results-pvc", "", "existing ReadWriteMany PersistentVolumeClaim for the results, mounted at /results (default: the manifest claims NAME-results)")
	fl.StringVar(&k.resultsSize, "results-size", "1Gi", "size of the claim the manifest writes (without --results-pvc)")
	fl.StringVar(&k.class, "storage-class", "", "storage class of the claim the manifest writes: one offering ReadWriteMany (NFS, CephFS, EFS, Azure Files...), which many clusters' default class does not (the claim then stays Pending)")
	fl.DurationVar(&k.startMargin, "start-margin", 0, "start measuring this long after the manifest is written (unless --start-at): time to apply it, schedule the pods, pull the image and connect (default 2m, 3m when the manifest claims the results volume)")
}

// common adds the flags of every Job pgarena k8s writes (a run's or a
// load's), with the defaults that differ between them named.
func (k *k8sFlags) common(fl *pflag.FlagSet, defaultName, defaultCPU, defaultMemory string) {
	fl.StringVar(&k.image, "image", "pgarena:"+Version, "container image with the pgarena binary on PATH (make image builds pgarena:VERSION)")
	fl.StringVar(&k.namespace, "namespace", "", "namespace of the Job (default: kubectl's)")
	fl.StringVar(&k.name, "name", "", "name of the Job (default "+defaultName+")")
	fl.StringVar(&k.cpu, "cpu", "", "CPU request of each pod (default "+defaultCPU+")")
	fl.StringVar(&k.memory, "memory", "", "memory request of each pod (default "+defaultMemory+")")
	fl.StringVar(&k.dsnSecret, "dsn-secret", "", "Secret whose key \"dsn\" holds the target DSN (instead of --dsn)")
	fl.StringVar(&k.envSecret, "env-secret", "", "Secret whose keys become the pods' environment, e.g. PGPASSWORD")
	fl.BoolVar(&k.legacyBackoff, "legacy-backoff", false, "for clusters older than Kubernetes 1.29 (no backoffLimitPerIndex): write backoffLimit instead, so a failed pod fails the Job rather than running again later")
}

func (a *app) k8sCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "k8s WORKLOAD --agents N", Short: "Write a Kubernetes Indexed Job running a benchmark as N segments",
		Long: k8sLong, Example: "  pgarena k8s tpcc -c 256 --agents 4 -T 10m --dsn 'host=db user=bench dbname=bench' --env-secret pg-password > job.yaml"}
	f, k := &runFlags{}, &k8sFlags{}
	a.workloadCommands(cmd, "run", func(sub *cobra.Command) { f.add(sub); k.add(sub.Flags()) },
		func(cmd *cobra.Command, w workload.Workload) error {
			if err := a.noPassword(); err != nil { // before anything names the DSN
				return err
			}
			cfg, err := cmdConfig(cmd, w, f)
			if err != nil {
				return err
			}
			rf, w, err := prepare(cfg)
			if err != nil {
				return err
			}
			return a.writeK8s(cmd, w, rf, k)
		})
	a.addK8sInit(cmd)
	return cmd
}

const k8sInitLong = `Write the Kubernetes manifest of a load split over N pods: an Indexed Job
whose pod i runs "pgarena init WORKLOAD ... --segment /N" and loads slice i of
N of the data (tpcc: warehouses; ycsb: key numbers; sysbench: ids of
every table) into tables the slices
share. The pod that completes the data set builds the keys and indexes once;
a slice loaded again replaces its rows, so a failed pod is retried (twice).
No volume is needed. Afterwards run pgarena check WORKLOAD.`

// addK8sInit adds pgarena k8s init WORKLOAD (a load as an Indexed Job) to
// k8s, before building its workload subcommands (see buildsWorkload).
func (a *app) addK8sInit(k8s *cobra.Command) {
	cmd := &cobra.Command{Use: "init WORKLOAD --agents N", Short: "Write a Kubernetes Indexed Job loading a workload's data in N slices",
		Long: k8sInitLong, Example: "  pgarena k8s init tpcc -w 1000 --agents 8 --load-workers 4 --dsn 'host=db user=bench dbname=bench' --env-secret pg-password > load.yaml"}
	k8s.AddCommand(cmd)
	k := &k8sFlags{}
	var (
		agents, workers int
		dsn             string
	)
	a.workloadCommands(cmd, "init", func(sub *cobra.Command) {
		k.common(sub.Flags(), "pgarena-load-WORKLOAD-TIME", "250m + 250m per load worker", "256Mi")
		sub.Flags().IntVar(&agents, "agents", 0, "pods, each loading one slice")
		sub.Flags().IntVar(&workers, "load-workers", 4, "connections each pod loads with")
		sub.Flags().StringVar(&dsn, "dsn", "", "the database to load (without a password: give it in --env-secret or the whole DSN in --dsn-secret)")
	}, func(cmd *cobra.Command, w workload.Workload) error {
		name := w.Meta().Name
		sl, ok := w.(workload.Slicer)
		switch {
		case !ok:
			return usagef("pgarena k8s init: %s cannot be loaded in slices (tpcc, ycsb, sysbench and tpch can): load it with pgarena init", name)
		case agents < 1:
			return usagef("pgarena k8s init needs --agents N, the number of pods (slices), at least 1 (got %d)", agents)
		case workers < 1:
			return usagef("--load-workers must be at least 1 (got %d)", workers)
		case dsn != "" && k.dsnSecret != "":
			return usagef("give either --dsn or --dsn-secret, not both")
		case dsn == "" && k.dsnSecret == "" && k.envSecret == "":
			return usagef("pgarena k8s init needs the pods' target: --dsn without a password (the password in a Secret given by --env-secret), or --dsn-secret NAME")
		}
		for _, arg := range a.args {
			if target.RedactDSN(arg) != arg {
				return usagef("a connection string holds a password, which the manifest would carry in plain text: put it in a Secret (--dsn-secret NAME or --env-secret NAME)")
			}
		}
		if err := sl.SliceOf(agents-1, agents); err != nil { // every slice must exist
			return usagef("%s: %s", name, err)
		}
		s := k8sjob.Spec{Verb: k8sjob.VerbInit, Name: k.name, Namespace: k.namespace, Image: k.image, Workload: name,
			RunArgs: k8sInitArgs(a.args, workers), Agents: agents, DSN: dsn, DSNSecret: k.dsnSecret, EnvSecret: k.envSecret,
			CPU: k.cpu, Memory: k.memory, LegacyBackoff: k.legacyBackoff}
		if s.Name == "" {
			s.Name = "pgarena-load-" + nonLabel.Get().ReplaceAllString(strings.ToLower(name), "-") + "-" + time.Now().UTC().Format("20060102-150405")
		}
		if s.CPU == "" {
			s.CPU = fmt.Sprintf("%dm", 250+250*workers)
		}
		if s.Memory == "" {
			s.Memory = "256Mi"
		}
		m, err := k8sjob.Manifest(s)
		if err != nil {
			return usagef("%s", err)
		}
		if _, err := a.Stdout.Write(m); err != nil {
			return err
		}
		a.notef("Job %s: %d pods load %s, one slice each; its top comments say how to wait for it and check the data", s.Name, agents, name)
		return nil
	})
}

// k8sInitArgs is a load pod's command line after "pgarena": init and this
// command's arguments after "k8s init", without the flags the manifest sets.
func k8sInitArgs(args []string, workers int) []string {
	out := []string{"init"}
	for i := 2; i < len(args); i++ {
		name, _, hasValue := strings.Cut(args[i], "=")
		if strings.HasPrefix(name, "--") && (slices.Contains(k8sOwnFlags, name) || name == "--load-workers") {
			if !hasValue && name != "--legacy-backoff" {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return append(out, "--load-workers", fmt.Sprint(workers))
}

// writeK8s checks the flags and writes the manifest on stdout.
func (a *app) writeK8s(cmd *cobra.Command, w workload.Workload, f *runFlags, k *k8sFlags) error {
	if err := a.checkK8s(cmd, f, k); err != nil {
		return err
	}
	margin := k.startMargin
	if margin == 0 {
		margin = k8sjob.StartMargin(k.resultsPVC == "")
	}
	startAt := time.Now().Add(margin).Truncate(time.Second)
	if f.StartAt != "" {
		at, err := parseStartAt(f.StartAt, time.Now())
		if err != nil {
			return err
		}
		startAt = at
	}
	if err := checkSegmentOf(f.SegmentOf); err != nil {
		return err
	}
	runArgs, err := k8sRunArgs(&f.Config)
	if err != nil {
		return err
	}
	s := k8sjob.Spec{Name: k.name, Namespace: k.namespace, Image: k.image, Workload: w.Meta().Name,
		RunArgs: runArgs, Agents: runconfig.Val(f.Agents), StartAt: startAt,
		SegmentOf: cmp.Or(f.SegmentOf, segmentRunID(startAt, randomTag())),
		DSN:       f.DSN, DSNSecret: k.dsnSecret, EnvSecret: k.envSecret,
		ResultsPVC: k.resultsPVC, ResultsSize: k.resultsSize, StorageClass: k.class, CPU: k.cpu, Memory: k.memory,
		LegacyBackoff: k.legacyBackoff}
	if f.StartAt == "" {
		s.StartMargin = margin
	}
	if s.Name == "" {
		s.Name = "pgarena-" + nonLabel.Get().ReplaceAllString(strings.ToLower(s.Workload), "-") + "-" + startAt.UTC().Format("20060102-150405")
	}
	cpu, mem := k8sjob.Requests(k8sjob.PerAgent(maxClients(f.run.Steps), s.Agents))
	if s.CPU == "" {
		s.CPU = cpu
	}
	if s.Memory == "" {
		s.Memory = mem
	}
	m, err := k8sjob.Manifest(s)
	if err != nil {
		return usagef("%s", err)
	}
	if _, err := a.Stdout.Write(m); err != nil {
		return err
	}
	a.notef("Job %s: %d pods start measuring at %s: apply the manifest before then; its top comments say how to collect and merge the runs",
		s.Name, s.Agents, startAt.UTC().Format(time.RFC3339))
	return nil
}

var nonLabel = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9-]+`) }}

// noPassword refuses a password in the command line, which the manifest
// would carry in plain text.
func (a *app) noPassword() error {
	for _, arg := range a.args {
		if target.RedactDSN(arg) != arg {
			return usagef("a connection string holds a password, which the manifest would carry in plain text: put the DSN in a Secret (kubectl create secret generic NAME --from-literal=dsn=...) and give --dsn-secret NAME, or the password as PGPASSWORD in a Secret given by --env-secret NAME")
		}
	}
	return nil
}

// checkK8s refuses what the pods cannot do (bad input: exit 2).
func (a *app) checkK8s(cmd *cobra.Command, f *runFlags, k *k8sFlags) error {
	n := runconfig.Val(f.Agents)
	for _, fl := range []struct {
		name  string
		given bool
	}{{"segment", f.Segment != ""}, {"cluster", f.Cluster != ""}, {"init", f.Init}, {"pg-bin", f.PgBin != ""},
		{"pg-set", len(f.PgSet) > 0}, {"keep-cluster", f.KeepCluster}, {"results", f.Results != ""}} {
		if fl.given {
			return usagef("pgarena k8s: leave out --%s: the pods take their segment from the Job, run against --dsn or --dsn-secret (load it first with pgarena init) and record in /results on the claim", fl.name)
		}
	}
	switch {
	case n < 1:
		return usagef("pgarena k8s needs --agents N, the number of pods (segments), at least 1 (got %d)", n)
	case maxClients(f.run.Steps) < n:
		return usagef("--agents %d: -c must be at least %d", n, n)
	case f.DSN != "" && k.dsnSecret != "":
		return usagef("give either --dsn or --dsn-secret, not both")
	case f.DSN == "" && k.dsnSecret == "" && k.envSecret == "":
		return usagef("pgarena k8s needs the pods' target: --dsn without a password (the password in a Secret given by --env-secret), or --dsn-secret NAME")
	case cmd.Flags().Changed("start-margin") && (k.startMargin <= 0 || k.startMargin > maxStartWait):
		return usagef("--start-margin must be above 0 and at most %s (got %s)", maxStartWait, k.startMargin)
	}
	return nil
}

// k8sRunArgs is the pods' command line after "pgarena": run and this
// run's configuration as one argument, without what the manifest sets
// (the target, the segment, the start, the results directory).
func k8sRunArgs(c *runconfig.Config) ([]string, error) {
	pc := c.Clone()
	pc.DSN, pc.Agents, pc.Segment, pc.StartAt, pc.SegmentOf, pc.Results = "", nil, "", "", "", ""
	y, err := pc.EncodeYAML()
	return []string{"run", "--config-yaml", string(y)}, err
}
