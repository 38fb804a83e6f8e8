package cli

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pgarena/pgarena/internal/store"
)

// agentStopWait bounds how long an interrupted agent may take to record
// its run before it is killed.
const agentStopWait = 30 * time.Second

// runAgents runs `run` as f.seg.agents child processes of this binary, each
// a --segment with one --start-at, then merges their runs into one: the
// same path as segments on several machines or pods.
func (a *app) runAgents(ctx context.Context, f *runFlags) error {
	n := f.seg.agents
	switch {
	case f.seg.segment != "":
		return usagef("give either --agents (all segments here) or --segment (one of them), not both")
	case !a.explicitTarget(&f.target):
		return usagef("--agents needs a target the agents share: give --dsn or --cluster (load it first with pgarena init)")
	case f.init:
		return usagef("--agents: load the workload first with pgarena init; the agents share the target")
	case maxClients(f.steps) < n:
		return usagef("--agents %d: -c must be at least %d", n, n)
	}
	startAt := time.Now().Add(3*time.Second + time.Duration(maxClients(f.steps))*2*time.Millisecond).Truncate(time.Second)
	if f.seg.startAt != "" {
		at, err := parseStartAt(f.seg.startAt, time.Now())
		if err != nil {
			return err
		}
		startAt = at
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--agents: %w", err)
	}
	tmp, err := os.MkdirTemp("", "pgarena-agents-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := checkSegmentOf(f.seg.segmentOf); err != nil {
		return err
	}
	runOf := cmp.Or(f.seg.segmentOf, segmentRunID(startAt, randomTag()))
	a.notef("%d agents start at %s (run %s)", n, startAt.UTC().Format(time.RFC3339), runOf)
	var wg sync.WaitGroup
	var mu sync.Mutex // the agents' lines, one at a time
	for i := range n {
		args := agentArgs(a.args, i, n, startAt, runOf, filepath.Join(tmp, strconv.Itoa(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.runAgent(ctx, exe, args, i, &mu)
		}()
	}
	wg.Wait()
	st, err := store.Open(a.resultsDir(f.results))
	if err != nil {
		return err
	}
	var refs []string
	for i := range n {
		if b, err := os.ReadFile(filepath.Join(tmp, strconv.Itoa(i))); err == nil {
			refs = append(refs, strings.TrimSpace(string(b)))
		}
	}
	if len(refs) == 0 {
		if ctx.Err() != nil {
			return &exitError{code: ExitInterrupted, msg: "interrupted before any agent recorded a run"}
		}
		return &exitError{code: ExitFailed, msg: "--agents: no agent recorded a run"}
	}
	err = a.mergeRuns(st, refs, f.label, n, f.jsonOut)
	if ctx.Err() != nil && !isUsage(err) {
		// An interrupt exits 130, as a run does; what the agents recorded
		// is merged (partial) first.
		return &exitError{code: ExitInterrupted, msg: "interrupted: the agents' runs so far are merged"}
	}
	return err
}

// runAgent runs one child and copies its stderr, each line prefixed.
func (a *app) runAgent(ctx context.Context, exe string, args []string, i int, mu *sync.Mutex) {
	cmd := osexec.CommandContext(ctx, exe, args...)
	cmd.Env = a.Env
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = agentStopWait
	cmd.Stdout = io.Discard
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			fmt.Fprintf(a.Stderr, "[agent %d] %s\n", i, sc.Text())
			mu.Unlock()
		}
	}()
	err := cmd.Run()
	pw.Close()
	<-done
	if err != nil {
		mu.Lock()
		fmt.Fprintf(a.Stderr, "[agent %d] %v\n", i, err)
		mu.Unlock()
	}
}

// agentArgs is the command line of agent i: this one without --agents,
// --start-at, --segment-of and --json, with its segment, the shared start,
// the whole run's identity and the file for its run id.
func agentArgs(args []string, i, n int, startAt time.Time, runOf, idFile string) []string {
	var out []string
	for k := 0; k < len(args); k++ {
		name, _, hasValue := strings.Cut(args[k], "=")
		switch name {
		case "--agents", "--start-at", "--segment-of":
			if !hasValue {
				k++
			}
			continue
		case "--json":
			continue
		}
		out = append(out, args[k])
	}
	return append(out, "--segment", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt.UTC().Format(time.RFC3339Nano),
		"--segment-of", runOf, "--segment-id-file", idFile)
}
