#!/usr/bin/env bash
# Which pages of pgarena's binary a process maps (file-backed RSS), for
# `pgarena version` and a 1-client select-only run, each held at exit
# (strace delays its exit_group) and read through /proc/PID/pagemap by
# bench/mapped.py: KB mapped of .text, .rodata, .gopclntab's parts and the
# data, anonymous KB, and the 64 KB windows of .text that hold package
# init code. Needs root (pagemap) and strace.
#
#   bench/mapped.sh                      # bin/pgarena (built)
#   BINS="/tmp/a /tmp/b" bench/mapped.sh # other builds side by side
#
# On a kernel with fault-around (64 KB by default) any code that runs maps
# its window, so the mapped KB follow how code is spread over the binary
# more than how much of it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/results/mapped-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
. bench/lib.sh
BINS=${BINS:-$PGARENA}
start_cluster mapped
"$PGARENA" init tpcb -s 1 --force --dsn "$DSN" >/dev/null 2>&1

held() { # label bin args...: run bin held at its exit_group, print mapped.py's line
	local label=$1 bin=$2 pid="" sp
	shift 2
	strace -f -qq -o /dev/null -e trace=exit_group -e inject=exit_group:delay_enter=3000000 \
		"$bin" "$@" >/dev/null 2>"$RESULTS/err.txt" &
	sp=$!
	for _ in $(seq 3000); do
		[ -n "$pid" ] || pid=$(pgrep -n -P "$sp" 2>/dev/null || true)
		[ -n "$pid" ] && grep -qs '^231 ' /proc/"$pid"/task/*/syscall && break
		sleep 0.01
	done
	printf '{"bin":"%s","cmd":"%s","m":%s}\n' "$bin" "$label" "$(python3 bench/mapped.py "$pid" "$bin")" | tee -a "$OUT"
	wait "$sp" || { cat "$RESULTS/err.txt" >&2; exit 1; }
}

for bin in $BINS; do
	held version "$bin" version
	held run-c1 "$bin" run tpcb -S -c 1 -j 1 -t 2000 -M simple -P 0 --sample-interval 0 \
		--dsn "$DSN sslmode=disable" --results "$RESULTS"
done
python3 - "$OUT" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = [".text", ".rodata", "pclntab.funcname", "pclntab.pctab", "pclntab.functab", ".noptrdata"]
print("mapped KB of size KB per part; anon KB; .text 64 KB windows mapped (of which hold init code)")
print(f"{'cmd':8} " + " ".join(f"{k:>17}" for k in keys) + f" {'anon':>6} {'windows':>12}  bin")
for r in rows:
    m = r["m"]; w = m["text_windows"]
    print(f"{r['cmd']:8} " + " ".join(f"{m[k]['mapped_kb']:>7}/{m[k]['size_kb']:<9}" for k in keys)
          + f" {m['anon_kb']:>6} {w['mapped']:>4}/{w['all']:<3}({w['with_init_mapped']:>2})  {r['bin']}")
EOF
