#!/usr/bin/env bash
# Cache lines a transaction touches at many clients, two pgarena builds and
# pgbench: callgrind's cache simulation counts the client's L1 data misses
# (D1mr + D1mw; the host's L1d), its data misses in a last-level cache of
# LL bytes (DLmr + DLmw; default 1 MB, about one core's L2: at 1,000
# clients every client's lines have left it by the time the client runs
# again, so this counts the distinct lines a transaction touches) and the
# instructions, for -t T1 and -t T2 transactions per client (select-only,
# -M simple, one thread, samplers off, one interval); the slope
# (X(T2) - X(T1)) / (C * (T2 - T1)) is the cost of one transaction, the
# fixed costs (start, connect, summary) cancel out.
#
# Not load-independent at 100 clients: a client that finds its answer
# ready does not park, and its lines stay warm; how often depends on the
# server's speed against valgrind's, so rounds on a busy machine differ by
# up to ±20% (at 1,000 clients by ~3%). Compare medians of several
# alternating rounds; the "ref" column (the receive functions of Go's net
# and poll packages and the runtime's netpoll wait, code no build changes:
# since round trips read quiet answers without pgx's reader, pgx's
# functions are no reference) says how cold a round ran, and
# "scope/ref" (the misses of internal/driver, internal/metrics,
# internal/workload/script and tpcb over ref) compares rounds that ran at
# different coldness. pgbench (-n -S -c C -j 1 -M simple, the binary
# under /usr/lib/postgresql) runs the same points unless WITH_PGBENCH=0; its
# scope and ref are 0.
#
#   OLD=/tmp/pgarena-old [NEW=bin/pgarena] [C=100 T1=50 T2=250 ROUNDS=3 LL=1048576 WITH_PGBENCH=1] bench/callgrind-cachelines.sh
#   OLD=bin/pgarena C=1000 T1=10 T2=40 ROUNDS=2 bench/callgrind-cachelines.sh   # many clients
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?OLD=path of the pgarena binary to compare against}"
C=${C:-100}
T1=${T1:-50}
T2=${T2:-250}
ROUNDS=${ROUNDS:-3}
LL=${LL:-1048576}
WITH_PGBENCH=${WITH_PGBENCH:-1}
OUT=${OUT:-bench/results/callgrind-cachelines-$(date -u +%Y%m%dT%H%M%SZ).txt}
. bench/lib.sh
NEW=${NEW:-$PGARENA}
ulimit -n $((C + 200)) 2>/dev/null || true
start_cluster callgrind-cachelines --max-connections $((C + 50))
"$PGARENA" init tpcb -s 1 --dsn "$DSN" >/dev/null 2>&1
CG=$(mktemp -d)
run() { # BINARY T -> "Ir D1 LL scope ref" of the whole run (BINARY pgbench: pgbench's)
	local cmd=("$1" run tpcb -S -c "$C" -j 1 -t "$2" -M simple --dsn "$DSN" --results "$RESULTS"
		-P 0 --sample-interval 0 --interval 1h)
	[ "$1" = pgbench ] && cmd=("$PGBENCH" -n -S -c "$C" -j 1 -t "$2" -M simple "$PGDATABASE")
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --cache-sim=yes --LL="$LL,16,64" \
		--callgrind-out-file="$CG/out" "${cmd[@]}" >/dev/null 2>"$CG/log"
	callgrind_annotate --threshold=100 --auto=no "$CG/out" | sed -E 's/\([ 0-9.]+%\)//g' | awk '
		/PROGRAM TOTALS/ {gsub(",", ""); ir = $1; d1 = $5 + $6; ll = $8 + $9}
		/\[\// {gsub(",", ""); m = ($5 == "." ? 0 : $5) + ($6 == "." ? 0 : $6)
			if ($0 ~ /pgarena\/internal\/(driver|metrics|workload\/script|workload\/tpcb)\.|HdrHistogram/) scope += m
			if ($0 ~ /(net\.\(\*rawConn\)\.Read|FD\)\.RawRead|runtime\.netpollblock)('"'"'[0-9]+)? \[/) ref += m}
		END {print ir, d1, ll, scope + 0, ref + 0}'
}
builds="old new"
((WITH_PGBENCH)) && builds="pgb old new"
row() { printf '%-4s %-5s %4s %14s %11s %11s %9s %9s\n' "$@"; }
row bin round t Ir D1 LL scope ref | tee "$OUT"
for round in $(seq "$ROUNDS"); do
	for b in $builds; do
		case $b in
		old) bin=$OLD ;;
		new) bin=$NEW ;;
		pgb) bin=pgbench ;;
		esac
		for t in "$T1" "$T2"; do
			# shellcheck disable=SC2046
			row "$b" "$round" "$t" $(run "$bin" "$t") | tee -a "$OUT"
		done
	done
done
python3 - "$OUT" "$C" "$T1" "$T2" <<'PY' | tee -a "$OUT"
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
c, t1, t2 = map(int, sys.argv[2:5])
n = c * (t2 - t1)
for b in ("pgb", "old", "new"):
    pt = {t: [list(map(float, r[3:])) for r in rows if r[0] == b and int(r[2]) == t] for t in (t1, t2)}
    if not pt[t1] or not pt[t2]:
        continue
    med = {t: [st.median(x[i] for x in pt[t]) for i in range(5)] for t in pt}
    ir, d1, ll, scope, ref = ((med[t2][i] - med[t1][i]) / n for i in range(5))
    rel = f", scope/ref {scope / ref:.2f}" if ref else ""
    print(f"{b}: per transaction (slope t={t1}->{t2} of the medians): Ir {ir:.0f}, D1 misses {d1:.1f}, "
          f"LL misses {ll:.1f}, scope {scope:.1f}, ref {ref:.1f}{rel}")
PY
