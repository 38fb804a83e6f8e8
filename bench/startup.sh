#!/usr/bin/env bash
# Start-up and exit cost in user-space instructions (valgrind callgrind,
# whole process, all threads), which the host's load does not change:
#   help     pgarena --help
#   t1       a one-transaction run, -c 1 -t 1 -M prepared, select-only,
#            against pgbench -n -S -c 1 -j 1 -t 1 -M prepared on the same database
#   files    of that run, what store's Writer spends writing the run's files
#            (spec.json, server.json, intervals, histograms.hlog, summary.json;
#            callgrind --toggle-collect on its functions: indicative, as a
#            goroutine switch inside them is counted too)
# and the packages' initialisation (GODEBUG=inittrace=1, the top ones).
#
#   bench/startup.sh                      # REPEAT=3: the least count of each
#   OLD=/tmp/pgarena-old bench/startup.sh # a second pgarena build beside
#
# Prints the counts and the ratios to pgbench (t1); raw rows go to
# bench/results/startup-*.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."

REPEAT=${REPEAT:-3}
OUT=${OUT:-bench/results/startup-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
. bench/lib.sh
declare -A BIN=([pgarena]=$PGARENA)
TOOLS=(pgarena)
if [ -n "${OLD:-}" ]; then
	BIN[old]=$OLD
	TOOLS+=(old)
fi
start_cluster startup --pg-set synchronous_commit=off
"$PGARENA" init tpcb -s 1 --force --dsn "$DSN" >/dev/null 2>&1
echo "pgbench: $("$PGBENCH" --version); pgarena: $("$PGARENA" version); load: $(cut -d' ' -f1-3 /proc/loadavg); results: $OUT"

# count [callgrind options --] COMMAND...: instructions (Ir) of the command.
# asyncpreemptoff: callgrind and Go's preemption signals do not mix.
count() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "${opts[@]}" "$@" \
		>/dev/null 2>"$RESULTS/cg.err" || { tail -5 "$RESULTS/cg.err" >&2; exit 1; }
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$RESULTS/cg.err" | tail -1
}
record() { # tool case count
	printf '{"tool":"%s","case":"%s","count":%s,"load":"%s"}\n' "$1" "$2" "$3" "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT"
}
writer='github.com/pgarena/pgarena/internal/store'
files=(--toggle-collect="$writer.writeJSONAtomic" --toggle-collect="$writer.(*Writer).AppendIntervals"
	--toggle-collect="$writer.(*Writer).Finish")
for _ in $(seq "$REPEAT"); do
	record pgbench t1 "$(count -- "$PGBENCH" -n -S -c 1 -j 1 -t 1 -M prepared -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$PGDATABASE")"
	for tool in "${TOOLS[@]}"; do
		run=("${BIN[$tool]}" run tpcb -S -c 1 -j 1 -t 1 -M prepared -P 0 --dsn "$DSN sslmode=disable" --results "$RESULTS")
		record "$tool" help "$(count -- "${BIN[$tool]}" --help)"
		record "$tool" t1 "$(count -- "${run[@]}")"
		record "$tool" files "$(count "${files[@]}" -- "${run[@]}")"
	done
done
for tool in "${TOOLS[@]}"; do
	echo "== $tool: package initialisation of --help, the most allocating (GODEBUG=inittrace=1; its clock times move with the load)"
	GODEBUG=inittrace=1 "${BIN[$tool]}" --help 2>&1 >/dev/null | awk '{print $8 " bytes", $5 " ms", $2}' | sort -rn | head -8
done

python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
least = {}
for r in rows:
    k = (r["tool"], r["case"])
    least[k] = min(least.get(k, r["count"]), r["count"])
tools = list(dict.fromkeys(r["tool"] for r in rows if r["tool"] != "pgbench"))
base = least.get(("pgbench", "t1"))
print(f"\ninstructions (least of each), ratio to pgbench -t 1 where it has one")
print(f"{'case':<8} {'pgbench':>12}" + "".join(f" {t:>12} {'ratio':>6}" for t in tools))
for case in ("help", "t1", "files"):
    b = least.get(("pgbench", case))
    cells = "".join(f" {least[(t, case)]:12,} " + (f"{least[(t, case)] / b:6.2f}" if b else f"{'':6}") for t in tools if (t, case) in least)
    print(f"{case:<8} {b if b else '-':>12,}{cells}" if b else f"{case:<8} {'-':>12}{cells}")
PY
