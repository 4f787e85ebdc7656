#!/usr/bin/env python3
"""Summarise large-ab.sh TSVs: per N, cell and variant, grove's median span and
OSU per-rank mean, and the ratios against Open MPI and the faster MPI measured
in the same runs (pooled over rounds)."""
import sys, glob, os, re, statistics as st
from collections import defaultdict
d = sys.argv[1]
data = defaultdict(lambda: defaultdict(list))  # (n,variant) -> (lib,coll,bytes) -> rows
for f in glob.glob(os.path.join(d, 'n*-r*.tsv')):
    m = re.match(r'n(\d+)-(\w+)-r(\d+)\.tsv', os.path.basename(f))
    n, var = int(m.group(1)), m.group(2)
    for line in open(f):
        if line.startswith('#') or line.startswith('library'): continue
        p = line.rstrip('\n').split('\t')
        if len(p) < 9: continue
        lib, coll, algo, ranks, b = p[0], p[1], p[2], p[3], int(p[4])
        if '/' in algo: continue
        rs = [float(x) for x in p[8].split(',')] if p[8] != '-' else []
        data[(n, var)][(lib, coll, b)].append((float(p[7]), rs))
def metrics(rows):
    span = st.median(r[0] for r in rows) * 1e6
    k = len(rows[0][1])
    per = st.mean(st.mean(r[1][i] for r in rows) for i in range(k)) * 1e6 if k else float('nan')
    return span, per
out = defaultdict(dict)
for (n, var), cells in sorted(data.items()):
    for (lib, coll, b), rows in cells.items():
        out[(n, coll, b)][(var, lib)] = metrics(rows)
variants = sorted({v for (n, v) in data})
for key in sorted(out):
    n, coll, b = key
    row = out[key]
    peers = {}
    for lib in ('openmpi', 'mpich'):
        vals = [row[(v, lib)] for v in variants if (v, lib) in row]
        if vals:
            peers[lib] = (st.median(x[0] for x in vals), st.median(x[1] for x in vals))
    if not peers: continue
    s = f"N={n} {coll:9s} {b:>8d} |"
    for v in variants:
        if (v, 'grove') not in row: continue
        g = row[(v, 'grove')]
        ro = g[0] / peers['openmpi'][0] if 'openmpi' in peers else float('nan')
        fs = min(p[0] for p in peers.values()); fr = min(p[1] for p in peers.values())
        s += f" {v}: {g[0]:7.1f}/{g[1]:7.1f} (x{g[0]/fs:4.2f}/{g[1]/fr:4.2f}) |"
    s += f" ompi {peers.get('openmpi',(0,0))[0]:7.1f}/{peers.get('openmpi',(0,0))[1]:7.1f} mpich {peers.get('mpich',(0,0))[0]:7.1f}/{peers.get('mpich',(0,0))[1]:7.1f}"
    print(s)
