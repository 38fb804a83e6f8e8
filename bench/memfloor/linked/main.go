// Command linked is command pgconn (DSN [N]: N connections, twenty
// SELECT 1 each) linked with the standard and third-party packages pgarena
// links, none of which it runs: their package inits run, and
// html/template's Execute (reflect's MethodByName) keeps every exported
// method of every type the program converts to an interface.
// bench/memfloor.sh measures its peak RSS.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"html/template"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"gopkg.in/yaml.v3"
)

// linked holds the packages' entry points, reached by no call of main's.
var linked = []any{http.ListenAndServe, (*template.Template).Execute, template.New, tls.Dial, json.Marshal, yaml.Unmarshal}

func main() {
	n := 1
	if len(os.Args) > 2 {
		n, _ = strconv.Atoi(os.Args[2])
	}
	if n < 0 { // never: keeps linked reachable
		_ = linked[0]
	}
	if err := run(os.Args[1], n); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}

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
