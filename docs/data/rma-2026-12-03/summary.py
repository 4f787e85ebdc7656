#!/usr/bin/env python3
"""Summarises ab.sh's TSVs: per run, per payload, ring-safe and p2p one-way
mean (median over repeats, 95% percentile-bootstrap CI, 2000 resamples) and
goodput, their ratios, and the state the run caught (fast when p2p's largest
payload one-way is under 15 us at 256 KiB).
usage: summary.py DIR [background]"""
import collections, glob, os, random, re, statistics, sys, zlib

def ci(values, seed):
    rnd = random.Random(seed)
    meds = sorted(statistics.median(rnd.choices(values, k=len(values))) for _ in range(2000))
    return meds[49], meds[1949]

def fmt(v):
    return f"{v:.3g}" if v < 100 else f"{v:,.0f}"

d = sys.argv[1]
bg = "1" if len(sys.argv) > 2 else "0"
runs = sorted(glob.glob(os.path.join(d, "*-r*.tsv")),
              key=lambda p: (int(re.search(r"-r(\d+)\.tsv$", p).group(1)), os.path.getmtime(p)))
print("| run | state | payload | safe one-way us | p2p one-way us | ratio | safe MiB/s | p2p MiB/s | ratio |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for path in runs:
    cells = collections.defaultdict(list)
    for line in open(path).read().splitlines()[1:]:
        mode, b, metric, payload, rep, value = line.split("\t")
        if b == bg:
            cells[(mode, metric, int(payload))].append(float(value))
    payloads = sorted({k[2] for k in cells})
    if not payloads:
        continue
    big = max(payloads)
    p2p_big = statistics.median(cells[("p2p", "oneway_mean_us", big)])
    state = ("fast" if p2p_big < 15 else "slow") if big == 262144 else "?"
    name = os.path.basename(path)[:-4]
    for p in payloads:
        row = []
        for metric in ("oneway_mean_us", "goodput_MiBps"):
            s, q = cells[("safe", metric, p)], cells[("p2p", metric, p)]
            ms, mq = statistics.median(s), statistics.median(q)
            (sl, sh), (ql, qh) = ci(s, zlib.crc32(f"{name}{p}{metric}1".encode())), ci(q, zlib.crc32(f"{name}{p}{metric}2".encode()))
            row += [f"{fmt(ms)} [{fmt(sl)}, {fmt(sh)}]", f"{fmt(mq)} [{fmt(ql)}, {fmt(qh)}]",
                    f"{ms / mq:.2f}x"]
        label = f"{p // 1024} KiB" if p >= 1024 else f"{p} B"
        print(f"| {name} | {state} ({p2p_big:.1f}) | {label} | " + " | ".join(row) + " |")
