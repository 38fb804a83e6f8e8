#!/usr/bin/env python3
"""Summarise a vs-pgbench.jsonl: medians per tool and the ratios."""
import json, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cases = {}
for r in rows:
    case, tool = r["label"].rsplit(" ", 1)
    cases.setdefault(case, {}).setdefault(tool, []).append(r)

def med(rs, f):
    return statistics.median(f(r) for r in rs)

print()
print(f"{'case':<12} {'metric':<22} {'pgbench':>12} {'pgarena':>12} {'ratio':>8}")
for case, tools in cases.items():
    pb, pa = tools.get("pgbench", []), tools.get("pgarena", [])
    if not pb or not pa:
        continue
    if any(r["exit"] != 0 for r in pb + pa):
        print(f"{case:<12} some runs failed: {[r['exit'] for r in pb + pa]}")
    if case == "init":
        a, b = med(pb, lambda r: r["wall_s"]), med(pa, lambda r: r["wall_s"])
        print(f"{case:<12} {'wall s (median)':<22} {a:>12.2f} {b:>12.2f} {b / a:>8.2f}")
        continue
    a, b = med(pb, lambda r: r["tps"]), med(pa, lambda r: r["tps"])
    print(f"{case:<12} {'tps (median)':<22} {a:>12.1f} {b:>12.1f} {b / a:>8.3f}")
    cpa = med(pb, lambda r: 1e6 * r["cpu_s"] / r["transactions"])
    cpb = med(pa, lambda r: 1e6 * r["cpu_s"] / r["transactions"])
    print(f"{case:<12} {'client CPU us/tx':<22} {cpa:>12.1f} {cpb:>12.1f} {cpb / cpa:>8.3f}")
