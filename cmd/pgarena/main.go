// Command pgarena is a PostgreSQL benchmarking workbench. All behaviour lives
// in internal/cli; main only maps the result to an exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pgarena/pgarena/internal/cli"
	_ "github.com/pgarena/pgarena/internal/gostack" // its init grows the main goroutine's stack
	"github.com/pgarena/pgarena/internal/startprocs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := cli.Main{Stdout: os.Stdout, Stderr: os.Stderr, Env: os.Environ(), StartProcs: startprocs.AtStart()}
	os.Exit(m.Run(ctx, os.Args[1:]))
}
