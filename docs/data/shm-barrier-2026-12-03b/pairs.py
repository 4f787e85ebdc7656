#!/usr/bin/env python3
# Per cell of grove at N = 2: span median and mean of per-rank means, pooled
# over the two runs of each barrier form, side by side (run in this directory
# after extracting tsv.tar.xz).
import statistics as st, collections
def load(f):
  d=collections.defaultdict(list)
  for l in open(f):
    if not l.startswith('grove\t'): continue
    p=l.rstrip('\n').split('\t')
    r=[float(x) for x in p[8].split(',')]
    d[(p[1],int(p[4]))].append((float(p[7])*1e6, sum(r)/len(r)*1e6))
  return d
for cad in ['isolated','barrier-after']:
  print('==',cad)
  F=[load(f'flags-{cad}-{i}.tsv') for i in (1,2)]; R=[load(f'release-{cad}-{i}.tsv') for i in (1,2)]
  for k in sorted(F[0]):
    if k[1]>4096: continue
    fs=st.median([x[0] for d in F for x in d[k]]); rs=st.median([x[0] for d in R for x in d[k]])
    fm=st.mean([x[1] for d in F for x in d[k]]); rm=st.mean([x[1] for d in R for x in d[k]])
    print('%-10s %5d span flags %.2f release %.2f (%.2f) | rankmean %.2f %.2f'%(k[0],k[1],fs,rs,rs/fs,fm,rm))
