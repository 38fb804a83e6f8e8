// Package archtest holds a test that keeps the import rules of DESIGN.md
// true: workloads never import driver, metrics, store or target; the driver
// never imports store or report; report never talks to a database; store
// never imports pgx; only cli and cmd touch os.Stdout, os.Stderr and
// os.Exit.
package archtest
