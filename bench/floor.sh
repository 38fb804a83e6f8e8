#!/usr/bin/env bash
# The floor of a Go client at many connections (bench/floor: pgbench's
# select-only transaction and nothing else) beside pgbench and pgarena,
# alternating on one local server: tps and client CPU per transaction after
# connecting (floor) or including it (pgbench, pgarena: CPU of the whole
# process). Tells whether a gap to pgbench is the Go runtime's way of
# waiting or pgarena's own (docs/benchmarks.md, "Many clients").
#
#   bench/floor.sh
#   ROUNDS=5 CLIENTS=1000 TX=200 MODES="net readfirst waitfirst loop" bench/floor.sh
#   PGARENA_BINS="main=/tmp/pgarena-main after=bin/pgarena" bench/floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-1000}
TX=${TX:-200}       # per client
THREADS=${THREADS:-1} # -j of every tool
MODES=${MODES:-"net readfirst waitfirst"}
OUT=${OUT:-bench/results/floor-$(date -u +%Y%m%dT%H%M%SZ).txt}

. bench/lib.sh
declare -A BIN=([pgarena]=$PGARENA)
if [[ -n ${PGARENA_BINS:-} ]]; then
	BIN=()
	for kv in $PGARENA_BINS; do BIN[${kv%%=*}]=${kv#*=}; done
fi
FLOOR=$RESULTS/floor
go build -o "$FLOOR" ./bench/floor
ulimit -n $((2 * CLIENTS + 200)) # loop mode keeps a duplicate of each socket
start_cluster floor --max-connections $((CLIENTS + 20)) --pg-set synchronous_commit=off
"$PGARENA" init tpcb --scale 1 --force --dsn "$DSN" >/dev/null
echo "results: $OUT (load average: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$OUT"

cpu_line() { # label tps user sys: one line, CPU per transaction
	echo "$1 $2 $3 $4" | awk -v n=$((CLIENTS * TX)) '{printf "%-10s tps %7.0f  CPU %6.2f us/tx (user %.2f, sys %.2f; whole process)\n", $1, $2, ($3+$4)*1e6/n, $3*1e6/n, $4*1e6/n}'
}

for ((r = 1; r <= ROUNDS; r++)); do
	echo "round $r: $CLIENTS clients, -j $THREADS, $TX transactions each" | tee -a "$OUT"
	for m in $MODES; do
		"$FLOOR" -mode "$m" -c "$CLIENTS" -j "$THREADS" -t "$TX" | tee -a "$OUT"
	done
	out=$( { /usr/bin/time -f "cpu %U %S" "$PGBENCH" -n -S -c "$CLIENTS" -j "$THREADS" -t "$TX" -M simple; } 2>&1)
	cpu_line pgbench "$(grep -m1 '^tps' <<<"$out" | awk '{print $3}')" $(grep '^cpu' <<<"$out" | cut -d' ' -f2-) | tee -a "$OUT"
	for b in "${!BIN[@]}"; do
		out=$( { /usr/bin/time -f "cpu %U %S" "${BIN[$b]}" run tpcb -S -c "$CLIENTS" -j "$THREADS" -t "$TX" -M simple \
			-P 0 --sample-interval 0 --dsn "$DSN" --results "$RESULTS/runs"; } 2>&1)
		cpu_line "$b" "$(grep -m1 '^tps' <<<"$out" | awk '{print $3}')" $(grep '^cpu' <<<"$out" | cut -d' ' -f2-) | tee -a "$OUT"
	done
done
