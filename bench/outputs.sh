#!/usr/bin/env bash
# What does each --out cost the client, and how fast does the postgres
# output's results database grow? On one local cluster (tpcb select-only,
# scale 1), pgarena runs alternately with no --out and with each of
# jsonl=FILE, csv=FILE, prometheus (scraped every 1 s by a real Prometheus
# if one is installed, else by curl in a loop) and postgres=URL (a results
# database on the same server), at -c 2 -j 2 and -c 8 -j 2.
#
#   bench/outputs.sh                          # 3 rounds of 20 s runs
#   ROUNDS=5 DURATION=30 CLIENTS="8" bench/outputs.sh
#   CALLGRIND=1 bench/outputs.sh              # also: callgrind instructions of each output's code
#   ROUNDS=0 CALLGRIND=1 OUT=bench/results/outputs-cg.jsonl bench/outputs.sh   # callgrind only
#   SUMMARIZE="bench/results/outputs-X.jsonl bench/results/outputs-cg.jsonl" bench/outputs.sh
#                                             # print past runs' tables (callgrind's Ir/tx needs timed runs)
#
# Prints, per client count and output, the median client CPU per committed
# transaction (user+sys of pgarena, from bench/measure.py; --json's
# transactions) and its ratio to the run without --out; then the results
# database's growth per run-hour: the per-second tables (intervals,
# samples: their pg_total_relation_size growth over all postgres runs,
# per measured second) times 3600, plus the per-run rows (runs, findings).
#
# CALLGRIND=1 adds what each output's own code costs in user-space
# instructions (valgrind callgrind, GODEBUG=asyncpreemptoff=1, GOGC=off: the
# garbage collector's share shows as the bytes allocated), which does not
# depend on how busy the host is: internal/output/all's BenchmarkWrite
# (one second of a select-only run as an output sees it: an interval with a
# 15,000-latency histogram and a sampling of 60 series; for prometheus a
# scrape of /metrics too) at CG_ITER and 3 x CG_ITER iterations, CG_REPEAT
# times each (a run now and then counts tens of millions more, on a busy
# host: the least of each point is taken); the slope
# is instructions per run-second, and over the native tps without --out,
# per transaction. The postgres output is not in it (it needs a database;
# its client work is an INSERT per interval and a batch per sampling).
# Whole runs under callgrind do not resolve it: a Go client's time-driven
# work under valgrind varies by tens of millions of instructions from run
# to run (bench/results/outputs-callgrind-runs-20261126T215909Z.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
CLIENTS=${CLIENTS:-"2 8"}
OUTPUTS=${OUTPUTS:-"none jsonl csv prometheus postgres"}
CALLGRIND=${CALLGRIND:-0}
CG_ITER=${CG_ITER:-20}
CG_REPEAT=${CG_REPEAT:-3} # runs per point; the slope takes the least of each
OUT=${OUT:-bench/results/outputs-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

summarize() { # results.jsonl...: the tables
	python3 - "$@" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.strip()]
runs = {}
for r in rows:
    if r.get("kind") == "run" and r.get("transactions"):
        runs.setdefault((r["clients"], r["output"]), []).append(r)
for r in rows:
    if r.get("kind") == "load":
        print(f"load: {r['when']}: {r['uptime']}")
print(f"\n{'clients':>7} {'output':<11} {'runs':>4} {'tps':>8} {'CPU us/tx':>9} {'ratio':>6} {'spread':>13}")
tps_of = {}
for c in sorted({k[0] for k in runs}):
    base = None
    for o in ("none", "jsonl", "csv", "prometheus", "postgres"):
        rs = runs.get((c, o))
        if not rs:
            continue
        cpu = [1e6 * r["cpu_s"] / r["transactions"] for r in rs]
        m = st.median(cpu)
        tps_of[(c, o)] = st.median(r["tps"] for r in rs)
        base = m if o == "none" else base
        ratio = f"{m / base:6.3f}" if base else "     -"
        print(f"{c:>7} {o:<11} {len(rs):>4} {tps_of[(c, o)]:8.0f} {m:9.2f} {ratio} {min(cpu):6.2f}-{max(cpu):<6.2f}")
sz = [r for r in rows if r.get("kind") == "size"]
# a run that created the schema (growth = size) grew by its empty pages too
sz = [r for r in sz if r["delta"] != r["total"]] or sz
if sz:
    per_s = ("intervals", "samples")
    secs = sum(r["measured_s"] for r in sz)
    grow = {}
    for r in sz:
        for t, b in r["delta"].items():
            grow[t] = grow.get(t, 0) + b
    hourly = 3600 * sum(grow.get(t, 0) for t in per_s) / secs
    fixed = sum(b for t, b in grow.items() if t not in per_s) / len(sz)
    print(f"\nresults database ({len(sz)} postgres runs, {secs:.0f} s measured): growth by table (bytes, all runs):")
    for t, b in sorted(grow.items()):
        print(f"  {t:<16} {b:>12,}")
    print(f"per run-hour: {hourly / 2**20:.1f} MiB (intervals + samples) + {fixed / 2**10:.0f} KiB per run (runs, findings, ...)"
          f" = {(hourly + fixed) / 2**20:.1f} MiB")
cg = [r for r in rows if r.get("kind") == "callgrind"]
if cg:
    least = {}
    for r in cg:
        k = (r["output"], r["iterations"])
        least[k] = min(least.get(k, r["instructions"]), r["instructions"])
    its = sorted({k[1] for k in least})
    lo, hi = its[0], its[-1]
    cs = sorted(c for c in {k[0] for k in runs} if (c, "none") in tps_of)
    head = "  ".join(f"{'Ir/tx -c ' + str(c):>12}" for c in cs)
    print(f"\ncallgrind of BenchmarkWrite ({lo} and {hi} iterations): instructions per run-second of select-only")
    print(f"{'output':<11} {'Ir/s':>12} {'B/s':>9} {'Ir/tx@15k':>10}  {head}  (at the native tps without --out)")
    for o in ("jsonl", "csv", "prometheus"):
        if (o, lo) not in least or (o, hi) not in least:
            continue
        s = (least[(o, hi)] - least[(o, lo)]) / (hi - lo)
        per_tx = "  ".join(f"{s / tps_of[(c, 'none')]:12.1f}" for c in cs)
        mem = max(r["bytes_per_op"] for r in cg if r["output"] == o)
        print(f"{o:<11} {s:12,.0f} {mem:9,} {s / 15000:10.1f}  {per_tx}")
PY
}
if [ -n "${SUMMARIZE:-}" ]; then
	# shellcheck disable=SC2086
	summarize $SUMMARIZE
	exit
fi

. bench/lib.sh
start_cluster outputs --max-connections 100
"$PGARENA" init tpcb -s 1 --force --dsn "$DSN" >/dev/null 2>&1
RESDB=outbench_results
psql "$DSN" -qXc "DROP DATABASE IF EXISTS $RESDB" -c "CREATE DATABASE $RESDB" >/dev/null
RESDSN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$RESDB"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PROM_PORT=$(free_port)
# The scraper runs the whole time (its CPU is not pgarena's): a real
# Prometheus if installed, scraping every 1 s, else curl every 1 s.
SCRAPER_PID=
if command -v prometheus >/dev/null; then
	SCRAPER="prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}')"
	cat >"$RESULTS/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: pgarena
    static_configs: [{targets: ["127.0.0.1:$PROM_PORT"]}]
EOF
	prometheus --config.file="$RESULTS/prometheus.yml" --storage.tsdb.path="$RESULTS/tsdb" \
		--web.listen-address="127.0.0.1:$(free_port)" >"$RESULTS/prometheus.log" 2>&1 &
	SCRAPER_PID=$!
else
	SCRAPER="curl every 1 s"
	(while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$PROM_PORT/metrics" || true; done) &
	SCRAPER_PID=$!
fi
trap 'kill $SCRAPER_PID 2>/dev/null || true; "$PGARENA" cluster rm outputs >/dev/null 2>&1 || true; rm -rf "$RESULTS"' EXIT

out_flag() { # output -> FLAG, its --out flag (none: empty)
	case $1 in
	none) FLAG=() ;;
	jsonl) FLAG=(--out "jsonl=$RESULTS/out.jsonl") ;;
	csv) FLAG=(--out "csv=$RESULTS/out.csv") ;;
	prometheus) FLAG=(--out "prometheus=127.0.0.1:$PROM_PORT") ;;
	postgres) FLAG=(--out "postgres=$RESDSN") ;;
	esac
}

db_sizes() { # -> {"table": bytes} of pgarena_results (indexes and TOAST included)
	psql "$RESDSN" -AtXc "SELECT coalesce(json_object_agg(c.relname, pg_total_relation_size(c.oid)), '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'pgarena_results' AND c.relkind = 'r'"
}

note_load() {
	python3 -c 'import json, sys; print(json.dumps({"kind": "load", "when": sys.argv[1], "uptime": sys.argv[2]}))' \
		"$1" "$(uptime)" | tee -a "$OUT"
}

one_run() { # clients output
	local c=$1 o=$2 before
	out_flag "$o"
	[ "$o" = postgres ] && before=$(db_sizes)
	python3 bench/measure.py "c$c $o" -- "$PGARENA" run tpcb -S -c "$c" -j 2 -T "$DURATION" -P 0 \
		--dsn "$DSN" --results "$RESULTS/runs" --json ${FLAG[@]+"${FLAG[@]}"} |
		python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); r.update(kind="run", clients=int(sys.argv[1]), output=sys.argv[2]); print(json.dumps(r))' "$c" "$o" |
		tee -a "$OUT"
	if [ "$o" = postgres ]; then
		python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(json.dumps({"kind": "size", "clients": int(sys.argv[3]), "measured_s": float(sys.argv[4]),
                  "delta": {t: b[t] - a.get(t, 0) for t in b}, "total": b}))' "$before" "$(db_sizes)" "$c" "$DURATION" | tee -a "$OUT"
	fi
}

echo "pgarena $("$PGARENA" version); scraper: $SCRAPER; results: $OUT"
note_load start
for round in $(seq "$ROUNDS"); do
	order=$OUTPUTS
	((round % 2)) || order=$(echo "$OUTPUTS" | tr ' ' '\n' | tac | tr '\n' ' ')
	for c in $CLIENTS; do
		for o in $order; do
			one_run "$c" "$o"
		done
	done
done
note_load "after the timed rounds"

if [ "$CALLGRIND" = 1 ]; then
	go test -c -o "$RESULTS/outputs.test" ./internal/output/all/
	for n in $(for _ in $(seq "$CG_REPEAT"); do echo "$CG_ITER" $((3 * CG_ITER)); done); do
		for o in jsonl csv prometheus; do
			(cd "$RESULTS" && GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$RESULTS/cg.out" \
				./outputs.test -test.run='^$' -test.bench="BenchmarkWrite/${o:0:3}\$" -test.benchtime="${n}x" -test.benchmem) >"$RESULTS/cg.txt" 2>&1
			python3 -c '
import json, re, sys
text = open(sys.argv[1]).read()
ir = re.findall(r"Collected : (\d+)", text)
mem = re.search(r"(\d+) B/op\s+(\d+) allocs/op", text)
print(json.dumps({"kind": "callgrind", "output": sys.argv[2], "iterations": int(sys.argv[3]), "instructions": int(ir[-1]),
                  "bytes_per_op": int(mem.group(1)), "allocs_per_op": int(mem.group(2))}))' \
				"$RESULTS/cg.txt" "$o" "$n" | tee -a "$OUT"
		done
	done
	note_load "after callgrind"
fi
echo
summarize "$OUT"
