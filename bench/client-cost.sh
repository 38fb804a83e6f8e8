#!/usr/bin/env bash
# Client cost of pgarena against pgbench in load-independent counts: system
# calls (strace -f -c) and user-space instructions (valgrind callgrind) of
# the client process, at several -t, one client, on one local server. A fit
# over the -t values gives the cost per transaction (slope) and the fixed
# cost of start-up and summary (intercept); neither depends on how busy the
# machine is, so this runs anywhere (slowly: callgrind is ~50x).
#
#   bench/client-cost.sh                       # both cases, unix and TCP, strace and callgrind
#   TX="500 1000" CASES=select-only TRANSPORTS=unix MEASURES=strace bench/client-cost.sh
#   PGARENA_BIN=/tmp/pgarena-old bench/client-cost.sh   # measure another pgarena build
#   PGARENA_BINS="before=/tmp/pgarena-old after=bin/pgarena" bench/client-cost.sh
#                                              # two builds, alternating with pgbench point by point
#   MANY=1000 bench/client-cost.sh             # also: RSS, CPU and connect time at 1,000 clients
#   MANY=1000 BOUNCER=1 bench/client-cost.sh   # the same through a pgbouncer (transaction pooling)
#   MEASURES=none MANY=1000 MANY_RATE=5000 bench/client-cost.sh   # open loop: -R 5000 for MANY_SECONDS (10)
#   MEASURES=none MANY=10000 BOUNCER=1 bench/client-cost.sh   # only that
#   MEASURES=none FIXED=100 REPEAT=2 bench/client-cost.sh   # fixed cost: callgrind instructions of -t 1
#                                              # at -c 1 (start, connect, summary) and per client (-c 100 minus -c 1)
#   SUMMARIZE=bench/results/client-cost-X.jsonl bench/client-cost.sh  # print a past run's fits
#
# Prints one line per case, transport and measure: each tool's slope and
# intercept and the ratio pgarena/pgbench (lower is better for pgarena);
# every raw count goes to bench/results/client-cost-*.jsonl.
#
# The counts are not quite load-independent: whether a read finds the
# answer already there (or returns EAGAIN and the client parks, polls and
# wakes) depends on timing, for both tools, and a Go client's time-driven
# work (1 s ticks, the runtime's monitor) grows with the run's length under
# valgrind. Spread between runs: ~±1 syscall/tx, and up to ±50% of
# pgarena's per-transaction instructions; REPEAT=3 fits the least count of
# each point (noise only adds work).
set -euo pipefail
cd "$(dirname "$0")/.."

TX=${TX:-"1000 2000 4000"}
CASES=${CASES:-"select-only tpcb-like"}
TRANSPORTS=${TRANSPORTS:-"unix tcp"}
MEASURES=${MEASURES:-"strace callgrind"}
[ "$MEASURES" = none ] && MEASURES=
PROTOCOL=${PROTOCOL:-prepared}
REPEAT=${REPEAT:-1}      # runs per point; the fit takes each point's smallest count
MANY=${MANY:-0}          # clients of the many-clients check (0: skip it)
MANY_TX=${MANY_TX:-20}   # transactions per client there
MANY_RATE=${MANY_RATE:-0} # >0: the many-clients check runs open loop at this rate (-R) for MANY_SECONDS instead
MANY_SECONDS=${MANY_SECONDS:-10}
BOUNCER=${BOUNCER:-0}
FIXED=${FIXED:-0}        # clients of the fixed-cost check (0: skip it)
# pgarena's recorded interval in the strace and callgrind runs: 1h keeps its
# per-interval work (measured on its own, see docs/benchmarks.md) out of the
# per-transaction slope, where under valgrind it would grow with the run's
# wall time, not with its transactions. INTERVAL=1s counts it in.
INTERVAL=${INTERVAL:-1h}
OUT=${OUT:-bench/results/client-cost-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

summarize() { # results.jsonl: the fits and ratios
	python3 - "$1" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fits = {}
tools = ["pgbench"] + sorted({r["tool"] for r in rows if r["tool"] != "pgbench"})
for key in sorted({(r["case"], r["transport"], r["measure"]) for r in rows if r["case"] not in ("many", "fixed")}):
    out = {}
    for tool in tools:
        least = {}
        for r in rows:
            if (r["case"], r["transport"], r["measure"]) == key and r["tool"] == tool:
                least[r["t"]] = min(least.get(r["t"], r["count"]), r["count"])
        pts = sorted(least.items())
        n = len(pts)
        if n < 2:
            continue
        mx = sum(t for t, _ in pts) / n
        my = sum(c for _, c in pts) / n
        slope = sum((t - mx) * (c - my) for t, c in pts) / sum((t - mx) ** 2 for t, _ in pts)
        out[tool] = (slope, my - slope * mx)
    fits[key] = out
print(f"\n{'case':<12} {'transport':<9} {'measure':<10} {'tool':<10} {'per tx':>10} {'ratio':>6}   {'fixed':>12} {'ratio':>6}")
r = lambda a, b: f"{a / b:6.2f}" if b else "     -"
for (case, transport, measure), f in fits.items():
    if "pgbench" not in f:
        continue
    bs, bi = f["pgbench"]
    for tool in tools:
        if tool in f:
            s_, i_ = f[tool]
            print(f"{case:<12} {transport:<9} {measure:<10} {tool:<10} {s_:10,.2f} {r(s_, bs)}   {i_:12,.0f} {r(i_, bi)}")
fixed = [r for r in rows if r["case"] == "fixed"]
if fixed:
    least = {}
    for f in fixed:
        k = (f["tool"], f["clients"])
        least[k] = min(least.get(k, f["count"]), f["count"])
    n = max(f["clients"] for f in fixed)
    print(f"\nfixed cost (callgrind instructions, -t 1, unix socket, -M {fixed[0]['protocol']}; least of each point):")
    print(f"{'tool':<10} {'-c 1':>14} {'ratio':>6} {'per client':>12} {'ratio':>6}   (-c {n})")
    def per_client(tool):
        return (least[(tool, n)] - least[(tool, 1)]) / (n - 1) if (tool, n) in least and (tool, 1) in least and n > 1 else None
    b1, bp = least.get(("pgbench", 1)), per_client("pgbench")
    for tool in tools:
        if (tool, 1) not in least:
            continue
        p = per_client(tool)
        ps = f"{p:12,.0f} {r(p, bp)}" if p is not None else f"{'-':>12} {'-':>6}"
        print(f"{tool:<10} {least[(tool, 1)]:14,} {r(least[(tool, 1)], b1)} {ps}")
many = [r for r in rows if r["case"] == "many"]
if many:
    loop = f"open loop at -R {many[0]['rate']}" if many[0].get("rate") else "closed loop"
    print(f"\nmany clients ({many[0]['clients']}, select-only, simple, {loop}{', through pgbouncer' if many[0].get('bouncer') else ''}):")
    for r in many:
        tps = f"  {r['tps']:9.0f} tps" if r.get("tps") is not None else ""
        split = f" (user {r['user_s']} s, sys {r['sys_s']} s)" if "user_s" in r else ""
        print(f"  {r['tool']:<8} RSS {r['rss_mb']:7.1f} MB  CPU {r['cpu_us_per_tx']:7.2f} µs/tx{split}{tps}  wall {r['wall_s']} s  connecting all {r['connect_all_ms']} ms")
EOF
}
if [ -n "${SUMMARIZE:-}" ]; then
	summarize "$SUMMARIZE"
	exit
fi

. bench/lib.sh
PGARENA=${PGARENA_BIN:-$PGARENA}
PGARENA_BINS=${PGARENA_BINS:-pgarena=$PGARENA}
declare -A BIN
TOOLS=(pgbench)
for nb in $PGARENA_BINS; do
	BIN[${nb%%=*}]=${nb#*=}
	TOOLS+=("${nb%%=*}")
done
# synchronous_commit=off: a commit does not wait for the disk, so a run's
# length (and with it the client's time-driven work: ticks, the runtime's
# monitor) depends on the client, not on this machine's fsync latency.
most=$((MANY > FIXED ? MANY : FIXED))
start_cluster client-cost --max-connections $((most > 100 ? most + 20 : 120)) --pg-set synchronous_commit=off
echo "pgbench: $("$PGBENCH" --version); pgarena: $PGARENA_BINS; protocol $PROTOCOL; -t $TX; results: $OUT"
"$PGARENA" init tpcb -s 1 --force --dsn "$DSN" >/dev/null 2>&1

SOCKDIR=$PGHOST
conninfo() { # transport -> host
	if [ "$1" = tcp ]; then echo 127.0.0.1; else echo "$SOCKDIR"; fi
}

# cmd TOOL CASE TRANSPORT T: the client command line, into CMD.
cmd() {
	local tool=$1 case=$2 host
	host=$(conninfo "$3")
	local script=()
	[ "$case" = select-only ] && script=(-S)
	if [ "$tool" = pgbench ]; then
		CMD=("$PGBENCH" -n "${script[@]}" -c 1 -j 1 -t "$4" -M "$PROTOCOL" -h "$host" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE")
	else
		CMD=("${BIN[$tool]}" run tpcb "${script[@]}" -c 1 -j 1 -t "$4" -M "$PROTOCOL" -P 0 --sample-interval 0 --interval "$INTERVAL"
			--dsn "host=$host port=$PGPORT user=$PGUSER dbname=$PGDATABASE sslmode=disable" --results "$RESULTS")
	fi
}

record() { # tool case transport measure t count
	printf '{"tool":"%s","case":"%s","transport":"%s","measure":"%s","t":%s,"count":%s}\n' "$@" >>"$OUT"
}

count_syscalls() { # -> total calls of the traced client (all threads)
	strace -f -c -U calls,errors,name -o "$RESULTS/strace.txt" "${CMD[@]}" >/dev/null 2>&1
	awk '$NF == "total" { print $1 }' "$RESULTS/strace.txt"
}

count_instructions() { # -> user-space instructions (callgrind Ir, all threads)
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$RESULTS/cg.out" \
		"${CMD[@]}" >/dev/null 2>"$RESULTS/cg.err"
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$RESULTS/cg.err" | tail -1
}

for measure in $MEASURES; do
	for case in $CASES; do
		for transport in $TRANSPORTS; do
			for t in $(for t in $TX; do for _ in $(seq "$REPEAT"); do echo "$t"; done; done); do
				for tool in "${TOOLS[@]}"; do
					cmd "$tool" "$case" "$transport" "$t"
					case $measure in
					strace) n=$(count_syscalls) ;;
					callgrind) n=$(count_instructions) ;;
					esac
					[ -n "$n" ] || { echo "no $measure count for $tool $case $transport -t $t" >&2; exit 1; }
					record "$tool" "$case" "$transport" "$measure" "$t" "$n"
				done
			done
		done
	done
done

# Fixed cost: user-space instructions of a one-transaction-per-client run
# (-t 1) at one client (start-up, connecting, summary) and at FIXED
# clients; the difference over FIXED-1 is the cost of a client (connect,
# start, close), unix socket.
if ((FIXED > 0)); then
	for c in 1 "$FIXED"; do
		for _ in $(seq "$REPEAT"); do
			for tool in "${TOOLS[@]}"; do
				if [ "$tool" = pgbench ]; then
					CMD=("$PGBENCH" -n -S -c "$c" -j 1 -t 1 -M "$PROTOCOL" -h "$SOCKDIR" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE")
				else
					CMD=("${BIN[$tool]}" run tpcb -S -c "$c" -j 1 -t 1 -M "$PROTOCOL" -P 0 --sample-interval 0 --interval "$INTERVAL"
						--dsn "host=$SOCKDIR port=$PGPORT user=$PGUSER dbname=$PGDATABASE sslmode=disable" --results "$RESULTS")
				fi
				n=$(count_instructions)
				[ -n "$n" ] || { echo "no callgrind count for $tool -c $c -t 1" >&2; exit 1; }
				printf '{"tool":"%s","case":"fixed","transport":"unix","measure":"callgrind","protocol":"%s","clients":%s,"t":1,"count":%s}\n' \
					"$tool" "$PROTOCOL" "$c" "$n" | tee -a "$OUT"
			done
		done
	done
fi

# Many clients: peak RSS, client CPU per transaction and the wall time to
# open every client's first connection (pgbench -j 1: its "initial
# connection time", serial; pgarena: from its launch to the start of
# measurement in its --json summary, 32 connecting at once), select-only,
# unix socket (or through pgbouncer, transaction pooling).
if ((MANY > 0)); then
	host=$SOCKDIR port=$PGPORT
	if ((BOUNCER)); then
		BDIR=$RESULTS/bouncer
		trap '"$PGARENA" cluster rm client-cost >/dev/null 2>&1 || true; kill "$(cat "$BDIR/pgbouncer.pid")" 2>/dev/null || true; rm -rf "$RESULTS"' EXIT
		start_bouncer "$BDIR" "$SOCKDIR" "$PGPORT" "$MANY"
		host=$BDIR port=$bport
	fi
	# Simple protocol: pgbouncer's transaction pooling takes no named prepared statements.
	# Closed loop: -t MANY_TX per client; open loop (MANY_RATE): -R MANY_RATE
	# for MANY_SECONDS, CPU per transaction processed (pgbench -R counts
	# only those it got to).
	load=(-t "$MANY_TX") pload=(-t "$MANY_TX")
	((MANY_RATE > 0)) && load=(-R "$MANY_RATE" -T "$MANY_SECONDS") pload=(-R "$MANY_RATE" -T "${MANY_SECONDS}s")
	for tool in "${TOOLS[@]}"; do
		if [ "$tool" = pgbench ]; then
			c=("$PGBENCH" -n -S -c "$MANY" -j 1 "${load[@]}" -M simple -h "$host" -p "$port" -U "$PGUSER" "$PGDATABASE")
		else
			c=("${BIN[$tool]}" run tpcb -S -c "$MANY" -j 1 "${pload[@]}" -M simple -P 0 --sample-interval 0 --json
				--dsn "host=$host port=$port user=$PGUSER dbname=$PGDATABASE sslmode=disable" --results "$RESULTS")
		fi
		launched=$(date +%s.%N)
		/usr/bin/time -f '%M %U %S %e' -o "$RESULTS/time.txt" "${c[@]}" >"$RESULTS/many.txt" 2>"$RESULTS/many.err" || { cat "$RESULTS/many.err" >&2; exit 1; }
		read -r rss_kb user sys wall <"$RESULTS/time.txt"
		if [ "$tool" = pgbench ]; then
			conn=$(sed -n 's/^initial connection time = \([0-9.]*\) ms.*/\1/p' "$RESULTS/many.txt" | tail -1)
			tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$RESULTS/many.txt" | tail -1)
			tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$RESULTS/many.txt" | tail -1)
		else
			read -r conn tx tps < <(python3 -c 'import json,sys,datetime; j=json.load(open(sys.argv[1])); s=datetime.datetime.fromisoformat(j["start"].replace("Z","+00:00")).timestamp(); print(round((s-float(sys.argv[2]))*1000,1), j["transactions"], j["tps"])' "$RESULTS/many.txt" "$launched")
		fi
		printf '{"tool":"%s","case":"many","clients":%s,"rate":%s,"tx":%s,"tps":%s,"bouncer":%s,"rss_mb":%.1f,"user_s":%s,"sys_s":%s,"cpu_us_per_tx":%.2f,"wall_s":%s,"connect_all_ms":%s}\n' \
			"$tool" "$MANY" "$MANY_RATE" "$tx" "${tps:-null}" "$BOUNCER" "$(echo "$rss_kb/1024" | bc -l)" "$user" "$sys" \
			"$(echo "($user+$sys)*1000000/$tx" | bc -l)" "$wall" "${conn:-null}" | tee -a "$OUT"
	done
fi

summarize "$OUT"
