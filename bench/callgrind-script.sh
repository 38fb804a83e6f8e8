#!/usr/bin/env bash
# Instructions per transaction of two pgarena builds, load-independent:
# callgrind counts the client's instructions for -t T1 and -t T2
# transactions (one client, scale 1, samplers off, one interval: ticks
# cost by the second, not by the transaction); the slope
# (I(T2) - I(T1)) / (T2 - T1) is the cost of one transaction, the fixed
# costs (start, connect, summary) cancel out. The process total still
# carries Go's scheduler spinning and sysmon, which scale with the time the
# client waits for the server (±10k instructions per transaction between
# rounds on a busy machine); the "engine" column counts only the
# workload's own code (internal/workload, randgen, math/rand, strconv),
# which is deterministic.
#
#   OLD=/tmp/pgarena-old [NEW=bin/pgarena] [T1=2000 T2=4000] bench/callgrind-script.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?OLD=path of the pgarena binary to compare against}"
T1=${T1:-2000}
T2=${T2:-4000}
MODES=${MODES:-simple}
OUT=${OUT:-bench/results/callgrind-script-$(date -u +%Y%m%dT%H%M%SZ).txt}
. bench/lib.sh
NEW=${NEW:-$PGARENA}
start_cluster callgrind-script
"$PGARENA" init tpcb -s 1 --dsn "$DSN" >/dev/null 2>&1
CG=$(mktemp -d)
instr() { # BINARY ARGS... -> "total engine" instructions collected
	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$CG/out" "$@" \
		--dsn "$DSN" --results "$RESULTS" -P 0 --sample-interval 0 --interval 1h >/dev/null 2>"$CG/log"
	printf '%s %s\n' "$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$CG/log")" \
		"$(callgrind_annotate --threshold=100 --auto=no "$CG/out" | grep '\[/' |
			awk '/internal\/workload\/|internal\/randgen\/|math\/rand\/|strconv/ {gsub(",","",$1); s+=$1} END {print s+0}')"
}
printf '%-12s %-9s %-4s %14s %14s %12s %12s\n' case mode bin "I(t=$T1)" "I(t=$T2)" "instr/tx" "engine/tx" | tee "$OUT"
for mode in $MODES; do
	for case in "tpcb-like:-b tpcb-like" "select-only:-S"; do
		name=${case%%:*} flag=${case#*:}
		for b in old new; do
			bin=$OLD
			[ "$b" = new ] && bin=$NEW
			# shellcheck disable=SC2086
			read -r i1 e1 < <(instr "$bin" run tpcb $flag -c 1 -j 1 -t "$T1" -M "$mode")
			# shellcheck disable=SC2086
			read -r i2 e2 < <(instr "$bin" run tpcb $flag -c 1 -j 1 -t "$T2" -M "$mode")
			printf '%-12s %-9s %-4s %14d %14d %12.0f %12.0f\n' "$name" "$mode" "$b" "$i1" "$i2" \
				"$(echo "($i2 - $i1) / ($T2 - $T1)" | bc -l)" "$(echo "($e2 - $e1) / ($T2 - $T1)" | bc -l)" | tee -a "$OUT"
		done
	done
done
