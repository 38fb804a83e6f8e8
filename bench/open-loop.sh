#!/usr/bin/env bash
# Open-loop accuracy: does pgarena deliver the rate it is asked for?
#
#   bench/open-loop.sh                       # select-only at 1,000 and 20,000 tx/s, 30 s each, Poisson and uniform
#   RATES="1000" DURATION=10 bench/open-loop.sh
#
# For each target rate and arrival process it prints the achieved rate
# (committed tx/s), the ratio to the target, the transactions never started
# (all clients busy), the schedule lag (mean latency − mean service time:
# how late transactions started on average) and pgarena's client CPU per
# transaction. The achieved rate can only match the target while the server
# keeps up: compare with the closed-loop maximum printed first.
set -euo pipefail
cd "$(dirname "$0")/.."

RATES=${RATES:-"1000 20000"}
DURATION=${DURATION:-30}
CLIENTS=${CLIENTS:-32}
SCALE=${SCALE:-10}
OUT=${OUT:-bench/results/open-loop-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

. bench/lib.sh
start_cluster open-loop --max-connections $((CLIENTS + 20))
"$PGARENA" init tpcb -s "$SCALE" --force --dsn "$DSN" 2>/dev/null

common=(-S -M prepared -P 0 --sample-interval 0 --dsn "$DSN" --results "$RESULTS" --json)
echo "== closed loop maximum: $CLIENTS clients, ${DURATION}s"
python3 bench/measure.py "closed max" -- "$PGARENA" run tpcb -c "$CLIENTS" -T "$DURATION" "${common[@]}" | tee -a "$OUT"
for rate in $RATES; do
	for arrival in uniform poisson; do
		python3 bench/measure.py "open $rate $arrival" -- "$PGARENA" run tpcb -R "$rate" --arrival "$arrival" \
			-c "$CLIENTS" -T "$DURATION" "${common[@]}" | tee -a "$OUT"
	done
done
python3 - "$OUT" "$RESULTS" <<'PY'
import json, sys, glob, os
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# Details (target rate, unstarted, latency vs service) come from the runs' summaries.
sums = sorted(glob.glob(os.path.join(sys.argv[2], "*", "summary.json")))
print()
print(f"{'case':<22} {'target':>9} {'achieved':>10} {'ratio':>7} {'unstarted':>9} {'lag ms':>8} {'cpu us/tx':>9}")
for r, path in zip(rows, sums):
    s = json.load(open(path))
    target = s.get("target_rate", 0) or 0
    lag = s["latency_ms"]["avg"] - s["service_ms"]["avg"]
    ratio = f"{s['tps'] / target:.4f}" if target else "-"
    cpu = 1e6 * r["cpu_s"] / max(1, s["transactions"])
    print(f"{r['label']:<22} {target:>9.1f} {s['tps']:>10.1f} {ratio:>7} {s.get('unstarted', 0):>9} {lag:>8.3f} {cpu:>9.1f}")
PY
