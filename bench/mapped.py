#!/usr/bin/env python3
"""Which pages of a static Go binary a process has mapped: mapped.py PID BIN.

Reads /proc/PID/maps and /proc/PID/pagemap (root) while the process is held
(bench/mapped.sh holds it at exit_group) and prints one JSON line: KB mapped
of each part of the binary (.text, .rodata, the parts of .gopclntab,
.noptrdata and .data), anonymous KB, and how many of the 64 KB windows of
.text holding package initialisation code are mapped. A read fault on a
file maps the page-cache pages around it (fault-around, 64 KB by default),
so code that runs once, such as a package's init, maps its whole window.
"""
import json
import re
import struct
import subprocess
import sys

pid, binary = sys.argv[1], sys.argv[2]
WINDOW = 64 << 10

sections = {}
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m:
        sections[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16))

# .gopclntab's parts, from its header (runtime/symtab.go, pcHeader).
va, off, size = sections[".gopclntab"]
with open(binary, "rb") as f:
    f.seek(off)
    hdr = f.read(80)
_, _, _, _, _, _, _, _, fname, cu, filetab, pctab, pcln = struct.unpack_from("<IBBBBqQQQQQQQ", hdr)
parts = [(name, sections[name][0], sections[name][0] + sections[name][2])
         for name in (".text", ".rodata", ".noptrdata", ".data") if name in sections]
parts += [("pclntab.funcname", va + fname, va + cu), ("pclntab.files", va + cu, va + pctab),
          ("pclntab.pctab", va + pctab, va + pcln), ("pclntab.functab", va + pcln, va + size)]

present = set()  # virtual page numbers of the binary's mappings that are mapped
anon_kb = 0
exe = subprocess.run(["readlink", "-f", binary], capture_output=True, text=True).stdout.strip()
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
    for line in maps:
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if len(f) < 6 or f[5] != exe:
            continue
        pagemap.seek(lo // 4096 * 8)
        data = pagemap.read((hi - lo) // 4096 * 8)
        for i in range(len(data) // 8):
            if struct.unpack_from("<Q", data, i * 8)[0] >> 63:
                present.add(lo // 4096 + i)
with open(f"/proc/{pid}/smaps") as smaps:
    for line in smaps:
        if line.startswith("Anonymous:"):
            anon_kb += int(line.split()[1])

out = {"pid": int(pid)}
for name, lo, hi in parts:
    pages = range(lo // 4096, (hi + 4095) // 4096)
    out[name] = {"size_kb": (hi - lo) // 1024, "mapped_kb": 4 * sum(p in present for p in pages)}
out["anon_kb"] = anon_kb

# 64 KB windows of .text holding a package's init function.
nm = subprocess.run(["go", "tool", "nm", "-size", binary], capture_output=True, text=True).stdout
windows = set()
for line in nm.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "Tt" and re.search(r"\.init(\.\d+)?$", f[3]) and "(" not in f[3]:
        a, n = int(f[0], 16), int(f[1])
        windows.update(range(a // WINDOW, (a + n - 1) // WINDOW + 1))
text_lo, _, text_size = sections[".text"]
mapped_windows = {p * 4096 // WINDOW for p in present
                  if text_lo // 4096 <= p < (text_lo + text_size) // 4096}
out["text_windows"] = {"all": (text_size + WINDOW - 1) // WINDOW, "mapped": len(mapped_windows),
                       "with_init": len(windows), "with_init_mapped": len(windows & mapped_windows)}
print(json.dumps(out))
