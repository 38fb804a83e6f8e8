#!/usr/bin/env bash
# System calls per transaction at ONE client, by call, for pgarena's network
# I/O modes and pgbench, alternating on one local server (select-only,
# -M prepared, unix socket and TCP). Shows where each tool's calls go (see
# docs/benchmarks.md, "Client cost").
#
#   bench/one-client-syscalls.sh
#   ROUNDS=3 TX=5000 bench/one-client-syscalls.sh
#   MEASURE=cpu DURATION=8 bench/one-client-syscalls.sh   # wall clock instead: tps and client CPU
#                                                         # (user+sys, bench/measure.py) per transaction
#   MEASURE=tracepoint bench/one-client-syscalls.sh       # calls per transaction counted by perf's
#       raw_syscalls:sys_enter tracepoint (every thread, no stops: strace's ptrace stops slow each
#       call and change how often an answer is already there when it is read), slope between -t TX
#       and -t 10*TX so that start-up and summary cancel out, select-only and tpcb-like (CASES)
#   PGARENA_BIN=/tmp/pgarena-old bench/one-client-syscalls.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-2}
MEASURE=${MEASURE:-syscalls} # or cpu
DURATION=${DURATION:-8}
TX=${TX:-3000}
MODES=${MODES:-"raw blocking"} # --net-io (one client runs on one thread: -j is capped at -c)
CASES=${CASES:-"select-only tpcb-like"} # MEASURE=tracepoint only
OUT=${OUT:-bench/results/one-client-$MEASURE-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

. bench/lib.sh
PGARENA=${PGARENA_BIN:-$PGARENA}
start_cluster one-client-syscalls
"$PGARENA" init tpcb --scale 1 --force --dsn "$DSN" >/dev/null
echo "results: $OUT (load average: $(cut -d' ' -f1-3 /proc/loadavg))"

count() { # label strace-output: one JSON line, calls per transaction
	python3 - "$1" "$2" "$TX" <<-'PY' | tee -a "$OUT"
	import json, sys
	label, trace, tx = sys.argv[1], sys.argv[2], int(sys.argv[3])
	calls = {}
	for line in open(trace):
	    f = line.split()
	    if len(f) >= 5 and f[-1] not in ("syscall", "total") and f[3].isdigit():
	        calls[f[-1]] = int(f[3])
	top = sorted(calls.items(), key=lambda kv: -kv[1])[:6]
	print(json.dumps({"label": label, "per_tx": round(sum(calls.values()) / tx, 2),
	                  "top": {k: round(v / tx, 2) for k, v in top}}))
	PY
}

if [[ $MEASURE == cpu ]]; then
	per_tx() { python3 -c 'import json,sys
d = json.loads(sys.stdin.read()); n = d["transactions"]
d.update(cpu_us_per_tx=round(d["cpu_s"] / n * 1e6, 2), user_us_per_tx=round(d["user_s"] / n * 1e6, 2))
print(json.dumps(d))' | tee -a "$OUT"; }
	for transport in unix tcp; do
		host=$PGHOST
		[[ $transport == tcp ]] && host=127.0.0.1
		for r in $(seq 1 "$ROUNDS"); do
			for m in $MODES; do
				python3 bench/measure.py "$transport pgarena $m" -- "$PGARENA" run tpcb -S -c 1 -j 1 --net-io "$m" \
					-T "${DURATION}s" -M prepared -P 0 --json --results "$RESULTS" \
					--dsn "host=$host port=$PGPORT user=$PGUSER dbname=$PGDATABASE" | per_tx
			done
			python3 bench/measure.py "$transport pgbench" -- "$PGBENCH" -n -S -c 1 -j 1 -T "$DURATION" -M prepared \
				-h "$host" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE" | per_tx
		done
	done
	exit 0
fi

if [[ $MEASURE == tracepoint ]]; then
	command -v perf >/dev/null || { echo "MEASURE=tracepoint needs perf (apt-get install linux-perf) and root" >&2; exit 2; }
	calls() { perf stat -x, -e raw_syscalls:sys_enter "$@" 2>&1 >/dev/null | awk -F, '/raw_syscalls:sys_enter/ {print $1}'; }
	slope() { # label calls-at-TX calls-at-10*TX
		python3 -c 'import json,sys; a, b, tx = map(int, sys.argv[2:5])
print(json.dumps({"label": sys.argv[1], "per_tx": round((b - a) / (9 * tx), 3), "fixed": round(a - (b - a) / 9)}))' \
			"$1" "$2" "$3" "$TX" | tee -a "$OUT"
	}
	for transport in unix tcp; do
		host=$PGHOST
		[[ $transport == tcp ]] && host=127.0.0.1
		for case in $CASES; do
			sel=()
			[[ $case == select-only ]] && sel=(-S)
			for r in $(seq 1 "$ROUNDS"); do
				for m in $MODES; do
					pga=("$PGARENA" run tpcb "${sel[@]}" -c 1 -j 1 --net-io "$m" -M prepared -P 0 --sample-interval 0
						--interval 1h --results "$RESULTS" --dsn "host=$host port=$PGPORT user=$PGUSER dbname=$PGDATABASE")
					slope "$transport $case pgarena $m" "$(calls "${pga[@]}" -t "$TX")" "$(calls "${pga[@]}" -t $((10 * TX)))"
				done
				pgb=("$PGBENCH" -n "${sel[@]}" -c 1 -j 1 -M prepared -h "$host" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE")
				slope "$transport $case pgbench" "$(calls "${pgb[@]}" -t "$TX")" "$(calls "${pgb[@]}" -t $((10 * TX)))"
			done
		done
	done
	exit 0
fi

trace=$(mktemp)
for transport in unix tcp; do
	host=$PGHOST
	[[ $transport == tcp ]] && host=127.0.0.1
	for r in $(seq 1 "$ROUNDS"); do
		for m in $MODES; do
			strace -f -c -o "$trace" "$PGARENA" run tpcb -S -c 1 -j 1 --net-io "$m" -t "$TX" -M prepared \
				-P 0 --sample-interval 0 --interval 1h --results "$RESULTS" \
				--dsn "host=$host port=$PGPORT user=$PGUSER dbname=$PGDATABASE" >/dev/null 2>&1
			count "$transport pgarena $m" "$trace"
		done
		strace -f -c -o "$trace" "$PGBENCH" -n -S -c 1 -j 1 -t "$TX" -M prepared -h "$host" -p "$PGPORT" \
			-U "$PGUSER" "$PGDATABASE" >/dev/null 2>&1
		count "$transport pgbench" "$trace"
	done
done
rm -f "$trace"
