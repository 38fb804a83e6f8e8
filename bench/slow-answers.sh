#!/usr/bin/env bash
# One client waiting on slow answers, beside pgbench: a script of one
# `SELECT pg_sleep(S)` (SLEEPS, in ms) at -c 1, and select-only at 1 and 2
# clients (the fast answers), -M prepared, alternating the tools each round.
# Counts come from `perf stat` over the whole process (every thread) at -t TX
# and -t 3*TX, so start-up and summary cancel out in the slope: system calls
# (raw_syscalls:sys_enter), context switches (voluntary and involuntary) and
# CPU time (task-clock) per transaction. Then the latency of the 3 ms
# statement: p99.9 of pgbench's -l log against pgarena's own.
#
#   bench/slow-answers.sh
#   PGARENA_BINS="main=/tmp/pgarena-main new=bin/pgarena" ROUNDS=3 bench/slow-answers.sh
#   SLEEPS="3" CASES=slow bench/slow-answers.sh
#   PGARENA_FLAGS="--sample-interval 0" bench/slow-answers.sh   # without the server and host samplers
#   HOST=127.0.0.1 bench/slow-answers.sh   # over TCP (default: the cluster's unix socket)
#
# Counts do not depend on the host's load much; CPU time does (a shared
# host's CPU per transaction is indicative only): each line records the load
# average. Prints medians and each tool's ratio to pgbench.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SLEEPS=${SLEEPS:-"1 3 10"}      # ms, the slow statements
CASES=${CASES:-"slow fast latency"}
TX_SLOW=${TX_SLOW:-200}         # the shorter run's transactions of a slow case
TX_FAST=${TX_FAST:-4000}        # ... of a fast case, per client
LATENCY_SECONDS=${LATENCY_SECONDS:-10}
OUT=${OUT:-bench/results/slow-answers-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
read -ra FLAGS <<<"${PGARENA_FLAGS:-}" # more flags for every pgarena run

. bench/lib.sh
declare -A BIN=([pgarena]=$PGARENA)
if [[ -n ${PGARENA_BINS:-} ]]; then
	BIN=()
	for kv in $PGARENA_BINS; do BIN[${kv%%=*}]=${kv#*=}; done
fi
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf) and root" >&2; exit 2; }
start_cluster slow-answers --pg-set synchronous_commit=off
[[ -z ${HOST:-} ]] || DSN="host=$HOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
"$PGARENA" init tpcb --scale 1 --force --dsn "$DSN" >/dev/null
for s in $SLEEPS; do
	printf 'SELECT pg_sleep(%s);\n' "$(python3 -c "print($s / 1000)")" >"$RESULTS/sleep$s.sql"
done
echo "results: $OUT (host ${HOST:-$PGHOST}; load average: $(cut -d' ' -f1-3 /proc/loadavg))"
load() { cut -d' ' -f1 /proc/loadavg; }

# command TOOL CASE CLIENTS TX: the command line of one run
command_of() {
	local tool=$1 case=$2 c=$3 tx=$4
	local pg=(tpcb -S) pb=(-S)
	if [[ $case == sleep* ]]; then
		pg=(script -f "$RESULTS/$case.sql") pb=(-f "$RESULTS/$case.sql")
	fi
	if [[ $tool == pgbench ]]; then
		CMD=("$PGBENCH" -n "${pb[@]}" -c "$c" -j "$c" -t "$tx" -M prepared "$DSN")
	else
		CMD=("${BIN[$tool]}" run "${pg[@]}" -c "$c" -j "$c" -t "$tx" -M prepared -P 0 --dsn "$DSN" --results "$RESULTS" "${FLAGS[@]}")
	fi
}

# counts TOOL CASE CLIENTS TX: "syscalls context-switches task-clock-ms" of one run
counts() {
	command_of "$@"
	perf stat -x, -o "$RESULTS/perf.txt" -e raw_syscalls:sys_enter,context-switches,task-clock -- "${CMD[@]}" >/dev/null 2>&1
	awk -F, '$3 == "raw_syscalls:sys_enter" {s = $1} $3 == "context-switches" {c = $1} $3 == "task-clock" {t = $1}
		END {print s, c, t}' "$RESULTS/perf.txt"
}

# slope TOOL CASE CLIENTS TX: one JSON line, per transaction between -t TX and -t 3*TX
slope() {
	local a b
	a=$(counts "$@")
	b=$(counts "$1" "$2" "$3" $((3 * $4)))
	python3 - "$1" "$2" "$3" "$4" "$a" "$b" "$(load)" <<-'PY' | tee -a "$OUT"
	import json, sys
	tool, case, c, tx, a, b, load = sys.argv[1:]
	a, b = [list(map(float, x.split())) for x in (a, b)]
	n = 2 * int(tx) * int(c)
	print(json.dumps({"tool": tool, "case": case, "clients": int(c),
	                  "syscalls_per_tx": round((b[0] - a[0]) / n, 3), "cs_per_tx": round((b[1] - a[1]) / n, 3),
	                  "cpu_us_per_tx": round((b[2] - a[2]) * 1000 / n, 2), "load": float(load)}))
	PY
}

# latency TOOL: one JSON line, p99.9 of the 3 ms statement over LATENCY_SECONDS
latency() {
	local tool=$1 dir
	dir=$(mktemp -d -p "$RESULTS")
	if [[ $tool == pgbench ]]; then
		(cd "$dir" && "$PGBENCH" -n -f "$RESULTS/sleep3.sql" -c 1 -j 1 -T "$LATENCY_SECONDS" -M prepared -l "$DSN" >/dev/null 2>&1)
		python3 - "$dir" "$(load)" <<-'PY' | tee -a "$OUT"
		import glob, json, sys
		lat = sorted(int(l.split()[2]) for f in glob.glob(sys.argv[1] + "/pgbench_log.*") for l in open(f))
		q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] / 1000
		print(json.dumps({"tool": "pgbench", "case": "latency sleep3", "transactions": len(lat),
		                  "p99_ms": q(0.99), "p999_ms": q(0.999), "max_ms": lat[-1] / 1000, "load": float(sys.argv[2])}))
		PY
	else
		python3 bench/measure.py "$tool" -- "${BIN[$tool]}" run script -f "$RESULTS/sleep3.sql" -c 1 -j 1 \
			-T "${LATENCY_SECONDS}s" -M prepared -P 0 --dsn "$DSN" --results "$RESULTS" "${FLAGS[@]}" |
			python3 -c 'import json, sys
d = json.loads(sys.stdin.read()); l = float(sys.argv[1])
print(json.dumps({"tool": d["label"], "case": "latency sleep3", "p99_ms": d.get("p99_ms"), "p999_ms": d.get("p999_ms"), "max_ms": d.get("max_ms"), "load": l}))' "$(load)" |
			tee -a "$OUT"
	fi
}

tools=("${!BIN[@]}" pgbench)
for round in $(seq "$ROUNDS"); do
	order=("${tools[@]}")
	((round % 2)) || order=($(printf '%s\n' "${tools[@]}" | tac))
	for t in "${order[@]}"; do
		for case in $CASES; do
			case $case in
			slow) for s in $SLEEPS; do slope "$t" "sleep$s" 1 "$TX_SLOW"; done ;;
			fast) for c in 1 2; do slope "$t" select-only "$c" "$TX_FAST"; done ;;
			latency) latency "$t" ;;
			esac
		done
	done
done

python3 - "$OUT" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
med = {}
for r in rows:
    key = (r["case"], r.get("clients", 1))
    for m in ("syscalls_per_tx", "cs_per_tx", "cpu_us_per_tx", "p999_ms"):
        if r.get(m) is not None:
            med.setdefault((key, r["tool"], m), []).append(r[m])
med = {k: st.median(v) for k, v in med.items()}
tools = sorted({k[1] for k in med} - {"pgbench"})
print(f"\nmedians of {sys.argv[1]} (tool / pgbench; context switches: tool - pgbench)")
for key in sorted({k[0] for k in med}):
    for m in ("cpu_us_per_tx", "syscalls_per_tx", "cs_per_tx", "p999_ms"):
        b = med.get((key, "pgbench", m))
        if b is None:
            continue
        line = f"{key[0]:15} -c {key[1]}  {m:16} pgbench {b:9.3f}"
        for t in tools:
            v = med.get((key, t, m))
            if v is not None:
                rel = f"{v - b:+.2f}" if m == "cs_per_tx" else f"{v / b:.2f}x" if b else "-"
                line += f"  {t} {v:9.3f} ({rel})"
        print(line)
PY
