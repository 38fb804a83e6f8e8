#!/usr/bin/env bash
# Two pgarena binaries side by side on one server, alternating (ABBA), to
# show that a change costs nothing: tpcb-like and select-only, 8 clients.
#
#   git worktree add /tmp/old REV && (cd /tmp/old && go build -o /tmp/pgarena-old ./cmd/pgarena)
#   OLD=/tmp/pgarena-old bench/ab-binaries.sh       # NEW: this checkout's build
#
# Prints the median tps and client CPU per transaction of each, and ratios
# new/old.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?OLD=path of the pgarena binary to compare against}"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
OUT=${OUT:-bench/results/ab-binaries-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
. bench/lib.sh
start_cluster ab-binaries --max-connections 100
"$PGARENA" init tpcb -s 10 --dsn "$DSN" >/dev/null 2>&1
echo "old: $OLD ($("$OLD" version)); new: $PGARENA ($("$PGARENA" version)); results: $OUT"
measure() { python3 bench/measure.py "$@" | tee -a "$OUT"; }
for round in $(seq "$ROUNDS"); do
	for case in "tpcb-like:" "select-only:-S"; do
		name=${case%%:*} flag=${case#*:}
		old=(measure "$name old" -- "$OLD" run tpcb $flag -c 8 -j 2 -T "$DURATION" -M simple -P 0 --dsn "$DSN" --results "$RESULTS" --json)
		new=(measure "$name new" -- "$PGARENA" run tpcb $flag -c 8 -j 2 -T "$DURATION" -M simple -P 0 --dsn "$DSN" --results "$RESULTS" --json)
		if ((round % 2)); then "${old[@]}"; "${new[@]}"; else "${new[@]}"; "${old[@]}"; fi
	done
done
python3 - "$OUT" <<'PY'
import statistics as st, sys
sys.path.insert(0, "bench")
from medians import load
runs = load(sys.argv[1])
print(f"{'case':12} {'metric':20} {'old':>10} {'new':>10} {'new/old':>8}")
for case in ("tpcb-like", "select-only"):
    o, n = runs[case + " old"], runs[case + " new"]
    for metric, f in (("tps (median)", lambda x: x["tps"]), ("client CPU us/tx", lambda x: 1e6 * x["cpu_s"] / x["transactions"])):
        a, b = st.median(map(f, o)), st.median(map(f, n))
        print(f"{case:12} {metric:20} {a:10.1f} {b:10.1f} {b / a:8.3f}")
PY
