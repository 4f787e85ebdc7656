#!/bin/bash
# A/B of the shared-memory barrier's forms (flags vs release) with Open MPI and MPICH in every run.
set -u
g=/work/main/build-release/tools/grove
o=${1:-/work/quiet/s28/ab1}; mkdir -p $o
for r in 1 2; do
  for n in 2 4 8; do
    for c in barrier-after isolated; do
      for v in flags release; do
        GROVE_SHM_BARRIER=$v $g bench --peers openmpi,mpich -n $n --coll bcast,scatter,barrier,gather,allreduce,alltoall,allgather \
          --algo auto --sizes 1,64,4096 --cadence $c --rounds 1 --cell-time 0.3 --max-iters 600 \
          --tsv $o/$v-n$n-$c-r$r.tsv > $o/$v-n$n-$c-r$r.txt 2>&1
        echo "$v n$n $c r$r rc=$? $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
