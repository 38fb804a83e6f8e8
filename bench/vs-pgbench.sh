#!/usr/bin/env bash
# pgarena vs pgbench, side by side on one server, alternating (ABBA) rounds.
#
#   bench/vs-pgbench.sh            # 3 rounds, 30 s runs, 8 clients, init at scale 50
#   ROUNDS=1 DURATION=10 INIT_SCALE=10 bench/vs-pgbench.sh   # a quick look
#
# Prints, per case, the median tps of each tool, the tps ratio
# (pgarena / pgbench, higher is better for pgarena), the client CPU
# (user+sys of the client process) per transaction ratio (lower is
# better), and for init the median wall time ratio (lower is better).
# Both tools use the same protocol (simple), clients, threads and database.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-30}
CLIENTS=${CLIENTS:-8}
JOBS=${JOBS:-2}
SCALE=${SCALE:-10}
INIT_SCALE=${INIT_SCALE:-50}
OUT=${OUT:-bench/results/vs-pgbench-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

. bench/lib.sh
start_cluster vs-pgbench --max-connections 100
# pgbench of the same installation as the server (Debian's /usr/bin/pgbench is a wrapper).
echo "server: $("$PGBIN/postgres" --version 2>/dev/null || echo unknown); client host: $(nproc) cores; pgbench: $("$PGBENCH" --version)"
echo "results: $OUT"
: >"$OUT"

measure() { python3 bench/measure.py "$@" | tee -a "$OUT"; }

run_pair() { # case round pgbench-args pgarena-args
	local case=$1 round=$2 pb=$3 pa=$4
	local a=(measure "$case pgbench" -- "$PGBENCH" -n $pb -c "$CLIENTS" -j "$JOBS" -T "$DURATION" -M simple)
	local b=(measure "$case pgarena" -- "$PGARENA" run tpcb $pa -c "$CLIENTS" -j "$JOBS" -T "$DURATION" -M simple -P 0 --dsn "$DSN" --results "$RESULTS" --json)
	if ((round % 2)); then "${b[@]}"; "${a[@]}"; else "${a[@]}"; "${b[@]}"; fi
}

echo "== init: pgbench -i -s $INIT_SCALE vs pgarena init tpcb -s $INIT_SCALE ($ROUNDS rounds)"
for r in $(seq 1 "$ROUNDS"); do
	ia=(measure "init pgbench" -- "$PGBENCH" -i -q -s "$INIT_SCALE")
	ib=(measure "init pgarena" -- "$PGARENA" init tpcb -s "$INIT_SCALE" --force --dsn "$DSN")
	if ((r % 2)); then "${ib[@]}"; "${ia[@]}"; else "${ia[@]}"; "${ib[@]}"; fi
done

echo "== runs at scale $SCALE, $CLIENTS clients, $JOBS threads, ${DURATION}s each ($ROUNDS rounds)"
"$PGARENA" init tpcb -s "$SCALE" --force --dsn "$DSN" 2>/dev/null
for r in $(seq 1 "$ROUNDS"); do run_pair select-only "$r" "-S" "-S"; done
for r in $(seq 1 "$ROUNDS"); do run_pair tpcb-like "$r" "" ""; done
"$PGARENA" check tpcb --dsn "$DSN"

python3 bench/summarize.py "$OUT"
