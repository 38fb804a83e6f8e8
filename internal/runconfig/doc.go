// Package runconfig is the complete description of one run as plain data:
// target, replica, pooler, workload and its parameters, load model,
// protocol, duration, outputs, segment, failover. A Config round-trips
// through JSON and YAML; its keys are the long names of the run flags, which
// AddFlags binds to its fields, so a flag line, a --config file, a plan cell
// and a recorded run (spec.json "config") describe a run the same way.
// Workload parameters stay name→value strings (the workload's own flags,
// as cockroach's workload tool keeps them). Validate returns every error at
// once, one line each naming the key to fix.
package runconfig
