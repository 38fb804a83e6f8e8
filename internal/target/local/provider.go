package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/pgarena/pgarena/internal/target"
)

// Ephemeral provides an embedded cluster started for one run from the
// installed server binaries and removed at teardown (unless Keep).
type Ephemeral struct {
	Bin            Binaries
	Settings       map[string]string // --pg-set, over Defaults
	MinConnections int               // max_connections is at least this
	// Keep leaves the cluster running after the run (--keep-cluster).
	Keep bool
	Env  Env // the environment of pgarena (PATH, TMPDIR, ...)
	// Getenv reads the environment for the cluster's DSN (PG* variables).
	Getenv func(string) string
	Notef  func(format string, args ...any)
}

// Describe names the server version that will run.
func (e *Ephemeral) Describe() string { return "embedded PostgreSQL " + e.Bin.Version }

// CreatesTarget: an embedded cluster is made for the run.
func (e *Ephemeral) CreatesTarget() bool { return true }

// Provision starts the cluster. The server logs into its own directory,
// which its account can always write (as root it runs as postgres, which
// may not reach a results directory).
func (e *Ephemeral) Provision(ctx context.Context) (*target.Target, func(), error) {
	notef := e.Notef
	if notef == nil {
		notef = func(string, ...any) {}
	}
	notef("starting an embedded PostgreSQL %s from %s", e.Bin.Version, e.Bin.Dir)
	c, err := Start(ctx, Options{Env: e.Env, BinDir: e.Bin.Dir, Settings: e.Settings, MinConnections: e.MinConnections, Notef: notef})
	if err != nil {
		return nil, nil, err
	}
	teardown := func() {
		if e.Keep {
			notef("keeping the embedded cluster: %s (data in %s); stop it with: %s", c.DSN("postgres"), c.DataDir(), c.StopCommand())
			return
		}
		if err := c.Remove(); err != nil {
			notef("could not remove the embedded cluster in %s: %v", c.DataDir(), err)
		}
	}
	cfg, err := target.ParseDSN(c.DSN("postgres"), e.Getenv)
	if err != nil {
		teardown()
		return nil, nil, err
	}
	return &target.Target{Config: cfg, Description: e.Describe(), Local: true, DataDir: c.DataDir(),
		ServerLog: c.LogPath(), Fresh: true, Crash: c.Crash}, teardown, nil
}

// Named provides a running named cluster (pgarena cluster start --name).
type Named struct {
	Name string
	Env  Env
	// Getenv reads the environment for the cluster's DSN (PG* variables).
	Getenv func(string) string
}

// ErrNotRunning is returned when a named cluster exists but is stopped.
var ErrNotRunning = errors.New("cluster is not running")

// Describe names the cluster.
func (n *Named) Describe() string { return "cluster " + n.Name }

// Provision finds the cluster and checks it runs.
func (n *Named) Provision(ctx context.Context) (*target.Target, func(), error) {
	c, err := OpenNamed(n.Env, n.Name)
	if err != nil {
		return nil, nil, err
	}
	if !c.Running() {
		return nil, nil, &notRunningError{n.Name}
	}
	cfg, err := target.ParseDSN(c.DSN("postgres"), n.Getenv)
	if err != nil {
		return nil, nil, err
	}
	return &target.Target{Config: cfg, Description: target.Redacted(cfg), Local: true, DataDir: c.DataDir(),
		ServerLog: c.LogPath()}, func() {}, nil
}

type notRunningError struct{ name string }

func (e *notRunningError) Error() string {
	return fmt.Sprintf("cluster %q is not running (start it with `pgarena cluster start --name %s`)", e.name, e.name)
}

func (e *notRunningError) Is(target error) bool { return target == ErrNotRunning }
