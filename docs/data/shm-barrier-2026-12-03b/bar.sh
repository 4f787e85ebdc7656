#!/usr/bin/env bash
# flags vs release barrier at N=2, alternated, both loops, with both MPIs.
G=/work/main/build-release/tools/grove
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=/work/quiet/s30/bar; uptime > $out/uptime-start.txt
for rep in 1 2; do
  for cad in isolated barrier-after; do
    for v in flags release; do
      GROVE_SHM_BARRIER=$v $G bench --peers openmpi,mpich -n 2 --algo auto --coll bcast,scatter,gather,allgather,alltoall,barrier,allreduce --sizes 1:64KiB:4 --cadence $cad --rounds 3 --cell-time 0.3 --max-iters 600 --tsv $out/$v-$cad-$rep.tsv > $out/$v-$cad-$rep.txt 2>$out/$v-$cad-$rep.err
      uptime >> $out/uptime-start.txt
    done
  done
done
uptime > $out/uptime-end.txt
