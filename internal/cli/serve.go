package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgarena/pgarena/internal/serve"
)

const serveLong = `Serve the results directory in the browser: the runs list (filters,
sorting, plans with their cells), a live page for each run that follows it as
it is recorded (also runs started by other pgarena processes) with how close
each autostop rule is, compare with the noise band and overlaid charts (the
URL is the view: share it), downloads (HTML report, CSV, JSON, PNG charts)
and plan status. Read-only: it never changes or
deletes a run. It listens on 127.0.0.1:8080; an --addr that is not a loopback
address needs a token (--token, or one is generated and printed once).`

func (a *app) serveCommand() *cobra.Command {
	var (
		results, addr, token string
		plans                []string
	)
	cmd := &cobra.Command{
		Use:     "serve",
		Short:   "Browse, watch live, compare and share runs in a browser (read-only)",
		Long:    serveLong,
		Example: "  pgarena serve\n  pgarena serve --results /data/pgarena-results --plan poolers.yaml\n  pgarena serve --addr 0.0.0.0:8080",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), results, addr, token, plans)
		},
	}
	f := cmd.Flags()
	f.StringVar(&results, "results", "", resultsHelp)
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address host:port; not loopback: a token is required")
	f.StringVar(&token, "token", "", "token required on every request (default: generated when --addr is not loopback)")
	f.StringSliceVar(&plans, "plan", nil, "plan file whose status shows every cell, pending ones included (repeatable)")
	return cmd
}

// minTokenLen is the shortest --token accepted (a generated one has 32).
const minTokenLen = 16

// serve listens on addr until ctx ends (Ctrl-C), then shuts down with a
// deadline.
func (a *app) serve(ctx context.Context, results, addr, token string, plans []string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usagef("--addr %q: want host:port, e.g. 127.0.0.1:8080", addr)
	}
	if token != "" && len(token) < minTokenLen {
		return usagef("--token must be at least %d characters (got %d): a short token is guessed", minTokenLen, len(token))
	}
	if token == "" && !serve.IsLoopback(addr) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return fmt.Errorf("generate a token: %w", err)
		}
		token = hex.EncodeToString(b)
	}
	st, release, err := a.source(results)
	if err != nil {
		return err
	}
	defer release()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("--addr %s: %v", addr, err)
	}
	srv := &http.Server{Handler: serve.New(st, serve.Options{Token: token, Plans: plans}),
		ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + reachableAddr(ln.Addr().(*net.TCPAddr)) + "/"
	if token != "" {
		url += "?token=" + token
	}
	fmt.Fprintf(a.Stderr, "serving %s at %s (read-only; Ctrl-C stops)\n", st.Where(), url)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		return srv.Close() // live pages still streaming
	} else if err != nil {
		return err
	}
	return nil
}

// reachableAddr is host:port to reach a listener at: for one on every
// interface (0.0.0.0, ::) an address of this host that other machines may
// reach (its first non-loopback IPv4 address), or the loopback address.
func reachableAddr(a *net.TCPAddr) string {
	if !a.IP.IsUnspecified() {
		return a.String()
	}
	host := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				host = n.IP.String()
				break
			}
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port))
}
