// Package all links every output kind into the binary and registers them:
// the CLI calls Register before it builds its commands. A new output adds
// one line here.
package all

import (
	"sync"

	"github.com/pgarena/pgarena/internal/output"
	"github.com/pgarena/pgarena/internal/output/csv"
	"github.com/pgarena/pgarena/internal/output/jsonl"
	"github.com/pgarena/pgarena/internal/output/postgres"
	"github.com/pgarena/pgarena/internal/output/prometheus"
)

var once sync.Once

// Register adds every kind to output's registry, once. Each Kind is static
// data, so registering runs none of the kinds' code (their packages have
// no init function).
func Register() {
	once.Do(func() {
		for _, k := range []output.Kind{
			csv.Kind,        // per-interval rows for spreadsheets
			jsonl.Kind,      // one JSON object per record
			postgres.Kind,   // a PostgreSQL results database
			prometheus.Kind, // /metrics during the run
		} {
			output.Register(k)
		}
	})
}
