package k8sjob

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The Kubernetes objects, as far as the manifest uses them (field names
// as in k8s.io/api batch/v1 and core/v1).
type (
	object struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   meta   `yaml:"metadata"`
		Spec       any    `yaml:"spec"`
	}
	meta struct {
		Name        string            `yaml:"name,omitempty"`
		Namespace   string            `yaml:"namespace,omitempty"`
		Labels      map[string]string `yaml:"labels,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty"`
	}
	jobSpec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		// A failed segment is not retried (a retry would start late) and
		// does not stop the others: the merge says the run is partial. A
		// failed slice of a load is loaded again (it replaces its rows).
		// Clusters before 1.29 know no per-index limit: BackoffLimit 0.
		BackoffLimitPerIndex *int        `yaml:"backoffLimitPerIndex,omitempty"`
		BackoffLimit         *int        `yaml:"backoffLimit,omitempty"`
		Template             podTemplate `yaml:"template"`
	}
	podTemplate struct {
		Metadata meta    `yaml:"metadata"`
		Spec     podSpec `yaml:"spec"`
	}
	podSpec struct {
		RestartPolicy string      `yaml:"restartPolicy"`
		Affinity      affinity    `yaml:"affinity"`
		Containers    []container `yaml:"containers"`
		Volumes       []volume    `yaml:"volumes,omitempty"`
	}
	affinity struct {
		PodAntiAffinity struct {
			Preferred []weightedTerm `yaml:"preferredDuringSchedulingIgnoredDuringExecution"`
		} `yaml:"podAntiAffinity"`
	}
	weightedTerm struct {
		Weight int `yaml:"weight"`
		Term   struct {
			LabelSelector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"labelSelector"`
			TopologyKey string `yaml:"topologyKey"`
		} `yaml:"podAffinityTerm"`
	}
	container struct {
		Name         string        `yaml:"name"`
		Image        string        `yaml:"image"`
		Command      []string      `yaml:"command"`
		Args         []string      `yaml:"args"`
		Env          []envVar      `yaml:"env,omitempty"`
		EnvFrom      []envFrom     `yaml:"envFrom,omitempty"`
		Resources    resources     `yaml:"resources"`
		VolumeMounts []volumeMount `yaml:"volumeMounts,omitempty"`
	}
	envVar struct {
		Name      string `yaml:"name"`
		ValueFrom struct {
			SecretKeyRef struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	envFrom struct {
		SecretRef struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	}
	resources struct {
		Requests map[string]string `yaml:"requests"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	volume struct {
		Name  string `yaml:"name"`
		Claim struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
	}
	claimSpec struct {
		AccessModes      []string  `yaml:"accessModes"`
		StorageClassName string    `yaml:"storageClassName,omitempty"`
		Resources        resources `yaml:"resources"`
	}
)

func labels(s Spec) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "pgarena", "app.kubernetes.io/instance": s.Name,
		"pgarena.dev/workload": s.Workload}
}

// resultsClaim is the volume the pods share: ReadWriteMany, as the pods
// may run on different nodes (a storage class such as NFS, CephFS, EFS or
// Azure Files provides it).
func resultsClaim(s Spec, name string) object {
	size := s.ResultsSize
	if size == "" {
		size = "1Gi"
	}
	return object{APIVersion: "v1", Kind: "PersistentVolumeClaim",
		Metadata: meta{Name: name, Namespace: s.Namespace, Labels: labels(s)},
		Spec: claimSpec{AccessModes: []string{"ReadWriteMany"}, StorageClassName: s.StorageClass,
			Resources: resources{Requests: map[string]string{"storage": size}}}}
}

// job is the Indexed Job; claim is the results volume ("" for a load,
// which records no run).
func job(s Spec, claim string) object {
	c := container{Name: "pgarena", Image: s.Image, Command: []string{"pgarena"}, Args: PodArgs(s),
		Resources: resources{Requests: map[string]string{"cpu": s.CPU, "memory": s.Memory}}}
	if claim != "" {
		c.VolumeMounts = []volumeMount{{Name: "results", MountPath: ResultsMount}}
	}
	if s.DSNSecret != "" {
		var e envVar
		e.Name = DSNEnv
		e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key = s.DSNSecret, DSNSecretKey
		c.Env = append(c.Env, e)
	}
	if s.EnvSecret != "" {
		var e envFrom
		e.SecretRef.Name = s.EnvSecret
		c.EnvFrom = append(c.EnvFrom, e)
	}
	pod := podSpec{RestartPolicy: "Never", Containers: []container{c}}
	if claim != "" {
		v := volume{Name: "results"}
		v.Claim.ClaimName = claim
		pod.Volumes = []volume{v}
	}
	// Spread the segments over nodes where the cluster can: one driver
	// machine's CPU is what segments are for.
	var w weightedTerm
	w.Weight = 100
	w.Term.LabelSelector.MatchLabels = map[string]string{"app.kubernetes.io/instance": s.Name}
	w.Term.TopologyKey = "kubernetes.io/hostname"
	pod.Affinity.PodAntiAffinity.Preferred = []weightedTerm{w}
	spec := jobSpec{CompletionMode: "Indexed", Completions: s.Agents, Parallelism: s.Agents,
		Template: podTemplate{Metadata: meta{Labels: labels(s)}, Spec: pod}}
	retries := 0
	if s.IsInit() {
		retries = 2
	}
	if s.LegacyBackoff {
		spec.BackoffLimit = &retries
	} else {
		spec.BackoffLimitPerIndex = &retries
	}
	m := meta{Name: s.Name, Namespace: s.Namespace, Labels: labels(s)}
	if !s.IsInit() {
		m.Annotations = map[string]string{"pgarena.dev/start-at": s.StartAt.UTC().Format(time.RFC3339)}
	}
	return object{APIVersion: "batch/v1", Kind: "Job", Metadata: m, Spec: spec}
}

// waitJob is a command that waits until the Job has completed or failed
// (kubectl wait takes one condition, and waits out its timeout on the
// other) and then shows it.
func waitJob(ns, name string) string {
	return "until kubectl" + ns + " get job/" + name +
		` -o jsonpath='{.status.conditions[?(@.status=="True")].type}' | grep -qE 'Complete|Failed'; do sleep 10; done; kubectl` +
		ns + " get job/" + name
}

// backoffNote says what the manifest does with a failed pod.
func backoffNote(s Spec) string {
	switch {
	case s.LegacyBackoff && s.IsInit():
		return "backoffLimit 2 (--legacy-backoff): failed pods are run again up to twice in all; the Job fails after that."
	case s.LegacyBackoff:
		return "backoffLimit 0 (--legacy-backoff): one failed segment fails the Job and stops the other pods; the merge says the run is partial."
	case s.IsInit():
		return "A failed slice is loaded again up to twice (backoffLimitPerIndex: needs Kubernetes 1.29 or later; older clusters: --legacy-backoff)."
	default:
		return "A failed segment is not retried (backoffLimitPerIndex: needs Kubernetes 1.29 or later, else the default backoffLimit reruns it as a second run; older clusters: --legacy-backoff)."
	}
}

// initHeader is the comment at the top of a load's manifest.
func initHeader(s Spec) string {
	ns := ""
	if s.Namespace != "" {
		ns = " -n " + s.Namespace
	}
	n := strconv.Itoa(s.Agents)
	lines := []string{
		fmt.Sprintf("pgarena k8s init: %s loads %s in %s slices (an Indexed Job): pod i loads slice i of %s;", s.Name, s.Workload, n, n),
		"the pod that completes the data set builds the keys and indexes once (a slice loaded again replaces its rows).",
		"  kubectl apply" + ns + " -f load.yaml",
		backoffNote(s),
		"Wait until the Job has completed or failed:",
		"  " + waitJob(ns, s.Name),
		"Then check the data from any machine that reaches the database:",
		"  pgarena check " + s.Workload + " --dsn '...'",
	}
	return "# " + strings.Join(lines, "\n# ") + "\n"
}

// marginNote names the start margin and what it must cover.
func marginNote(s Spec) string {
	if s.StartMargin <= 0 {
		return "pods must be scheduled, pull the image and connect before the start."
	}
	return fmt.Sprintf("the start margin is %s (scheduling, image pull%s); pods measuring later make the merged run partial (raise --start-margin on a slow cluster).",
		s.StartMargin, map[bool]string{true: ", provisioning the claim", false: ""}[s.ResultsPVC == ""])
}

// header is the comment at the top: how to apply, collect and merge.
func header(s Spec) string {
	ns, claim := "", s.ResultsPVC
	if s.Namespace != "" {
		ns = " -n " + s.Namespace
	}
	if claim == "" {
		claim = s.Name + "-results"
	}
	start := s.StartAt.UTC().Format(time.RFC3339)
	n := strconv.Itoa(s.Agents)
	collector := fmt.Sprintf(`{"apiVersion":"v1","spec":{"containers":[{"name":"collect","image":"busybox","command":["sleep","3600"],`+
		`"volumeMounts":[{"name":"results","mountPath":"%s"}]}],"volumes":[{"name":"results","persistentVolumeClaim":{"claimName":"%s"}}]}}`,
		ResultsMount, claim)
	lines := []string{
		fmt.Sprintf("pgarena k8s: %s, %s in %s segments (an Indexed Job), measuring from %s.", s.Name, s.Workload, n, start),
		"The database must be loaded first (pgarena init, or pgarena k8s init for a load as a Job).",
		"Apply it at once: " + marginNote(s),
		"  kubectl apply" + ns + " -f job.yaml",
		fmt.Sprintf("Each pod runs segment JOB_COMPLETION_INDEX of %s and records its run in %s on the claim %s", n, ResultsDir(s), claim),
		"(ReadWriteMany: pods on several nodes write to it; a claim that stays Pending needs --storage-class or --results-pvc).",
		backoffNote(s),
		"No headless Service: the segments align on --start-at, not on a barrier. Wait until the Job has completed or failed:",
		"  " + waitJob(ns, s.Name),
		"Collect the runs: mount the claim where pgarena runs, or copy them out through a helper pod:",
		"  kubectl" + ns + " run " + s.Name + "-collect --image=busybox --restart=Never --overrides='" + collector + "'",
		"  kubectl" + ns + " wait --for=condition=Ready --timeout=5m pod/" + s.Name + "-collect",
		"  kubectl" + ns + " cp " + s.Name + "-collect:" + ResultsDir(s) + " ./" + s.Name + " && kubectl" + ns + " delete pod " + s.Name + "-collect",
		"Merge them into one run (each run's spec.json says which segment of " + n + " it is):",
		"  pgarena merge --results ./" + s.Name + " --segments " + n + " --label " + s.Name + " $(ls ./" + s.Name + ")",
	}
	return "# " + strings.Join(lines, "\n# ") + "\n"
}
