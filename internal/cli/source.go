package cli

import (
	"context"
	"time"

	"github.com/pgarena/pgarena/internal/output/postgres"
	"github.com/pgarena/pgarena/internal/store"
)

// source opens where the read commands (list, show, compare, report,
// export, plan status|report|export, serve) read runs: a results database
// when --results (else $PGARENA_RESULTS) is a postgres:// or postgresql://
// URL, else the results directory. done releases it.
func (a *app) source(flag string) (src store.Source, done func(), err error) {
	loc := a.resultsDir(flag)
	if !postgres.IsURL(loc) {
		return store.OpenReadOnly(loc), func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := postgres.OpenResults(ctx, loc, a.getenv)
	if err != nil {
		return nil, nil, usagef("--results: %v", err)
	}
	return r, func() { _ = r.Close() }, nil
}
