#!/bin/bash
# Alternated A/B of ring variants against point-to-point (2026-12-03, issue
# 13): every round runs each variant once, in turn, so a switch of the
# machine's copy speed between rounds hits every variant alike; each run has
# its own p2p cells, which say which state it caught (p2p 256 KiB one-way
# ~10 us fast, ~23 us slow).
# usage: ab.sh OUTDIR ROUNDS SIZES NRANKS EXTRA_ARGS VARIANT...
#   VARIANT = name=BINDIR[+ENV=VALUE...]: BINDIR holds grove and libgrove.so.0
# e.g. ab.sh out 4 32KiB,256KiB 2 "" old=/work/ab/h28-old new=/work/ab/h28-new \
#        base=/work/ab/h28-new+GROVE_RING_SINGLE_COPY_BYTES=0
set -u
out=$1 rounds=$2 sizes=$3 n=$4 extra=$5
shift 5
mkdir -p "$out"
stamp() { echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
stamp start | tee -a "$out/log"
for ((r = 1; r <= rounds; ++r)); do
  for v in "$@"; do
    name=${v%%=*}
    rest=${v#*=}
    IFS=+ read -r -a parts <<< "$rest"
    dir=${parts[0]}
    envs=("LD_LIBRARY_PATH=$dir" "${parts[@]:1}")
    stamp "round $r $name (${envs[*]})" | tee -a "$out/log"
    env "${envs[@]}" "$dir/grove" run -n "$n" "$dir/grove" rma-bench --modes safe,p2p \
      --sizes "$sizes" $extra --tsv "$out/$name-r$r.tsv" >> "$out/$name-r$r.out" 2>&1 ||
      echo "FAILED: $name round $r" | tee -a "$out/log"
  done
done
stamp end | tee -a "$out/log"
