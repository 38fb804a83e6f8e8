#!/usr/bin/env bash
# Which replication keeps up: tpcb-like on an embedded primary with a local
# replica of each kind, a client sweep per kind, raw against sustainable tps
# (committed transactions / (run time + the replica's catch-up time)), the
# published method of the streaming/pglogical/slony/londiste comparison.
#
#   bench/replication.sh                                   # full: 2 min per step
#   DURATION=2 SCALE=1 CLIENTS=1,2 bench/replication.sh    # a quick check
#
# Slony and londiste are not started here: run them yourself and use
#   pgarena run tpcb -c ... --dsn "$PRIMARY" --replica-dsn "$REPLICA"
# (replicating the table pgarena_heartbeat like the benchmark's tables).
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-120}
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-1,2,4,8,16}
KINDS=${KINDS:-streaming logical pglogical}
OUT=${OUT:-bench/results/replication-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
. bench/lib.sh
trap 'rm -rf "$RESULTS"' EXIT
: >"$OUT"
echo "tpcb-like, scale $SCALE, clients $CLIENTS, $DURATION s per step; results: $OUT"
for kind in $KINDS; do
	"$PGARENA" run tpcb -s "$SCALE" -c "$CLIENTS" -T "$DURATION" -P 0 --replica "$kind" \
		--label "replica $kind" --results "$RESULTS" --json 2>/dev/null |
		python3 -c 'import json, sys; s = json.load(sys.stdin); s["kind"] = sys.argv[1]; print(json.dumps(s))' "$kind" >>"$OUT"
done
python3 - "$OUT" <<'PY'
import json, sys
print(f"{'replication':12} {'clients':>7} {'tps':>10} {'sustainable':>12} {'ratio':>6} {'catch-up s':>10} {'lag max s':>9}")
for line in open(sys.argv[1]):
    s = json.loads(line)
    for st in s.get("steps") or [s]:
        r = st.get("replication")
        if not r:
            print(f"{s['kind']:12} {st['clients']:7} {st['tps']:10.1f} {'-':>12}")
            continue
        lag = max(x["lag_max_s"] for x in r["replicas"])
        mark = "" if r["caught_up"] else " (did not catch up: at most)"
        print(f"{s['kind']:12} {st['clients']:7} {st['tps']:10.1f} {r['sustainable_tps']:12.1f} "
              f"{r['sustainable_ratio']:6.3f} {r['catch_up_s']:10.2f} {lag:9.2f}{mark}")
PY
