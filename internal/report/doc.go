// Package report renders runs for people: the progress line printed during
// a run, the pgbench-style text summary, and run listings. It is pure
// rendering: it never talks to a database and reads nothing but its
// arguments.
package report
