#!/usr/bin/env bash
# TPC-H power@size on Citus (a coordinator and 2 workers, all named local
# clusters on this machine) against plain PostgreSQL, in both Citus layouts
# of `init tpch --citus-layout`, the distributed one also with
# citus.enable_repartition_joins=on (--session-set).
#
#   SCALE=0.1 bench/citus.sh
#
# Needs the citus extension installed (scripts/install-citus.sh). Prints each
# setup's power@size, failed queries and elapsed time, and `check tpch
# --answers` on a fresh load of the reference layout.
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE=${SCALE:-0.1}
OUT=${OUT:-bench/results/citus-$(date -u +%Y%m%dT%H%M%SZ).txt}
. bench/lib.sh

nodes=(citus-coord citus-w1 citus-w2)
cleanup() {
	for n in "${nodes[@]}" citus-plain; do "$PGARENA" cluster rm "$n" >/dev/null 2>&1 || true; done
	rm -rf "$RESULTS"
}
trap cleanup EXIT
declare -A port
for n in "${nodes[@]}"; do
	"$PGARENA" cluster start --name "$n" --pg-set shared_preload_libraries=citus \
		--pg-set citus.node_conninfo=sslmode=disable --pg-set max_prepared_transactions=100 >/dev/null
	port[$n]=$(eval "$("$PGARENA" cluster env "$n")"; echo "$PGPORT")
done
"$PGARENA" cluster start --name citus-plain >/dev/null
plain=$(eval "$("$PGARENA" cluster env citus-plain)"; echo "host=127.0.0.1 port=$PGPORT user=$PGUSER sslmode=disable")
coord="host=127.0.0.1 port=${port[citus-coord]} user=pgarena sslmode=disable"

# citus_db DB: the database on every node with the extension, both workers added.
citus_db() {
	for n in "${nodes[@]}"; do
		psql -q "host=127.0.0.1 port=${port[$n]} user=pgarena dbname=postgres" -c "create database $1"
		psql -q "host=127.0.0.1 port=${port[$n]} user=pgarena dbname=$1" -c "create extension citus"
	done
	psql -q "$coord dbname=$1" -c "select citus_set_coordinator_host('127.0.0.1', ${port[citus-coord]})" \
		-c "select citus_add_node('127.0.0.1', ${port[citus-w1]})" -c "select citus_add_node('127.0.0.1', ${port[citus-w2]})" >/dev/null
}

power() { # label, then pgarena run arguments
	local label=$1
	shift
	echo "== $label" | tee -a "$OUT"
	"$PGARENA" run tpch --power --results "$RESULTS" "$@" 2>&1 |
		grep -E '^(duration|number of failed|power_at_size)|failed by class|^citus' | tee -a "$OUT" || true # a run with failed queries exits 1
}

citus_db tpch_ref
"$PGARENA" init tpch --scale "$SCALE" --dsn "$coord dbname=tpch_ref" 2>&1 | grep -E '^(init|citus)' | tee -a "$OUT"
"$PGARENA" check tpch --answers --dsn "$coord dbname=tpch_ref" 2>&1 | tee -a "$OUT" || true
power "Citus, reference layout" --dsn "$coord dbname=tpch_ref"

citus_db tpch_dist
"$PGARENA" init tpch --scale "$SCALE" --citus-layout distributed --dsn "$coord dbname=tpch_dist" 2>&1 | grep -E '^(init|citus)' | tee -a "$OUT"
power "Citus, distributed layout" --dsn "$coord dbname=tpch_dist"
power "Citus, distributed layout, repartition joins" --dsn "$coord dbname=tpch_dist" --session-set citus.enable_repartition_joins=on

psql -q "$plain dbname=postgres" -c "create database tpch"
"$PGARENA" init tpch --scale "$SCALE" --dsn "$plain dbname=tpch" 2>&1 | grep -E '^init' | tee -a "$OUT"
power "plain PostgreSQL" --dsn "$plain dbname=tpch"
echo "results: $OUT"
