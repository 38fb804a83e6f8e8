#!/usr/bin/env bash
# Peak RSS of the client, pgarena against pgbench 15, select-only -M simple
# on one local server (unix socket), alternating (ABBA) rounds: at CLIENTS
# clients straight to the server, and at BOUNCED clients through a
# pgbouncer (transaction pooling). The slope between the two largest
# direct counts is the memory of one more client (RSS, heap included).
#
#   bench/memory.sh                                  # 1 8 1000 clients, 10000 through pgbouncer
#   CLIENTS="1 8" BOUNCED= ROUNDS=1 bench/memory.sh   # a quick look
#   OLD=/tmp/pgarena-old bench/memory.sh              # a second pgarena build beside them
#
# Prints the median peak RSS (MB) of each tool per point, the ratio
# pgarena/pgbench (lower is better) and the per-client slope; raw rows go to
# bench/results/memory-*.jsonl. RSS counts the pages of the binary a
# process touched (a static Go binary's text and data, shared libraries)
# as well as its private memory (heap, stacks: anonymous RSS; its largest
# value is sampled every 10 ms, so a lower bound), whose per-client slope
# is each tool's heap per client.
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${CLIENTS:-"1 8 1000"}
BOUNCED=${BOUNCED-10000}
ROUNDS=${ROUNDS:-3}
TX=${TX:-20} # transactions per client
OUT=${OUT:-bench/results/memory-$(date -u +%Y%m%dT%H%M%SZ).jsonl}

most=1
for c in $CLIENTS; do ((c > most)) && most=$c; done
. bench/lib.sh
declare -A BIN=([pgarena]=$PGARENA)
TOOLS=(pgbench pgarena)
if [ -n "${OLD:-}" ]; then
	BIN[old]=$OLD
	TOOLS+=(old)
fi
start_cluster memory --max-connections $((most + 50)) --pg-set synchronous_commit=off
"$PGARENA" init tpcb -s 1 --force --dsn "$DSN" >/dev/null 2>&1
echo "pgbench: $("$PGBENCH" --version); pgarena: $("$PGARENA" version); load: $(cut -d' ' -f1-3 /proc/loadavg); results: $OUT"

host=$PGHOST port=$PGPORT
if [ -n "$BOUNCED" ]; then
	BDIR=$RESULTS/bouncer
	trap '"$PGARENA" cluster rm memory >/dev/null 2>&1 || true; kill "$(cat "$BDIR/pgbouncer.pid")" 2>/dev/null || true; rm -rf "$RESULTS"' EXIT
	start_bouncer "$BDIR" "$PGHOST" "$PGPORT" "$BOUNCED"
fi
ulimit -n $((${BOUNCED:-0} > most ? ${BOUNCED:-0} + 200 : most + 200))

measure() { # tool clients via host port
	local tool=$1 c=$2 via=$3 h=$4 p=$5 cmd
	if [ "$tool" = pgbench ]; then
		cmd=("$PGBENCH" -n -S -c "$c" -j 1 -t "$TX" -M simple -h "$h" -p "$p" -U "$PGUSER" "$PGDATABASE")
	else
		cmd=("${BIN[$tool]}" run tpcb -S -c "$c" -j 1 -t "$TX" -M simple -P 0 --sample-interval 0
			--dsn "host=$h port=$p user=$PGUSER dbname=$PGDATABASE sslmode=disable" --results "$RESULTS")
	fi
	local pid="" anon=0 k v _
	/usr/bin/time -f '%M' -o "$RESULTS/time.txt" "${cmd[@]}" >/dev/null 2>"$RESULTS/err.txt" &
	local tpid=$!
	while kill -0 "$tpid" 2>/dev/null; do
		[ -n "$pid" ] || pid=$(pgrep -n -P "$tpid" 2>/dev/null || true)
		if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
			while read -r k v _; do [ "$k" = RssAnon: ] && ((v > anon)) && anon=$v; done <"/proc/$pid/status" 2>/dev/null || true
		fi
		sleep 0.01
	done
	wait "$tpid" || { cat "$RESULTS/err.txt" >&2; exit 1; }
	printf '{"tool":"%s","clients":%s,"via":"%s","rss_kb":%s,"anon_kb":%s,"load":"%s"}\n' "$tool" "$c" "$via" \
		"$(cat "$RESULTS/time.txt")" "$anon" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"
}

points=()
for c in $CLIENTS; do points+=("$c:direct:$PGHOST:$PGPORT"); done
[ -n "$BOUNCED" ] && points+=("$BOUNCED:pgbouncer:$BDIR:$bport")
for r in $(seq "$ROUNDS"); do
	for pt in "${points[@]}"; do
		IFS=: read -r c via h p <<<"$pt"
		order=("${TOOLS[@]}")
		((r % 2)) || order=($(printf '%s\n' "${TOOLS[@]}" | tac))
		for tool in "${order[@]}"; do measure "$tool" "$c" "$via" "$h" "$p"; done
	done
done

python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tools = list(dict.fromkeys(r["tool"] for r in rows))
def medians(field, scale):
    m = {}
    for r in rows:
        if field in r:
            m.setdefault((r["tool"], r["clients"], r["via"]), []).append(r[field] * scale)
    return {k: statistics.median(v) for k, v in m.items()}, max((len(v) for v in m.values()), default=0)
med, rounds = medians("rss_kb", 1 / 1024)
anon, _ = medians("anon_kb", 1 / 1024)
points = sorted({(c, v) for _, c, v in med}, key=lambda p: (p[1] != "direct", p[0]))
print(f"\npeak RSS, MB (median of up to {rounds} rounds); ratio to pgbench; private: largest anonymous RSS sampled")
print(f"{'clients':>8} {'via':<10}" + "".join(f" {t:>9} {'ratio':>6} {'private':>8}" for t in tools))
for c, v in points:
    base = med.get(("pgbench", c, v))
    cells = ""
    for t in tools:
        k = (t, c, v)
        cells += f" {med[k]:9.1f} {med[k] / base:6.2f}" if k in med and base else f" {'-':>9} {'-':>6}"
        cells += f" {anon[k]:8.1f}" if k in anon else f" {'-':>8}"
    print(f"{c:>8} {v:<10}{cells}")
def slope(m, a, b, via, t):
    ka, kb = (t, a, via), (t, b, via)
    return f"{(m[kb] - m[ka]) * 1024 / (b - a):.1f}" if ka in m and kb in m else "-"
def slopes(a, b, via):
    print(f"\nper client ({a} -> {b} clients, {via}), KB: RSS / private (heap, stacks)")
    for t in tools:
        print(f"  {t:<8} {slope(med, a, b, via, t)} / {slope(anon, a, b, via, t)}")
direct = sorted(c for c, v in points if v == "direct")
if len(direct) >= 2:
    slopes(direct[-2], direct[-1], "direct")
bounced = [c for c, v in points if v == "pgbouncer"]
if direct and bounced:
    # the server's side differs (pgbouncer): a slope across the two, labelled so
    a, b = direct[-1], bounced[-1]
    print(f"\nper client ({a} direct -> {b} through pgbouncer), KB: RSS / private")
    for t in tools:
        ka, kb = (t, a, "direct"), (t, b, "pgbouncer")
        if ka in med and kb in med:
            r = f"{(med[kb] - med[ka]) * 1024 / (b - a):.1f}"
            p = f"{(anon[kb] - anon[ka]) * 1024 / (b - a):.1f}" if ka in anon and kb in anon else "-"
            print(f"  {t:<8} {r} / {p}")
PY
