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
		// does not stop the others: the merge says the run is partial.
		BackoffLimitPerIndex int         `yaml:"backoffLimitPerIndex"`
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
		Volumes       []volume    `yaml:"volumes"`
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
		VolumeMounts []volumeMount `yaml:"volumeMounts"`
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

func job(s Spec, claim string) object {
	c := container{Name: "pgarena", Image: s.Image, Command: []string{"pgarena"}, Args: PodArgs(s),
		Resources:    resources{Requests: map[string]string{"cpu": s.CPU, "memory": s.Memory}},
		VolumeMounts: []volumeMount{{Name: "results", MountPath: ResultsMount}}}
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
	v := volume{Name: "results"}
	v.Claim.ClaimName = claim
	pod := podSpec{RestartPolicy: "Never", Containers: []container{c}, Volumes: []volume{v}}
	// Spread the segments over nodes where the cluster can: one driver
	// machine's CPU is what segments are for.
	var w weightedTerm
	w.Weight = 100
	w.Term.LabelSelector.MatchLabels = map[string]string{"app.kubernetes.io/instance": s.Name}
	w.Term.TopologyKey = "kubernetes.io/hostname"
	pod.Affinity.PodAntiAffinity.Preferred = []weightedTerm{w}
	return object{APIVersion: "batch/v1", Kind: "Job",
		Metadata: meta{Name: s.Name, Namespace: s.Namespace, Labels: labels(s),
			Annotations: map[string]string{"pgarena.dev/start-at": s.StartAt.UTC().Format(time.RFC3339)}},
		Spec: jobSpec{CompletionMode: "Indexed", Completions: s.Agents, Parallelism: s.Agents,
			Template: podTemplate{Metadata: meta{Labels: labels(s)}, Spec: pod}}}
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
		"Apply it well before then (pods must be scheduled, pull the image and connect):",
		"  kubectl apply" + ns + " -f job.yaml",
		fmt.Sprintf("Each pod runs segment JOB_COMPLETION_INDEX of %s and records its run in %s on the claim %s.", n, ResultsDir(s), claim),
		"A failed segment is not retried (backoffLimitPerIndex, Kubernetes 1.29 or later); the merge then says the run is partial.",
		"No headless Service: the segments align on --start-at, not on a barrier. When the Job is done:",
		"  kubectl" + ns + " wait --for=condition=complete --timeout=24h job/" + s.Name + "   # condition=failed if a segment failed",
		"Collect the runs: mount the claim where pgarena runs, or copy them out through a helper pod:",
		"  kubectl" + ns + " run " + s.Name + "-collect --image=busybox --restart=Never --overrides='" + collector + "'",
		"  kubectl" + ns + " cp " + s.Name + "-collect:" + ResultsDir(s) + " ./" + s.Name + " && kubectl" + ns + " delete pod " + s.Name + "-collect",
		"Merge them into one run (each run's spec.json says which segment of " + n + " it is):",
		"  pgarena merge --results ./" + s.Name + " --segments " + n + " --label " + s.Name + " $(ls ./" + s.Name + ")",
	}
	return "# " + strings.Join(lines, "\n# ") + "\n"
}
