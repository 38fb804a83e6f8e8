#!/usr/bin/env python3
"""Line charts as standalone SVG from bench results, for docs/benchmarks.md.

    bench/svgchart.py replication RESULTS.jsonl OUT.svg   # tps and sustainable tps per kind vs clients
    bench/svgchart.py poolers RESULTS.jsonl OUT.svg       # rate held per target vs clients

Only the standard library: the machines that run the benches have no plotting packages.
"""
import json
import sys
from html import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
W, H, L, R, T, B = 640, 360, 60, 170, 30, 40


def svg(title, xlabel, ylabel, xs, series):
    """series: list of (name, dashed, [(x, y or None)]); xs: the x ticks (log2 spaced by index)."""
    ymax = max([y for _, _, pts in series for _, y in pts if y is not None] + [1]) * 1.1
    px = lambda i: L + (W - L - R) * (i / max(1, len(xs) - 1))
    py = lambda y: H - B - (H - T - B) * (y / ymax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="16" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for k in range(5):
        y = ymax * k / 4
        out.append(f'<line x1="{L}" x2="{W-R}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L-6}" y="{py(y)+4:.1f}" text-anchor="end">{y:.0f}</text>')
    for i, x in enumerate(xs):
        out.append(f'<text x="{px(i):.1f}" y="{H-B+16}" text-anchor="middle">{escape(str(x))}</text>')
    out.append(f'<text x="{(L+W-R)/2}" y="{H-6}" text-anchor="middle">{escape(xlabel)}</text>')
    out.append(f'<text x="14" y="{(T+H-B)/2}" text-anchor="middle" transform="rotate(-90 14 {(T+H-B)/2})">{escape(ylabel)}</text>')
    for n, (name, dashed, pts) in enumerate(series):
        c = COLORS[(n // 2 if any(d for _, d, _ in series) else n) % len(COLORS)]
        idx = {x: i for i, x in enumerate(xs)}
        path = " ".join(f"{px(idx[x]):.1f},{py(y):.1f}" for x, y in pts if y is not None)
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for x, y in pts:
            if y is not None:
                out.append(f'<circle cx="{px(idx[x]):.1f}" cy="{py(y):.1f}" r="2.5" fill="{c}"/>')
        ly = T + 14 * n + 10
        out.append(f'<line x1="{W-R+10}" x2="{W-R+30}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{W-R+35}" y="{ly+4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def replication(path):
    series, xs = [], set()
    for line in open(path):
        s = json.loads(line)
        raw, sus = [], []
        for st in s.get("steps") or [s]:
            xs.add(st["clients"])
            raw.append((st["clients"], st["tps"]))
            r = st.get("replication")
            sus.append((st["clients"], r["sustainable_tps"] if r else None))
        series += [(f"{s['kind']} tps", False, raw), (f"{s['kind']} sustainable", True, sus)]
    return svg("Replication: raw and sustainable tps (tpcb-like)", "clients", "tx/s", sorted(xs), series)


def poolers(path):
    by, xs = {}, set()
    for line in open(path):
        s = json.loads(line)
        xs.add(s["clients"])
        by.setdefault(s["target"], []).append((s["clients"], s.get("held")))
    series = [(t, False, sorted(p)) for t, p in by.items()]
    return svg("Poolers: highest rate held before autostop", "clients", "tx/s held", sorted(xs), series)


if __name__ == "__main__":
    kind, src, dst = sys.argv[1:4]
    open(dst, "w").write({"replication": replication, "poolers": poolers}[kind](src))
