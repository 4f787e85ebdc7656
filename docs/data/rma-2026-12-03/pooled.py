#!/usr/bin/env python3
"""Pools every repeat of each variant over the runs of ab.sh directories
(only runs in the slow state, p2p 256 KiB one-way >= 15 us, or only the fast
with --fast; runs that changed state, by their 64 B cells, are left out): median [95% percentile-bootstrap CI, 2000 resamples] of
ring-safe and p2p one-way mean and goodput, and the ratio of the medians.
usage: pooled.py [--fast] [--background] DIR..."""
import collections, glob, os, random, re, statistics, sys, zlib

args = [a for a in sys.argv[1:] if not a.startswith("--")]
fast = "--fast" in sys.argv
bg = "1" if "--background" in sys.argv else "0"

def ci(values, key):
    rnd = random.Random(zlib.crc32(key.encode()))
    meds = sorted(statistics.median(rnd.choices(values, k=len(values))) for _ in range(2000))
    return meds[49], meds[1949]

def fmt(v):
    return f"{v:.3g}" if v < 100 else f"{v:,.0f}"

pool = collections.defaultdict(list)
runs = collections.Counter()
for d in args:
    for path in glob.glob(os.path.join(d, "*-r*.tsv")):
        variant = re.sub(r"-r\d+\.tsv$", "", os.path.basename(path))
        cells = collections.defaultdict(list)
        for line in open(path).read().splitlines()[1:]:
            mode, b, metric, payload, rep, value = line.split("\t")
            if b == bg:
                cells[(mode, metric, int(payload))].append(float(value))
        # The state: fast when p2p's 256 KiB one-way (the run's last cell)
        # is under 15 us; a run with 64 B cells counts only if its first
        # cell (ring-safe 64 B, under 0.3 us when fast) and p2p's 64 B say
        # the same state (else it changed during the run).
        big = cells.get(("p2p", "oneway_mean_us", 262144))
        if not big or (statistics.median(big) < 15) != fast:
            continue
        small = [cells.get((m, "oneway_mean_us", 64)) for m in ("safe", "p2p")]
        if all(small) and any((statistics.median(v) < 0.3) != fast for v in small):
            continue
        runs[variant] += 1
        for k, v in cells.items():
            pool[(variant,) + k] += v
print("| variant (runs) | payload | ring-safe one-way us | p2p one-way us | ratio | ring-safe MiB/s | p2p MiB/s | ratio |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for variant in sorted(runs):
    for p in sorted({k[3] for k in pool if k[0] == variant}):
        row = []
        for metric in ("oneway_mean_us", "goodput_MiBps"):
            s, q = pool[(variant, "safe", metric, p)], pool[(variant, "p2p", metric, p)]
            ms, mq = statistics.median(s), statistics.median(q)
            sl, sh = ci(s, f"{variant}{p}{metric}s")
            ql, qh = ci(q, f"{variant}{p}{metric}q")
            row += [f"{fmt(ms)} [{fmt(sl)}, {fmt(sh)}]", f"{fmt(mq)} [{fmt(ql)}, {fmt(qh)}]", f"{ms / mq:.2f}x"]
        label = f"{p // 1024} KiB" if p >= 1024 else f"{p} B"
        print(f"| {variant} ({runs[variant]}) | {label} | " + " | ".join(row) + " |")
