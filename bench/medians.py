#!/usr/bin/env python3
"""Medians per label of a bench/measure.py JSONL: tps, client CPU per
transaction, the host's idle share and pgarena's latency tails.

usage: medians.py FILE.jsonl
"""
import json, statistics, sys


def load(path):
    """The runs of a measure.py JSONL by label, in first-seen order (runs
    that processed no transaction are left out)."""
    runs = {}
    for line in open(path):
        if line.strip():
            r = json.loads(line)
            if r.get("transactions"):
                runs.setdefault(r["label"], []).append(r)
    return runs


def median(rs, f):
    """The median of f over rs, skipping runs that lack it (nan if all do)."""
    v = [x for x in map(f, rs) if x is not None]
    return statistics.median(v) if v else float("nan")


def main():
    print(f"{'label':28} {'runs':>4} {'tps':>9} {'CPU us/tx':>9} {'idle':>5} {'p99 ms':>7} {'p99.9':>7} {'max':>7}")
    for label, rs in load(sys.argv[1]).items():
        print(f"{label:28} {len(rs):4} {median(rs, lambda r: r['tps']):9.0f} "
              f"{median(rs, lambda r: 1e6 * r['cpu_s'] / r['transactions']):9.2f} "
              f"{median(rs, lambda r: r.get('host_idle')):5.2f} {median(rs, lambda r: r.get('p99_ms')):7.3f} "
              f"{median(rs, lambda r: r.get('p999_ms')):7.3f} {median(rs, lambda r: r.get('max_ms')):7.3f}")


if __name__ == "__main__":
    main()
