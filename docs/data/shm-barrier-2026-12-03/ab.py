# Summary of an A/B directory: per variant, N, cadence, collective, size: grove span and per-rank
# mean (mean over runs) and the ratio to the faster of Open MPI and MPICH under each metric.
import sys,glob,os,statistics as st,collections
d=sys.argv[1]
cells=collections.defaultdict(lambda: collections.defaultdict(list))
for fn in glob.glob(d+'/*.tsv'):
    v,n,rest=os.path.basename(fn).split('-',2)
    cad=rest.rsplit('-r',1)[0]
    for l in open(fn):
        r=l.rstrip('\n').split('\t')
        if len(r)<9 or r[0] in('library',) or r[0].startswith('#'): continue
        span=float(r[7])*1e6; per=[float(x)*1e6 for x in r[8].split(',')]
        cells[(n,cad,r[1],int(r[4]))][(v,r[0])].append((span,per))
def agg(samples):
    spans=[s for run in samples for s in [run[0]]]
    return samples
out=collections.defaultdict(list)
for key in sorted(cells):
    libs=cells[key]
    def m(v,lib):
        xs=libs.get((v,lib))
        if not xs: return None
        span=st.median([x[0] for x in xs])
        nr=len(xs[0][1]); rm=st.mean([st.mean([x[1][i] for x in xs]) for i in range(nr)])
        return span,rm
    row=[]
    for v in ('flags','release'):
        g=m(v,'grove'); o=m(v,'openmpi'); p=m(v,'mpich')
        if not g or not o or not p: row.append(None); continue
        row.append((g[0],g[1],g[0]/min(o[0],p[0]),g[1]/min(o[1],p[1]),o,p))
    if None in row: continue
    print('%s %-13s %-9s %5d | flags %7.2f %6.2f  r %5.2f %5.2f | release %7.2f %6.2f r %5.2f %5.2f | omp %6.2f/%6.2f mpich %8.2f/%6.2f'%(key[0],key[1],key[2],key[3],row[0][0],row[0][1],row[0][2],row[0][3],row[1][0],row[1][1],row[1][2],row[1][3],row[1][4][0],row[1][4][1],row[1][5][0],row[1][5][1]))
    for i,v in enumerate(('flags','release')):
        out[(key[0],key[1],v)].append(row[i])
print()
for k in sorted(out):
    rs=out[k]
    print(k,'cells %d: span<=1 %d, rankmean<=1 %d, span>1.5 %d, rankmean>1.5 %d'%(len(rs),sum(r[2]<=1 for r in rs),sum(r[3]<=1 for r in rs),sum(r[2]>1.5 for r in rs),sum(r[3]>1.5 for r in rs)))
