#!/usr/bin/env bash
# The memory floor of a Go client beside pgbench and pgarena: peak RSS of
# small static Go programs (bench/memfloor, CGO_ENABLED=0 as pgarena's
# build) on one local server, select-only -M simple, 20 transactions per
# client, alternating (ABBA) rounds:
#   hello   a static Go program that writes a line (the runtime alone)
#   pgconn  N pgconn connections, SELECT 1 twenty times each, nothing else
#   linked  pgconn, linked with the packages pgarena links (net/http,
#           html/template's Execute, crypto/tls, encoding/json, yaml.v3)
# and then, held at exit, the KB each maps of its binary (bench/mapped.py;
# needs root and strace). Tells how much of pgarena's RSS a Go client
# cannot avoid and how much is pgarena's own (docs/benchmarks.md, "Memory").
#
#   bench/memfloor.sh
#   CLIENTS="1 8" ROUNDS=5 bench/memfloor.sh
set -euo pipefail
cd "$(dirname "$0")/.."

CLIENTS=${CLIENTS:-"1 8"}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-bench/results/memfloor-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
. bench/lib.sh
start_cluster memfloor
"$PGARENA" init tpcb -s 1 --force --dsn "$DSN" >/dev/null 2>&1
for p in hello pgconn linked; do CGO_ENABLED=0 go build -o "$RESULTS/$p" "./bench/memfloor/$p"; done
echo "pgbench: $("$PGBENCH" --version); pgarena: $("$PGARENA" version); load: $(cut -d' ' -f1-3 /proc/loadavg); results: $OUT"
TOOLS=(pgbench hello pgconn linked pgarena)

# one word: the programs take it as one argument
URL="postgres:///$PGDATABASE?host=$PGHOST&port=$PGPORT&user=$PGUSER&sslmode=disable"

command_of() { # tool clients: sets cmd
	case $1 in
	pgbench) cmd=("$PGBENCH" -n -S -c "$2" -j 1 -t 20 -M simple -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE") ;;
	hello) cmd=("$RESULTS/hello") ;;
	pgconn | linked) cmd=("$RESULTS/$1" "$URL" "$2") ;;
	pgarena) cmd=("$PGARENA" run tpcb -S -c "$2" -j 1 -t 20 -M simple -P 0 --sample-interval 0 --results "$RESULTS" --dsn "$URL") ;;
	esac
}

measure() { # tool clients
	local tool=$1 c=$2 pid="" anon=0 k v _ cmd
	command_of "$tool" "$c"
	/usr/bin/time -f '%M' -o "$RESULTS/time.txt" "${cmd[@]}" >/dev/null 2>"$RESULTS/err.txt" &
	local tpid=$!
	while kill -0 "$tpid" 2>/dev/null; do
		[ -n "$pid" ] || pid=$(pgrep -n -P "$tpid" 2>/dev/null || true)
		if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
			while read -r k v _; do [ "$k" = RssAnon: ] && ((v > anon)) && anon=$v; done 2>/dev/null <"/proc/$pid/status" || true
		fi
		sleep 0.005
	done
	wait "$tpid" || { cat "$RESULTS/err.txt" >&2; exit 1; }
	printf '{"tool":"%s","clients":%s,"rss_kb":%s,"anon_kb":%s,"load":"%s"}\n' "$tool" "$c" \
		"$(cat "$RESULTS/time.txt")" "$anon" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"
}

held() { # tool: run it with one client held at its exit_group, print mapped.py's line
	local tool=$1 pid="" sp cmd
	command_of "$tool" 1
	strace -f -qq -o /dev/null -e trace=exit_group -e inject=exit_group:delay_enter=5000000 \
		"${cmd[@]}" >/dev/null 2>"$RESULTS/err.txt" &
	sp=$!
	for _ in $(seq 3000); do
		[ -n "$pid" ] || pid=$(pgrep -n -P "$sp" 2>/dev/null || true)
		[ -n "$pid" ] && grep -qs '^231 ' /proc/"$pid"/task/*/syscall && break
		sleep 0.01
	done
	printf '{"tool":"%s","mapped":%s}\n' "$tool" "$(python3 bench/mapped.py "$pid" "${cmd[0]}")" | tee -a "$OUT"
	wait "$sp" || { cat "$RESULTS/err.txt" >&2; exit 1; }
}

for r in $(seq "$ROUNDS"); do
	for c in $CLIENTS; do
		order=("${TOOLS[@]}")
		((r % 2)) || order=($(printf '%s\n' "${TOOLS[@]}" | tac))
		for tool in "${order[@]}"; do measure "$tool" "$c"; done
	done
done
for tool in hello pgconn linked pgarena; do held "$tool" >/dev/null; done

python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
tools = list(dict.fromkeys(r["tool"] for r in rows if "rss_kb" in r))
peak, anon = {}, {}
for r in rows:
    if "rss_kb" in r:
        peak.setdefault((r["tool"], r["clients"]), []).append(r["rss_kb"] / 1024)
        anon.setdefault((r["tool"], r["clients"]), []).append(r["anon_kb"] / 1024)
clients = sorted({c for _, c in peak})
print("\npeak RSS, MB (median); ratio to pgbench; largest anonymous RSS sampled, MB")
print(f"{'tool':<8}" + "".join(f" {'c=' + str(c):>8} {'ratio':>6} {'anon':>6}" for c in clients))
for t in tools:
    cells = ""
    for c in clients:
        m, b = statistics.median(peak[(t, c)]), statistics.median(peak[("pgbench", c)])
        cells += f" {m:8.1f} {m / b:6.2f} {statistics.median(anon[(t, c)]):6.1f}"
    print(f"{t:<8}{cells}")
keys = [".text", ".rodata", "pclntab.pctab", "pclntab.functab"]
print("\nheld at exit, one client: KB mapped of size KB; anonymous KB; .text 64 KB windows mapped (holding init code)")
for r in rows:
    if "mapped" in r:
        m = r["mapped"]; w = m["text_windows"]
        print(f"{r['tool']:<8} " + " ".join(f"{k} {m[k]['mapped_kb']}/{m[k]['size_kb']}" for k in keys)
              + f" anon {m['anon_kb']} windows {w['mapped']}/{w['all']} ({w['with_init_mapped']})")
PY
