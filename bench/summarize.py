#!/usr/bin/env python3
"""Summarise a bench/vs-*.jsonl: medians per tool and the ratios.

Labels are "CASE TOOL"; the peer is the tool not named pgarena*, and each
pgarena* tool (e.g. pgarena-sp) is compared with it. Loads that counted their
rows compare rows/s, init compares wall time, tpcc runs compare pgarena's NOPM
with the peer's tpmC, and every run compares tps and client CPU per transaction.
"""
import json, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cases = {}
for r in rows:
    case, tool = r["label"].rsplit(" ", 1)
    cases.setdefault(case, {}).setdefault(tool, []).append(r)
peer = next((t for tools in cases.values() for t in tools if not t.startswith("pgarena")), "pgbench")

def med(rs, f):
    return statistics.median(f(r) for r in rs)

width = max([12] + [len(f"{c} ({t})") for c, tools in cases.items() for t in tools if t.startswith("pgarena-")])
print()
print(f"{'case':<{width}} {'metric':<22} {peer:>12} {'pgarena':>12} {'ratio':>8}")
for case, tools in cases.items():
    pb = tools.get(peer, [])
    for tool in [t for t in tools if t.startswith("pgarena")]:
        pa = tools[tool]
        name = case if tool == "pgarena" else f"{case} ({tool})"
        if not pb or not pa:
            continue
        if any(r["exit"] != 0 for r in pb + pa):
            print(f"{name:<{width}} some runs failed: {[r['exit'] for r in pb + pa]}")
        if all("rows" in r for r in pb + pa):
            a, b = med(pb, lambda r: r["wall_s"]), med(pa, lambda r: r["wall_s"])
            print(f"{name:<{width}} {'wall s (median)':<22} {a:>12.2f} {b:>12.2f} {b / a:>8.2f}")
            a, b = med(pb, lambda r: r["rows"] / r["wall_s"]), med(pa, lambda r: r["rows"] / r["wall_s"])
            print(f"{name:<{width}} {'rows/s (median)':<22} {a:>12.0f} {b:>12.0f} {b / a:>8.2f}")
            continue
        if case == "init":
            a, b = med(pb, lambda r: r["wall_s"]), med(pa, lambda r: r["wall_s"])
            print(f"{name:<{width}} {'wall s (median)':<22} {a:>12.2f} {b:>12.2f} {b / a:>8.2f}")
            continue
        if all("tpmc" in r for r in pb) and all("nopm" in r for r in pa):
            a, b = med(pb, lambda r: r["tpmc"]), med(pa, lambda r: r["nopm"])
            print(f"{name:<{width}} {'NOPM / tpmC (median)':<22} {a:>12.0f} {b:>12.0f} {b / a:>8.3f}")
        a, b = med(pb, lambda r: r["tps"]), med(pa, lambda r: r["tps"])
        print(f"{name:<{width}} {'tps (median)':<22} {a:>12.1f} {b:>12.1f} {b / a:>8.3f}")
        cpa = med(pb, lambda r: 1e6 * r["cpu_s"] / r["transactions"])
        cpb = med(pa, lambda r: 1e6 * r["cpu_s"] / r["transactions"])
        print(f"{name:<{width}} {'client CPU us/tx':<22} {cpa:>12.1f} {cpb:>12.1f} {cpb / cpa:>8.3f}")
