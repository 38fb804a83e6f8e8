#!/usr/bin/env bash
# Poolers side by side: the same open-loop ramp of tpcb-like transactions
# straight to the server and through each pooler pgarena starts (--via), at
# several client counts; each run ends when the autostop rule fires. The
# figure of merit is the highest rate held for the rule's window without
# meeting it (pgarena's load limits), per target and client count.
#
#   bench/poolers.sh                                  # 50 200 500 2000 clients, 2-minute ramps
#   CLIENTS="8" SCALE=1 DURATION=4 SCHEDULE='line(10,300,4s)' bench/poolers.sh   # a smoke test
#
# Knobs: TARGETS (direct pgbouncer:transaction pgbouncer:session haproxy
# pgpool), CLIENTS, POOL (pgbouncer's pool size, 40), SCALE (10), SCHEDULE
# (line(100,20000,120s)), AUTOSTOP (p95>100ms for 5s), DURATION (the ramp's
# length, s). pgbouncer in session mode and pgpool give every client its own
# server connection for its whole session: with more clients than POOL,
# pgbouncer:session clients queue until a session ends (they do not) and the
# rule fires at once; that is the point of comparing it.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=${TARGETS:-"direct pgbouncer:transaction pgbouncer:session haproxy pgpool"}
CLIENTS=${CLIENTS:-"50 200 500 2000"}
POOL=${POOL:-40}
SCALE=${SCALE:-10}
DURATION=${DURATION:-120}
SCHEDULE=${SCHEDULE:-"line(100,20000,${DURATION}s)"}
AUTOSTOP=${AUTOSTOP:-"p95>100ms for 5s"}
OUT=${OUT:-bench/results/poolers-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

most=0
for c in $CLIENTS; do ((c > most)) && most=$c; done
. bench/lib.sh
# pgpool and haproxy keep a server connection per client, plus the pooler's spares.
start_cluster poolers --max-connections $((most + 50))
"$PGARENA" init tpcb -s "$SCALE" --force --dsn "$DSN" >/dev/null 2>&1
echo "pgarena $("$PGARENA" version); schedule $SCHEDULE; autostop '$AUTOSTOP'; pool $POOL; results: $OUT"

for clients in $CLIENTS; do
	for tgt in $TARGETS; do
		via=()
		if [[ $tgt != direct ]]; then
			via=(--via "$tgt")
			[[ $tgt == pgbouncer:* ]] && via+=(--pool-size "$POOL")
		fi
		err=$(mktemp)
		code=0
		"$PGARENA" run tpcb -c "$clients" --schedule "$SCHEDULE" --autostop "$AUTOSTOP" -T "$DURATION" -P 0 \
			"${via[@]}" --dsn "$DSN" --results "$RESULTS" --json >/dev/null 2>"$err" || code=$?
		python3 - "$tgt" "$clients" "$code" "$err" <<'PY' | tee -a "$OUT"
import json, re, sys
tgt, clients, code, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
text = open(path).read()
def rate(pattern):
    m = re.search(pattern + r".*?: ([0-9.]+) tx/s", text)
    return float(m.group(1)) if m else None
row = {"target": tgt, "clients": clients, "exit": code,
       "held": rate(r"highest rate held"),
       "reached": rate(r"(?:rate reached when autostop fired|target rate at the end)"),
       "autostopped": code == 3}
if code not in (0, 3):
    row["error"] = text.strip().splitlines()[-1] if text.strip() else ""
print(json.dumps(row))
PY
		rm -f "$err"
	done
done
python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
targets = list(dict.fromkeys(r["target"] for r in rows))
clients = sorted({r["clients"] for r in rows})
print()
print("highest rate held (tx/s) for the autostop window without meeting it; '-' none, '!' the run failed")
print(f"{'target':<24}" + "".join(f"{c:>12}" for c in clients))
for t in targets:
    cells = []
    for c in clients:
        r = next((r for r in rows if r["target"] == t and r["clients"] == c), None)
        if r is None or r.get("error") is not None:
            cells.append("!")
        elif r["held"] is None:
            cells.append("-")
        else:
            cells.append(f"{r['held']:.0f}")
    print(f"{t:<24}" + "".join(f"{x:>12}" for x in cells))
PY
