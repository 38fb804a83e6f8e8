// Command pgconn is the memory floor of a Go PostgreSQL client: DSN [N]
// opens N (1) pgconn connections at once and runs SELECT 1 twenty times on
// each, as `pgbench -S -t 20 -M simple` does, with nothing else.
// bench/memfloor.sh measures its peak RSS beside pgbench's and pgarena's.
package main

import (
	"context"
	"os"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

func main() {
	n := 1
	if len(os.Args) > 2 {
		n, _ = strconv.Atoi(os.Args[2])
	}
	if err := run(os.Args[1], n); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}

// run connects n clients and runs their queries (command linked repeats it).
func run(dsn string, n int) error {
	ctx := context.Background()
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c, err := pgconn.Connect(ctx, dsn)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close(ctx)
			for range 20 {
				if _, err := c.Exec(ctx, "SELECT 1").ReadAll(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
