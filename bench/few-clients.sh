#!/usr/bin/env bash
# Few clients (-c = -j, each client on a P of its own: netio's Hold) beside
# pgbench on one local server: select-only, tpcb-like and a script whose
# fourth statement takes 1.5 ms (the first held sleep runs out), alternating
# the tools each round.
#
#   bench/few-clients.sh
#   PGARENA_BINS="main=/tmp/pgarena-main after=bin/pgarena" ROUNDS=5 bench/few-clients.sh
#
# Prints, per case and tool, the medians of tps, client CPU per transaction,
# the host's idle share (on a host the client shares with the server, idle
# CPU is time nobody could run: wake-up latency), and pgarena's p99, p99.9
# and max latency.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-4} # seconds per run
CLIENTS=${CLIENTS:-2}
MODE=${MODE:-prepared}
CASES=${CASES:-"select-only tpcb-like slow"}
OUT=${OUT:-bench/results/few-clients-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

. bench/lib.sh
declare -A BIN=([pgarena]=$PGARENA)
if [[ -n ${PGARENA_BINS:-} ]]; then
	BIN=()
	for kv in $PGARENA_BINS; do BIN[${kv%%=*}]=${kv#*=}; done
fi
start_cluster few-clients --pg-set synchronous_commit=off
"$PGARENA" init tpcb --scale 10 --force --dsn "$DSN" >/dev/null
printf 'select 1;\nselect 1;\nselect 1;\nselect pg_sleep(0.0015);\n' >"$RESULTS/slow.sql"
echo "results: $OUT (-c $CLIENTS -j $CLIENTS -M $MODE, ${DURATION} s runs; load average: $(cut -d' ' -f1-3 /proc/loadavg))"

run() { # case tool
	local args=(-c "$CLIENTS" -j "$CLIENTS" -M "$MODE")
	local pg=(tpcb) pb=()
	case $1 in
	select-only) pg+=(-S) pb=(-S) ;;
	tpcb-like) ;;
	slow) pg=(script -f "$RESULTS/slow.sql") pb=(-f "$RESULTS/slow.sql") ;;
	esac
	if [[ $2 == pgbench ]]; then
		python3 bench/measure.py "$1 pgbench" -- "$PGBENCH" -n "${pb[@]}" "${args[@]}" -T "$DURATION" "$DSN"
	else
		python3 bench/measure.py "$1 $2" -- "${BIN[$2]}" run "${pg[@]}" "${args[@]}" -T "${DURATION}s" -P 0 \
			--dsn "$DSN" --results "$RESULTS"
	fi
}
tools=("${!BIN[@]}" pgbench)
for round in $(seq "$ROUNDS"); do
	for c in $CASES; do
		order=("${tools[@]}")
		((round % 2)) || order=($(printf '%s\n' "${tools[@]}" | tac))
		for t in "${order[@]}"; do run "$c" "$t" | tee -a "$OUT"; done
	done
done
python3 bench/medians.py "$OUT"
