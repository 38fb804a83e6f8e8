#!/usr/bin/env bash
# pgarena vs go-tpc (TPC-C), side by side on one server, alternating (ABBA) rounds.
#
#   bench/vs-go-tpc.sh             # 3 rounds; loads of 4 and 10 warehouses; 60 s runs, 8 clients, 4 warehouses
#   ROUNDS=1 DURATION=10 WAREHOUSES_LOAD=2 RUN_WAREHOUSES=2 bench/vs-go-tpc.sh   # a quick look
#
# Prints, per case, the medians of each tool and the ratios (pgarena / go-tpc):
#   load W=N   wall time and rows/s (rows counted in the database after each load;
#              goal for rows/s ≥ 3). pgarena's time includes its keys and VACUUM
#              ANALYZE; go-tpc creates its keys before loading and does not vacuum.
#   tpcc       pgarena's NOPM (new orders committed, from the database) against
#              go-tpc's tpmC (new orders per minute counted by its clients,
#              rollbacks included) (goal ≥ 1.5), tps, and client CPU (user+sys of
#              the client process) per transaction (goal ≤ 0.25). "pgarena" is
#              client-side SQL with -M prepared, "pgarena-sp" is --stored-procs.
# go-tpc v1.0.12 is built from the Go module proxy into bench/.bin on first use.
# Both tools connect over TCP to 127.0.0.1 (go-tpc's postgres driver cannot use
# the unix socket), each to its own database (they share table names), and pick
# a random warehouse per transaction (go-tpc always does; pgarena --all-warehouses).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-60}
CLIENTS=${CLIENTS:-8}
WAREHOUSES_LOAD=${WAREHOUSES_LOAD:-"4 10"}
RUN_WAREHOUSES=${RUN_WAREHOUSES:-4}
LOAD_WORKERS=${LOAD_WORKERS:-4}
GOTPC_VERSION=${GOTPC_VERSION:-v1.0.12}
OUT=${OUT:-bench/results/vs-go-tpc-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

GOTPC=${GOTPC:-$PWD/bench/.bin/go-tpc}
if [[ ! -x $GOTPC ]]; then
	echo "building go-tpc $GOTPC_VERSION into $GOTPC"
	src=$(GOWORK=off go mod download -json "github.com/pingcap/go-tpc@$GOTPC_VERSION" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
	mkdir -p "$(dirname "$GOTPC")"
	if ! (cd "$src" && GOWORK=off go build -o "$GOTPC" ./cmd/go-tpc); then
		# The module cache is read-only; build a writable copy.
		tmp=$(mktemp -d)
		cp -r "$src/." "$tmp" && chmod -R u+w "$tmp"
		(cd "$tmp" && GOWORK=off GOFLAGS=-mod=mod go build -o "$GOTPC" ./cmd/go-tpc)
		rm -rf "$tmp"
	fi
fi

. bench/lib.sh
start_cluster vs-go-tpc --max-connections 100
echo "server: $("$PGBIN/postgres" --version 2>/dev/null || echo unknown); client host: $(nproc) cores; go-tpc $GOTPC_VERSION"
echo "results: $OUT"
: >"$OUT"

GDB=go_tpc PDB=pgarena
gotpc=(-d postgres -H 127.0.0.1 -P "$PGPORT" -U "$PGUSER" -D "$GDB" --conn-params sslmode=disable)
PDSN="host=127.0.0.1 port=$PGPORT user=$PGUSER dbname=$PDB"

measure() { python3 bench/measure.py "$@" | tee -a "$OUT"; }
sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -d "$1" -Atc "$2"; }
fresh_db() { sql postgres "DROP DATABASE IF EXISTS $1" && sql postgres "CREATE DATABASE $1"; }
settle() { sql postgres CHECKPOINT; } # not timed: the previous step's dirty pages are not the next one's cost
count_rows() {
	sql "$1" "SELECT (SELECT count(*) FROM warehouse) + (SELECT count(*) FROM district) + (SELECT count(*) FROM customer)
		+ (SELECT count(*) FROM history) + (SELECT count(*) FROM orders) + (SELECT count(*) FROM new_order)
		+ (SELECT count(*) FROM order_line) + (SELECT count(*) FROM item) + (SELECT count(*) FROM stock)"
}

load() { # tool warehouses: load into a fresh database, then count its rows into the JSON line
	local tool=$1 w=$2 db line
	if [[ $tool == go-tpc ]]; then db=$GDB; else db=$PDB; fi
	fresh_db "$db"
	settle
	if [[ $tool == go-tpc ]]; then
		line=$(python3 bench/measure.py "load W=$w go-tpc" -- "$GOTPC" tpcc prepare --warehouses "$w" --no-check -T "$LOAD_WORKERS" "${gotpc[@]}")
	else
		line=$(python3 bench/measure.py "load W=$w pgarena" -- "$PGARENA" init tpcc --warehouses "$w" --load-workers "$LOAD_WORKERS" --force --dsn "$PDSN")
	fi
	python3 -c 'import json, sys; j = json.loads(sys.argv[1]); j["rows"] = int(sys.argv[2]); print(json.dumps(j))' \
		"$line" "$(count_rows "$db")" | tee -a "$OUT"
}

for w in $WAREHOUSES_LOAD; do
	echo "== load $w warehouses: go-tpc tpcc prepare -T $LOAD_WORKERS vs pgarena init tpcc --load-workers $LOAD_WORKERS ($ROUNDS rounds)"
	for r in $(seq 1 "$ROUNDS"); do
		if ((r % 2)); then load pgarena "$w"; load go-tpc "$w"; else load go-tpc "$w"; load pgarena "$w"; fi
	done
done

echo "== runs at $RUN_WAREHOUSES warehouses, $CLIENTS clients, ${DURATION}s each ($ROUNDS rounds)"
OUT=/dev/null load go-tpc "$RUN_WAREHOUSES" >/dev/null # these loads only set up the runs
OUT=/dev/null load pgarena "$RUN_WAREHOUSES" >/dev/null
sql "$GDB" "VACUUM ANALYZE" # as pgarena's init does: the runs compare drivers, not plans on unanalysed tables
ra=(measure "tpcc go-tpc" -- "$GOTPC" tpcc run --warehouses "$RUN_WAREHOUSES" -T "$CLIENTS" --time "${DURATION}s" "${gotpc[@]}")
common=(-c "$CLIENTS" -T "${DURATION}s" -M prepared --all-warehouses -P 0 --dsn "$PDSN" --results "$RESULTS" --json)
rb=(measure "tpcc pgarena" -- "$PGARENA" run tpcc "${common[@]}")
rc=(measure "tpcc pgarena-sp" -- "$PGARENA" run tpcc --stored-procs "${common[@]}")
for r in $(seq 1 "$ROUNDS"); do
	if ((r % 2)); then
		settle; "${rb[@]}"; settle; "${rc[@]}"; settle; "${ra[@]}"
	else
		settle; "${ra[@]}"; settle; "${rc[@]}"; settle; "${rb[@]}"
	fi
done

python3 bench/summarize.py "$OUT"
"$PGARENA" check tpcc --dsn "$PDSN"
