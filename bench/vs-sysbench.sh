#!/usr/bin/env bash
# pgarena vs sysbench 1.0, side by side on one server, alternating (ABBA) rounds.
#
#   bench/vs-sysbench.sh           # 3 rounds, 30 s runs, 8 clients, 16 tables of 100000 rows
#   ROUNDS=1 DURATION=5 TABLES=2 TABLE_SIZE=10000 bench/vs-sysbench.sh   # a quick look
#   MODE=syscalls EVENTS=20000 bench/vs-sysbench.sh   # system calls per transaction (strace -f -c)
#   PGARENA_BIN=/tmp/pgarena-old bench/vs-sysbench.sh  # measure another pgarena build
#
# Runs: init (sysbench prepare vs pgarena init, wall time), then
# oltp_read_write and oltp_point_select at $CLIENTS clients: the median tps
# of each tool, the tps ratio (pgarena / sysbench, higher is better for
# pgarena) and the client CPU (user+sys of the client process and its
# children, from getrusage in bench/measure.py) per transaction ratio (lower
# is better). Both tools use prepared statements (sysbench's pgsql driver
# always prepares; pgarena's sysbench default is -M prepared), the same
# tables, clients and server. sysbench uses one thread per client;
# pgarena uses $JOBS OS threads for all clients.
#
# MODE=syscalls counts the system calls of each client process (strace -f -c)
# over a fixed number of events, $EVENTS in total for each tool: a number
# that does not depend on how busy the machine is.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${MODE:-runs}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-30}
CLIENTS=${CLIENTS:-8}
JOBS=${JOBS:-2}
TABLES=${TABLES:-16}
TABLE_SIZE=${TABLE_SIZE:-100000}
EVENTS=${EVENTS:-20000}
TESTS=${TESTS:-oltp_read_write oltp_point_select}
SYSBENCH=${SYSBENCH:-sysbench}
OUT=${OUT:-bench/results/vs-sysbench-$MODE-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

. bench/lib.sh
PGARENA=${PGARENA_BIN:-$PGARENA} # another pgarena build
start_cluster vs-sysbench --max-connections 100
SB=(--db-driver=pgsql --pgsql-host="$PGHOST" --pgsql-port="$PGPORT" --pgsql-user="$PGUSER"
	--pgsql-db="$PGDATABASE" --tables="$TABLES" --table-size="$TABLE_SIZE")
echo "server: $(psql -XAtc 'select version()' 2>/dev/null | cut -d, -f1 || echo unknown); client host: $(nproc) cores; $("$SYSBENCH" --version)"
echo "results: $OUT"
: >"$OUT"

measure() { python3 bench/measure.py "$@" | tee -a "$OUT"; }

if [[ $MODE == syscalls ]]; then
	command -v strace >/dev/null || { echo "strace is needed for MODE=syscalls" >&2; exit 2; }
	"$PGARENA" init sysbench --tables "$TABLES" --table-size "$TABLE_SIZE" --force --dsn "$DSN" 2>/dev/null
	per_client=$((EVENTS / CLIENTS))
	for t in $TESTS; do
		for tool in sysbench pgarena; do
			trace=$(mktemp)
			if [[ $tool == sysbench ]]; then
				out=$(strace -f -c -o "$trace" "$SYSBENCH" "$t" "${SB[@]}" --threads="$CLIENTS" \
					--events=$((per_client * CLIENTS)) --time=0 run 2>&1)
				tx=$(sed -n 's/^ *transactions: *\([0-9]*\).*/\1/p' <<<"$out")
			else
				out=$(strace -f -c -o "$trace" "$PGARENA" run sysbench "$t" -c "$CLIENTS" -j "$JOBS" -t "$per_client" \
					-P 0 --dsn "$DSN" --results "$RESULTS" --json 2>/dev/null)
				tx=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["transactions"])' <<<"$out")
			fi
			python3 - "$t" "$tool" "$tx" "$trace" <<-'PY' | tee -a "$OUT"
			import json, sys
			test, tool, tx, trace = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
			top = {}
			for line in open(trace):
			    f = line.split()
			    if len(f) >= 5 and f[-1] not in ("syscall", "total") and f[3].isdigit():
			        top[f[-1]] = int(f[3])
			total = sum(top.values())
			top = dict(sorted(top.items(), key=lambda kv: -kv[1])[:6])
			print(json.dumps({"test": test, "tool": tool, "transactions": tx, "syscalls": total,
			                  "syscalls_per_tx": round(total / tx, 2), "top": {k: round(v / tx, 2) for k, v in top.items()}}))
			PY
			rm -f "$trace"
		done
	done
	exit 0
fi

echo "== init: sysbench prepare vs pgarena init sysbench, $TABLES tables of $TABLE_SIZE rows ($ROUNDS rounds)"
cleanup() { "$SYSBENCH" oltp_read_write "${SB[@]}" cleanup >/dev/null; }
for r in $(seq 1 "$ROUNDS"); do
	ia=(measure "init sysbench" -- "$SYSBENCH" oltp_read_write "${SB[@]}" --threads="$TABLES" prepare)
	ib=(measure "init pgarena" -- "$PGARENA" init sysbench --tables "$TABLES" --table-size "$TABLE_SIZE" --force --dsn "$DSN")
	if ((r % 2)); then "${ib[@]}"; cleanup; "${ia[@]}"; else cleanup; "${ia[@]}"; "${ib[@]}"; fi
done
"$PGARENA" init sysbench --tables "$TABLES" --table-size "$TABLE_SIZE" --force --dsn "$DSN" 2>/dev/null

echo "== runs: $CLIENTS clients, ${DURATION}s each ($ROUNDS rounds)"
for t in $TESTS; do
	for r in $(seq 1 "$ROUNDS"); do
		a=(measure "$t sysbench" -- "$SYSBENCH" "$t" "${SB[@]}" --threads="$CLIENTS" --time="$DURATION" run)
		b=(measure "$t pgarena" -- "$PGARENA" run sysbench "$t" -c "$CLIENTS" -j "$JOBS" -T "${DURATION}s" -P 0 --dsn "$DSN" --results "$RESULTS" --json)
		if ((r % 2)); then "${b[@]}"; "${a[@]}"; else "${a[@]}"; "${b[@]}"; fi
	done
done
"$PGARENA" check sysbench --dsn "$DSN"

python3 bench/summarize.py "$OUT"
