package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNoCluster is wrapped when a named cluster does not exist.
var ErrNoCluster = errors.New("no such cluster")

// NamedStatus describes a named cluster.
type NamedStatus struct {
	Name      string
	Running   bool
	Port      int    // the port it runs on, or used last
	Dir       string // ClustersDir()/NAME: metadata and data
	DataDir   string
	SocketDir string // where its unix socket is (when running)
	LogPath   string
	BinDir    string
	Version   string
	CreatedAt time.Time
}

// ClustersDir is where named clusters live, by env: $PGARENA_HOME/clusters,
// else $XDG_DATA_HOME/pgarena/clusters, else (as root, whose home the
// server account cannot enter) /var/lib/pgarena/clusters, else
// $HOME/.local/share/pgarena/clusters.
func ClustersDir(env Env) string {
	if h := env.Get("PGARENA_HOME"); h != "" {
		return absPath(filepath.Join(h, "clusters"))
	}
	if x := env.Get("XDG_DATA_HOME"); x != "" {
		return absPath(filepath.Join(x, "pgarena", "clusters"))
	}
	if os.Geteuid() == 0 {
		return "/var/lib/pgarena/clusters"
	}
	if home := env.Get("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "pgarena", "clusters")
	}
	return filepath.Join(env.tempDir(), fmt.Sprintf("pgarena-%d-home", os.Getuid()), "clusters")
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// CheckName validates a cluster name: 1 to 63 letters, digits, '-' and '_',
// starting with a letter or digit.
func CheckName(name string) error {
	if name == "" || len(name) > 63 {
		return fmt.Errorf("invalid cluster name %q: use 1 to 63 letters, digits, - and _", name)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && (r == '-' || r == '_'):
		default:
			return fmt.Errorf("invalid cluster name %q: use letters, digits, - and _, starting with a letter or digit", name)
		}
	}
	return nil
}

// noClusterError says how to create the missing cluster and matches
// ErrNoCluster.
type noClusterError struct{ name string }

func (e *noClusterError) Error() string {
	return fmt.Sprintf("no cluster named %s (see `pgarena cluster start --name %s`)", e.name, e.name)
}
func (e *noClusterError) Is(target error) bool { return target == ErrNoCluster }

// StartNamed starts the named cluster ClustersDir(opts.Env)/NAME, creating it
// (initdb) on first use. A stopped cluster restarts on its previous port
// when that is free, with its previous settings overlaid with
// opts.Settings. Starting a running cluster is an error wrapping
// ErrAlreadyRunning. opts.DataDir must be empty.
func StartNamed(ctx context.Context, name string, opts Options) (*Cluster, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if opts.DataDir != "" {
		return nil, errors.New("a named cluster keeps its data in its own directory: DataDir must be empty")
	}
	root := filepath.Join(ClustersDir(opts.Env), name)
	marker := filepath.Join(root, markerFile)
	created := false
	if !fileExists(marker) {
		if !emptyOrMissing(root) {
			return nil, fmt.Errorf("%s exists but is not a pgarena cluster (no %s): refusing to touch it", root, markerFile)
		}
		if err := mkdirAllMode(root, 0o755); err != nil {
			return nil, fmt.Errorf("creating cluster directory: %w", err)
		}
		if err := writeMeta(marker, clusterMeta{Name: name, DataDir: filepath.Join(root, "data"), CreatedAt: time.Now().UTC()}); err != nil {
			return nil, err
		}
		created = true
	}
	c, err := start(ctx, opts, layout{root: root, dataDir: filepath.Join(root, "data"), marker: marker, name: name})
	if err != nil {
		if created {
			// Leave nothing half made: a retry starts clean.
			os.RemoveAll(root)
		}
		if errors.Is(err, ErrAlreadyRunning) {
			if o, oerr := OpenNamed(opts.Env, name); oerr == nil {
				return nil, fmt.Errorf("%w: cluster %s is already running on port %d (see `pgarena cluster env --name %s`)", ErrAlreadyRunning, name, o.Port(), name)
			}
		}
		return nil, err
	}
	return c, nil
}

// OpenNamed returns the named cluster, running or not, from its metadata
// (and, when it runs, its postmaster.pid). The error for a missing cluster
// wraps ErrNoCluster and says how to create it. env places ClustersDir and
// is the environment of the cluster's server programs.
func OpenNamed(env Env, name string) (*Cluster, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	root := filepath.Join(ClustersDir(env), name)
	marker := filepath.Join(root, markerFile)
	meta, err := readMeta(marker)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &noClusterError{name: name}
	}
	if err != nil {
		return nil, err
	}
	dataDir := filepath.Join(root, "data")
	_, major, _ := parseVersion("(PostgreSQL) " + meta.Version)
	c := &Cluster{
		bin:       Binaries{Dir: meta.BinDir, Version: meta.Version, Major: major},
		name:      name,
		dataDir:   dataDir,
		sockDir:   dataDir,
		port:      meta.Port,
		logPath:   meta.LogPath,
		settings:  copySettings(meta.Settings),
		root:      root,
		marker:    marker,
		createdAt: meta.CreatedAt,
		env:       env,
	}
	if c.logPath == "" {
		c.logPath = filepath.Join(dataDir, "server.log")
	}
	if fileExists(dataDir) {
		if c.acct, err = serverAccountOf(dataDir); err != nil {
			return nil, err
		}
	}
	if c.Running() {
		if port, sock, err := readPidFile(dataDir); err == nil {
			c.port = port
			if sock != "" {
				c.sockDir = sock
				if sock != dataDir && strings.HasPrefix(filepath.Base(sock), socketPrefix) {
					c.ownSockDir = sock
				}
			}
		}
	}
	return c, nil
}

// Status describes the cluster (meant for named clusters; works for any).
func (c *Cluster) Status() NamedStatus {
	running := c.Running()
	st := NamedStatus{
		Name: c.name, Running: running, Port: c.port, Dir: c.root, DataDir: c.dataDir,
		LogPath: c.logPath, BinDir: c.bin.Dir, Version: c.bin.Version, CreatedAt: c.createdAt,
	}
	if running {
		st.SocketDir = c.sockDir
	}
	return st
}

// StatusNamed describes one named cluster.
func StatusNamed(env Env, name string) (NamedStatus, error) {
	c, err := OpenNamed(env, name)
	if err != nil {
		return NamedStatus{}, err
	}
	return c.Status(), nil
}

// ListNamed describes every named cluster, sorted by name. A missing
// ClustersDir(env) means none.
func ListNamed(env Env) ([]NamedStatus, error) {
	entries, err := os.ReadDir(ClustersDir(env))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []NamedStatus
	for _, e := range entries {
		if !e.IsDir() || CheckName(e.Name()) != nil {
			continue
		}
		c, err := OpenNamed(env, e.Name())
		if errors.Is(err, ErrNoCluster) {
			continue // not ours
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c.Status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// StopNamed stops the named cluster (not an error when it is stopped).
func StopNamed(ctx context.Context, env Env, name string) error {
	c, err := OpenNamed(env, name)
	if err != nil {
		return err
	}
	return c.Stop(ctx)
}

// RemoveNamed stops the named cluster if it runs and deletes its directory.
func RemoveNamed(env Env, name string) error {
	c, err := OpenNamed(env, name)
	if err != nil {
		return err
	}
	return c.Remove()
}
