#!/usr/bin/env bash
# --agents N against a single process on one machine: tps and the clients'
# CPU time (user + system of pgarena and its agents, from /usr/bin/time) per
# committed transaction, at CLIENTS clients, closed loop, tpcb select-only.
# The merge runs inside the measured process tree, so its cost is included.
#
#   bench/agents.sh                              # 1,000 clients, agents 1 2 4, 60 s each
#   CLIENTS=8 AGENTS="1 2" TIME=3s SCALE=1 bench/agents.sh   # a quick check
#
# One JSON line per case goes to bench/results/agents-*.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/agents-$(date -u +%Y%m%d-%H%M%S).jsonl}
CLIENTS=${CLIENTS:-1000}
AGENTS=${AGENTS:-1 2 4}
TIME=${TIME:-60s}
SCALE=${SCALE:-10}
. bench/lib.sh
start_cluster bench-agents --max-connections $((CLIENTS + 50))
"$PGARENA" init tpcb -s "$SCALE" --dsn "$DSN" >/dev/null

for n in $AGENTS; do
	extra=()
	label=single
	if [ "$n" -gt 1 ]; then
		extra=(--agents "$n")
		label=agents-$n
	fi
	cpu=$(mktemp)
	/usr/bin/time -f '%U %S' -o "$cpu" "$PGARENA" run tpcb -S -c "$CLIENTS" -T "$TIME" -P 0 --sample-interval 0 \
		--dsn "$DSN" --results "$RESULTS" --label "$label" "${extra[@]}" >/dev/null 2>&1
	read -r user sys <"$cpu"
	rm -f "$cpu"
	"$PGARENA" show last --results "$RESULTS" --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
n, user, sys_, label, clients = sys.argv[1:6]
cpu = float(user) + float(sys_)
tx = s["transactions"]
row = {"case": label, "agents": int(n), "clients": int(clients), "tps": s["tps"], "transactions": tx,
       "status": s["status"], "client_cpu_s": round(cpu, 3), "client_cpu_us_per_tx": round(1e6 * cpu / tx, 2) if tx else None,
       "p99_ms": s["latency_ms"]["p99"]}
print(json.dumps(row))
' "$n" "$user" "$sys" "$label" "$CLIENTS" | tee -a "$OUT"
done
