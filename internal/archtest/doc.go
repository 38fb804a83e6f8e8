// Package archtest holds tests that keep the design's rules true: every
// package's imports against its entry in the allow list (deps_test.go),
// checked transitively (through every module package imported, and on
// third-party imports found on the way); test helpers (pgtest, golden,
// loadertest, reporttest) imported from tests only; no package outside
// internal/cli and cmd imports cobra; only cli and cmd (and the test
// helper pgtest) print to the terminal, exit, log, or read the process
// environment; the command line stays thin.
package archtest
