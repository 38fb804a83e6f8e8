// Package all links every output kind into the binary: importing it
// registers them all. A new output adds one line here.
package all

import (
	_ "github.com/pgarena/pgarena/internal/output/csv"        // per-interval rows for spreadsheets
	_ "github.com/pgarena/pgarena/internal/output/jsonl"      // one JSON object per record
	_ "github.com/pgarena/pgarena/internal/output/postgres"   // a PostgreSQL results database
	_ "github.com/pgarena/pgarena/internal/output/prometheus" // /metrics during the run
)
