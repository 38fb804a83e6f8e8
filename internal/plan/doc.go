// Package plan runs campaigns: a YAML plan file names targets, workloads
// and matrix axes; the plan expands into cells (one benchmark each, with a
// stable id from its parameters), runs them in order through an injected
// Executor, and derives its state from the results store alone (every run
// is tagged with the plan and cell: store.PlanTag), so a plan killed at
// any point resumes where it stopped. It also holds the find-max search
// (the highest open-loop rate that keeps an SLO).
//
// The package parses no run flags itself: a cell carries its run
// arguments (workload and flag list) and the caller (internal/cli) turns
// them into a run configuration (internal/runconfig), which it checks and
// runs as the run command does, so every run flag can be an axis. It talks to no database (maintenance between cells is the
// Executor's).
package plan
