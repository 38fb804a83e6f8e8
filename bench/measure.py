#!/usr/bin/env python3
"""Run a command, print one JSON line: wall seconds, client CPU seconds
(user+sys of the command and its children, and each apart), exit code, and the numbers it
reported (tps, transactions) parsed from pgbench or sysbench text, go-tpc's tpcc summary
(tpmc, transactions, failed) or pgarena --json (and nopm, tpm for tpcc); pgarena's text
latency percentiles (p99_ms, p999_ms, max_ms); and the host's idle share over the run
(host_idle, from /proc/stat: a client that leaves the server's CPUs idle is slow to answer).

usage: measure.py LABEL -- COMMAND...
"""
import json, re, resource, subprocess, sys, time

def host_cpu():
    """(idle, total) jiffies of all CPUs so far (idle includes iowait)."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return f[3] + f[4], sum(f)

def main():
    label = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, cpu0 = time.monotonic(), host_cpu()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall, cpu1 = time.monotonic() - t0, host_cpu()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = after.ru_utime - before.ru_utime
    system = after.ru_stime - before.ru_stime
    out = {"label": label, "wall_s": round(wall, 3), "cpu_s": round(user + system, 3),
           "user_s": round(user, 3), "sys_s": round(system, 3), "exit": p.returncode}
    if cpu1[1] > cpu0[1]:
        out["host_idle"] = round((cpu1[0] - cpu0[0]) / (cpu1[1] - cpu0[1]), 3)
    text = p.stdout + p.stderr
    m = re.search(r"latency percentiles: .*p99 ([0-9.]+), p99\.9 ([0-9.]+), max ([0-9.]+) ms", text)
    if m:
        out["p99_ms"], out["p999_ms"], out["max_ms"] = (float(x) for x in m.groups())
    m = re.search(r"^tps = ([0-9.]+)", text, re.M)
    if m:
        out["tps"] = float(m.group(1))
    m = re.search(r"number of transactions actually processed: (\d+)", text)
    if m:
        out["transactions"] = int(m.group(1))
    # go-tpc tpcc run: "[Summary] NEW_ORDER - Takes(s): 60.0, Count: N, ..." per
    # type (NEW_ORDER_ERR etc. for errors) and "tpmC: X, tpmTotal: Y, ...".
    m = re.search(r"^tpmC: ([0-9.]+)", text, re.M)
    if m:
        out["tpmc"] = float(m.group(1))
        counts = re.findall(r"^\[Summary\] (\w+) - Takes\(s\): ([0-9.]+), Count: (\d+)", text, re.M)
        ok = [(float(t), int(c)) for n, t, c in counts if not n.endswith("_ERR")]
        out["transactions"] = sum(c for _, c in ok)
        out["failed"] = sum(int(c) for n, _, c in counts if n.endswith("_ERR"))
        out["tps"] = round(sum(c / t for t, c in ok if t > 0), 3)
    # sysbench: "transactions:  N  (X per sec.)", "ignored errors:  N  (...)"
    m = re.search(r"^\s*transactions:\s+(\d+)\s+\(([0-9.]+) per sec", text, re.M)
    if m:
        out["transactions"], out["tps"] = int(m.group(1)), float(m.group(2))
        m = re.search(r"^\s*ignored errors:\s+(\d+)", text, re.M)
        out["failed"] = int(m.group(1)) if m else 0
    try:
        j = json.loads(p.stdout)
        out["tps"], out["transactions"] = j["tps"], j["transactions"]
        out["failed"] = j.get("failed", 0)
        for k in ("nopm", "tpm"):
            if k in j:
                out[k] = j[k]
    except (ValueError, KeyError):
        pass
    if p.returncode != 0:
        sys.stderr.write(text[-2000:])
    print(json.dumps(out), flush=True)

main()
