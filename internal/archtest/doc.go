// Package archtest holds tests that keep the design's rules true. The
// import rules are read from the "Import rules" table of docs/DESIGN.md
// and checked transitively (through every module package imported, and
// on third-party imports found on the way); no package outside
// internal/cli and cmd imports cobra; only cli and cmd (and the test
// helper pgtest) print to the terminal, exit, log, or read the process
// environment.
package archtest
