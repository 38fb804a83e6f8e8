#!/usr/bin/env bash
# How fast pgarena serve lists a results directory of many runs: creates N
# (default 1000) synthetic finished runs, starts `pgarena serve` over them and
# times the runs list (first request: cold cache; then warm), a run page, a
# compare of two runs and a filtered list. No database needed.
#
#   bench/serve-list.sh            # N=1000 INTERVALS=60
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
INTERVALS=${INTERVALS:-60}
make -s build >/dev/null
PGARENA=$PWD/bin/pgarena
DIR=$(mktemp -d)
PORT=${PORT:-18080}
trap 'kill "$SERVE_PID" 2>/dev/null || true; rm -rf "$DIR"' EXIT
PGARENA_SERVE_BENCH_DIR=$DIR PGARENA_SERVE_BENCH_RUNS=$N PGARENA_SERVE_BENCH_INTERVALS=$INTERVALS \
	go test -count=1 -run "^TestFillBenchRuns$" ./internal/serve/ >/dev/null
"$PGARENA" serve --results "$DIR" --addr "127.0.0.1:$PORT" 2>/dev/null &
SERVE_PID=$!
for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
timeit() { curl -fs -o /dev/null -w "%{time_total}" "http://127.0.0.1:$PORT$1"; }
RUN=$(ls "$DIR" | sort | sed -n 1p)
RUN2=$(ls "$DIR" | sort | sed -n 2p)
echo "runs: $N, intervals per run: $INTERVALS"
echo "list (cold cache was the readiness probe): $(timeit /) s"
for i in 1 2 3; do echo "list, warm #$i: $(timeit /) s"; done
echo "list sorted by tps: $(timeit '/?sort=tps&order=asc') s"
echo "list filtered label=setup-1*: $(timeit '/?label=setup-1*') s"
echo "run page: $(timeit "/run/$RUN") s"
echo "compare of two runs: $(timeit "/compare?run=$RUN&run=$RUN2") s"
echo "plan status: $(timeit /plan/bench) s"
