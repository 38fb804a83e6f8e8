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

	"github.com/pgarena/pgarena/internal/runconfig"
	"github.com/pgarena/pgarena/internal/store"
)

// agentStopWait bounds how long an interrupted agent may take to record
// its run before it is killed.
const agentStopWait = 30 * time.Second

// runAgents runs `run` as f.Agents child processes of this binary, each
// a --segment with one --start-at, then merges their runs into one: the
// same path as segments on several machines or pods.
func (a *app) runAgents(ctx context.Context, f *runFlags) error {
	n := runconfig.Val(f.Agents)
	switch {
	case f.Segment != "":
		return usagef("give either --agents (all segments here) or --segment (one of them), not both")
	case !a.explicitTarget(runTarget(&f.Config)):
		return usagef("--agents needs a target the agents share: give --dsn or --cluster (load it first with pgarena init)")
	case f.Init:
		return usagef("--agents: load the workload first with pgarena init; the agents share the target")
	case maxClients(f.run.Steps) < n:
		return usagef("--agents %d: -c must be at least %d", n, n)
	}
	startAt := time.Now().Add(3*time.Second + time.Duration(maxClients(f.run.Steps))*2*time.Millisecond).Truncate(time.Second)
	if f.StartAt != "" {
		at, err := parseStartAt(f.StartAt, time.Now())
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
	if err := checkSegmentOf(f.SegmentOf); err != nil {
		return err
	}
	runOf := cmp.Or(f.SegmentOf, segmentRunID(startAt, randomTag()))
	a.notef("%d agents start at %s (run %s)", n, startAt.UTC().Format(time.RFC3339), runOf)
	var wg sync.WaitGroup
	var mu sync.Mutex // the agents' lines, one at a time
	for i := range n {
		args, err := agentArgs(&f.Config, i, n, startAt, runOf, filepath.Join(tmp, strconv.Itoa(i)))
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.runAgent(ctx, exe, args, i, &mu)
		}()
	}
	wg.Wait()
	st, err := store.Open(a.resultsDir(f.Results))
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
	err = a.mergeRuns(st, refs, f.Label, n, f.JSON)
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

// agentArgs is the command line of agent i: "run --config FILE", FILE
// (beside its run id's, in a directory only this user reads) holding this
// run's configuration with its segment, the shared start and the whole
// run's identity, without --agents and --json.
func agentArgs(c *runconfig.Config, i, n int, startAt time.Time, runOf, idFile string) ([]string, error) {
	ac := c.Clone()
	ac.Agents, ac.JSON = nil, false
	ac.Segment, ac.StartAt, ac.SegmentOf = fmt.Sprintf("%d/%d", i, n), startAt.UTC().Format(time.RFC3339Nano), runOf
	ac.SegmentIDFile = idFile
	data, err := ac.EncodeYAML()
	if err == nil {
		err = os.WriteFile(idFile+".yaml", data, 0o600)
	}
	return []string{"run", "--config", idFile + ".yaml"}, err
}
