#!/bin/bash
# A/B of grove builds (libgrove.so.0 in /work/ab/VARIANT) or settings, Open MPI
# and MPICH measured in each run; variants alternate per run (rotated each round).
# Usage: ab.sh OUTDIR ROUNDS CADENCE SIZES "N:variant=ENV,..." ...
#   variant ENV: space-free list of K=V joined by '+', or 'base'
set -u
out=$1; rounds=$2; cadence=$3; sizes=$4; shift 4
colls=${COLLS:-bcast,scatter,gather,allgather,alltoall,reduce,allreduce}
g=${G:-/work/ab/grove}  # G: another grove binary (the libraries vary by LD_LIBRARY_PATH)
mkdir -p "$out"
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
      env "${envargs[@]}" "$g" bench --peers openmpi,mpich --peer-dir /work/main/build/bench/peers -n "$n" --rounds 1 --cadence "$cadence" \
        --coll "$colls" --sizes "$sizes" \
        --cell-time 0.3 --max-iters 600 --tsv "$out/n$n-$name-r$r.tsv" > "$out/n$n-$name-r$r.txt" 2>&1
      echo "r$r n$n $name rc=$? $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/log"
    done
  done
done
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/log"
