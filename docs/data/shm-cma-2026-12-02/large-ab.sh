#!/bin/bash
# A/B of grove settings for the large cells (128 KiB, 256 KiB, 1 MiB), every
# collective of the comparison, Open MPI and MPICH measured in each run;
# variants alternate per run (rotated each round).
# Usage: large-ab.sh GROVE_BUILD OUTDIR ROUNDS "N:variant=ENV,..." ...
#   variant ENV: space-free list of K=V joined by '+', or 'base'
set -u
build=$1; out=$2; rounds=$3; shift 3
mkdir -p "$out"
g=$build/tools/grove
echo "start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/log"
for r in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    n=${spec%%:*}; vs=${spec#*:}
    IFS=',' read -r -a variants <<< "$vs"
    k=${#variants[@]}
    for ((i = 0; i < k; i++)); do
      v=${variants[$(((i + r) % k))]}
      name=${v%%=*}; envs=${v#*=}
      envargs=()
      [ "$envs" != base ] && IFS='+' read -r -a envargs <<< "$envs"
      env "${envargs[@]}" "$g" bench --peers openmpi,mpich -n "$n" --rounds 1 \
        --coll bcast,scatter,gather,allgather,alltoall,reduce,allreduce --sizes 128KiB,256KiB,1MiB \
        --cell-time 0.3 --max-iters 600 --tsv "$out/n$n-$name-r$r.tsv" > "$out/n$n-$name-r$r.txt" 2>&1
      echo "r$r n$n $name rc=$? $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/log"
    done
  done
done
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/log"
