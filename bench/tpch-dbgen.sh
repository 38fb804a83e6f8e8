#!/usr/bin/env bash
# The TPC-H data generator alone (internal/workload/tpch/dbgen): every table at scale 1 to
# io.Discard, one goroutine; lines per wall second and per CPU second, peak RSS.
#
#   bench/tpch-dbgen.sh            # COUNT=3 repetitions by default
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
go test -run '^$' -bench 'SF1' -benchtime 1x -count "$COUNT" ./internal/workload/tpch/dbgen/
