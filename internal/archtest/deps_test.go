package archtest

// The import allow list: for every package of the module, everything it may
// reach through its non-test files, directly or through other module
// packages (checked transitively, as cockroach's pkg/workload/dep_test.go
// does). The standard library is always allowed. An entry names module
// packages by their path in the module ("internal/metrics"; "internal/..."
// covers every package under internal) and third-party code by its module
// (pgx covers pgconn, pgproto3 and pgtype). A new import, or a new package,
// fails TestImportAllowList until its entry here says so: a dependency is
// a decision made in review, not a default.
var allowed = map[string][]string{
	// main and the command line: everything but the test helpers.
	"cmd/pgarena":  {"internal/...", cobra, pflag, pgx, hdr, xsync, xsys, ximage, yaml},
	"internal/cli": {"internal/...", cobra, pflag, pgx, hdr, xsync, xsys, ximage, yaml},

	// one run end to end, and what it runs
	"internal/session": sessionReach,
	"internal/driver":  {"internal/await", "internal/clock", "internal/gostack", "internal/lazy", "internal/metrics", "internal/pgerr", "internal/pgtext", "internal/target", "internal/workload", pflag, pgx, hdr},
	"internal/loader":  {"internal/await", "internal/clock", "internal/lazy", "internal/pgerr", "internal/pgtext", "internal/target", "internal/workload", pflag, pgx, xsync},
	"internal/sampler": {"internal/clock", "internal/lazy", "internal/metrics", "internal/pgerr", "internal/sampled", "internal/store", pgx, hdr, xsys},
	"internal/sampled": {},
	"internal/netio":   {pgx, xsys},
	// the one-round-trip statements that read behind pgconn's back
	"internal/roundtrip": {pgx},
	"internal/clock":     {},
	"internal/await":     {"internal/clock"},
	"internal/lazy":      {},
	"internal/gostack":   {},
	"internal/metrics":   {"internal/lazy", "internal/pgerr", pgx, hdr},
	"internal/pgerr":     {pgx},
	// the process's Ps at its start (its init)
	"internal/startprocs": {},

	// --out: outputs of a run beside its results directory (the registry and one package per kind)
	"internal/output":            with(sessionReach, "internal/session"),
	"internal/output/all":        with(sessionReach, "internal/output/...", "internal/session", "internal/report", "internal/report/htmlw", ximage),
	"internal/output/jsonl":      with(sessionReach, "internal/output", "internal/session"),
	"internal/output/csv":        with(sessionReach, "internal/output", "internal/session", "internal/report", "internal/report/htmlw", ximage),
	"internal/output/prometheus": with(sessionReach, "internal/output", "internal/session"),
	"internal/output/postgres":   with(sessionReach, "internal/output", "internal/session"),

	// targets: a target knows nothing of workloads, the driver or the store
	"internal/target":         {"internal/await", "internal/clock", "internal/lazy", "internal/pgerr", "internal/pgtext", pgx},
	"internal/target/local":   {"internal/await", "internal/clock", "internal/lazy", "internal/pgerr", "internal/pgtext", "internal/target", pgx},
	"internal/target/pooler":  {"internal/await", "internal/clock", "internal/lazy", "internal/pgerr", "internal/pgtext", "internal/target", "internal/target/local", pgx},
	"internal/target/replica": {"internal/await", "internal/clock", "internal/lazy", "internal/metrics", "internal/pgerr", "internal/pgtext", "internal/target", "internal/target/local", pgx, hdr},

	// workloads own SQL, never time, measurement or storage
	"internal/workload":            {"internal/pgtext", pflag, pgx},
	"internal/workload/all":        {"internal/lazy", "internal/pgtext", "internal/workload/...", "internal/randgen", "internal/roundtrip", pflag, pgx},
	"internal/workload/analytic":   {"internal/pgtext", "internal/workload", pflag, pgx},
	"internal/workload/chbench":    {"internal/lazy", "internal/pgtext", "internal/workload", "internal/workload/analytic", "internal/workload/tpcc", "internal/randgen", pflag, pgx},
	"internal/workload/script":     {"internal/lazy", "internal/pgtext", "internal/workload", "internal/roundtrip", pflag, pgx},
	"internal/workload/sysbench":   {"internal/pgtext", "internal/workload", "internal/roundtrip", pflag, pgx},
	"internal/workload/tpcb":       {"internal/lazy", "internal/pgtext", "internal/workload", "internal/workload/script", "internal/roundtrip", pflag, pgx},
	"internal/workload/tpcc":       {"internal/lazy", "internal/pgtext", "internal/workload", "internal/randgen", pflag, pgx},
	"internal/workload/tpch":       {"internal/lazy", "internal/pgtext", "internal/workload", "internal/workload/analytic", "internal/workload/tpch/dbgen", "internal/workload/tpch/qgen", pflag, pgx},
	"internal/workload/tpch/dbgen": {"internal/lazy"},
	"internal/workload/tpch/qgen":  {"internal/lazy", "internal/workload/tpch/dbgen"},
	"internal/workload/ycsb":       {"internal/lazy", "internal/pgtext", "internal/workload", pflag, pgx},
	"internal/randgen":             {},

	// results: files on disk, never a database (they reach pgx only
	// through pgerr, whose error classes the results are counted by)
	"internal/store":     {"internal/lazy", "internal/metrics", "internal/pgerr", pgx, hdr, xsys},
	"internal/merge":     {"internal/lazy", "internal/metrics", "internal/pgerr", "internal/store", pgx, hdr, xsys},
	"internal/report":    {"internal/lazy", "internal/metrics", "internal/pgerr", "internal/report/htmlw", "internal/sampled", "internal/store", pgx, hdr, xsys, ximage},
	"internal/serve":     {"internal/lazy", "internal/metrics", "internal/pgerr", "internal/plan", "internal/report", "internal/report/htmlw", "internal/sampled", "internal/store", pgx, hdr, xsys, ximage, yaml},
	"internal/runconfig": with(sessionReach, "internal/output", "internal/session", "internal/target/pooler", yaml),
	"internal/plan":      {"internal/lazy", "internal/metrics", "internal/pgerr", "internal/store", pgx, hdr, xsys, yaml},
	"internal/k8sjob":    {"internal/lazy", yaml},

	// pages written by hand, escaped as html/template would
	"internal/report/htmlw": {},

	// the container image (make image): its own program and builder
	"internal/ociimage": {ggcr},
	"cmd/pgarena-image": {"internal/ociimage", ggcr},

	// tests of the design (no code of its own)
	"internal/archtest": {},

	// test helpers: imported by _test.go files only (TestHelpersOnlyInTests)
	"internal/pgtext":            {pgx},
	"internal/pgtest":            {"internal/await", "internal/clock", "internal/lazy", "internal/pgerr", "internal/pgtext", "internal/target", "internal/target/local", "internal/target/pooler", pgx},
	"internal/golden":            {},
	"internal/waittest":          {"internal/await", "internal/clock"},
	"internal/loader/loadertest": {"internal/await", "internal/clock", "internal/lazy", "internal/loader", "internal/pgerr", "internal/pgtext", "internal/pgtest", "internal/target", "internal/target/local", "internal/target/pooler", "internal/workload", pflag, pgx, xsync},
	"internal/report/reporttest": {"internal/lazy", "internal/metrics", "internal/pgerr", "internal/store", pgx, hdr, xsys},

	// the benchmarks' own programs (not parts of pgarena)
	"bench/floor":           {pgx},
	"bench/memfloor/hello":  {},
	"bench/memfloor/pgconn": {pgx},
	"bench/memfloor/linked": {pgx, yaml},
}

// sessionReach is what internal/session may reach: one run end to end.
var sessionReach = []string{"internal/await", "internal/clock", "internal/driver", "internal/gostack", "internal/lazy", "internal/loader", "internal/metrics", "internal/netio",
	"internal/pgerr", "internal/pgtext", "internal/sampled", "internal/sampler", "internal/store", "internal/target", "internal/target/local",
	"internal/target/replica", "internal/workload", pflag, pgx, hdr, xsync, xsys}

// with is base and more, for entries that build on another's reach.
func with(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

// Third-party modules (go.mod).
const (
	cobra = "github.com/spf13/cobra"
	pflag = "github.com/spf13/pflag"
	pgx   = "github.com/jackc/pgx/v5"
	hdr   = "github.com/HdrHistogram/hdrhistogram-go"
	xsync = "golang.org/x/sync"
	xsys  = "golang.org/x/sys"
	// ximage draws the report's PNG charts (a rasterizer and a fixed font).
	ximage = "golang.org/x/image"
	yaml   = "gopkg.in/yaml.v3"
	ggcr   = "github.com/google/go-containerregistry"
)

// testHelpers are the packages that exist for tests: only _test.go files
// (and other test helpers) may import them. A package named *test other
// than archtest is one too.
var testHelpers = []string{"internal/pgtest", "internal/golden", "internal/loader/loadertest", "internal/report/reporttest", "internal/waittest"}
