import glob, re, statistics as st, sys, random
runs = []
for f in sorted(glob.glob(sys.argv[1] + '/run-*.txt')):
    d = {}
    for line in open(f):
        p = line.split()
        if len(p) >= 4 and p[0] in ('safe', 'p2p') and p[2] in ('oneway_mean_us', 'goodput_MiBps'):
            d[(p[0], int(p[1]), p[2])] = float(p[3])
    if d: runs.append(d)
def state(d):
    v = d.get(('p2p', 262144, 'oneway_mean_us'))
    return 'fast' if v is not None and v < 12 else 'slow'
sizes = sorted({k[1] for d in runs for k in d})
for s in ("fast", "slow"):
    rs = [d for d in runs if state(d) == s]
    if not rs: print(f"## {s}: 0 runs"); continue
    print(f'## {s}: {len(rs)} runs')
    for size in sizes:
        r = [d[('safe', size, 'oneway_mean_us')] / d[('p2p', size, 'oneway_mean_us')] for d in rs if ('safe', size, 'oneway_mean_us') in d]
        g = [d[('safe', size, 'goodput_MiBps')] / d[('p2p', size, 'goodput_MiBps')] for d in rs if ('safe', size, 'goodput_MiBps') in d]
        ring = st.median([d[('safe', size, 'oneway_mean_us')] for d in rs]); p2p = st.median([d[('p2p', size, 'oneway_mean_us')] for d in rs])
        boots = sorted(st.median(random.choices(r, k=len(r))) for _ in range(2000))
        print(f'{size:>7}: one-way ring/p2p per-run median ratio {st.median(r):.3f} [{boots[50]:.3f}, {boots[1949]:.3f}] (ring {ring:.3f} us, p2p {p2p:.3f} us; runs with ratio <= 1: {sum(x<=1 for x in r)}/{len(r)}); goodput ratio {st.median(g):.2f}x (min {min(g):.2f})')
