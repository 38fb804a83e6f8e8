#!/usr/bin/env bash
# What does sampling cost the server? The same closed-loop run with the
# samplers on (every 1 s) and off, alternating (ABBA), on one cluster.
#
#   bench/sampler-overhead.sh                    # 3 rounds, 20 s, select-only and tpcb-like, 8 clients
#   ROUNDS=1 DURATION=5 bench/sampler-overhead.sh
#
# Prints the median tps with and without samplers and the ratio (1.00 = free).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-8}
SCALE=${SCALE:-10}
OUT=${OUT:-bench/results/sampler-overhead-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

. bench/lib.sh
start_cluster sampler-overhead
"$PGARENA" init tpcb -s "$SCALE" --force --dsn "$DSN" 2>/dev/null

for script in select-only tpcb-like; do
	for r in $(seq 1 "$ROUNDS"); do
		on=(python3 bench/measure.py "$script sampled" -- "$PGARENA" run tpcb -b "$script" -c "$CLIENTS" -T "$DURATION"
			-P 0 --sample-interval 1s --db-host-local --dsn "$DSN" --results "$RESULTS" --json)
		off=(python3 bench/measure.py "$script unsampled" -- "$PGARENA" run tpcb -b "$script" -c "$CLIENTS" -T "$DURATION"
			-P 0 --sample-interval 0 --dsn "$DSN" --results "$RESULTS" --json)
		if ((r % 2)); then "${on[@]}" | tee -a "$OUT"; "${off[@]}" | tee -a "$OUT"; else "${off[@]}" | tee -a "$OUT"; "${on[@]}" | tee -a "$OUT"; fi
	done
done
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    script, mode = r["label"].rsplit(" ", 1)
    by.setdefault(script, {}).setdefault(mode, []).append(r["tps"])
print()
print(f"{'script':<12} {'unsampled tps':>14} {'sampled tps':>12} {'ratio':>7}")
for script, m in by.items():
    a, b = statistics.median(m["unsampled"]), statistics.median(m["sampled"])
    print(f"{script:<12} {a:>14.1f} {b:>12.1f} {b / a:>7.3f}")
PY
