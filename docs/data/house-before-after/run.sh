#!/usr/bin/env bash
# Issue 10 before/after: baseline (81367dd) vs main, auto, every collective,
# 1 B..1 MiB, N=2,4. This machine's copies between cores run at one of two
# speeds and it moves between them within minutes (docs/tuning.md), so the
# two builds alternate per collective (base, main, base, main, ...), ROUNDS
# times, and each comparison pools only rounds a few seconds apart. Raw TSVs
# in $out.
set -euo pipefail
out=${1:-/work/quiet/i10}
rounds=${ROUNDS:-3}
ranks=${RANKS:-2 4}
# Bounds the samples per cell and job (the comparison bootstraps every cell).
max_iters=${MAX_ITERS:-2000}
colls=${COLLS:-bcast,scatter,gather,allgather,allgatherv,alltoall,alltoallv,barrier,reduce,allreduce,reduce_scatter,fence}
mkdir -p "$out"
B=/work/baseline/build/tools/grove
M=/work/main/build/tools/grove
uptime > "$out/load-before.txt"
for n in $ranks; do
  for side in base main; do : > "$out/$side-n$n.tsv"; done
  for coll in ${colls//,/ }; do
    for round in $(seq "$rounds"); do
      for side in base main; do
        g=$B; [ $side = main ] && g=$M
        t="$out/$side-n$n-$coll-r$round.tsv"
        $g run -n $n $g bench --algo auto --coll "$coll" --max-iters "$max_iters" --tsv "$t" > "${t%.tsv}.txt" 2>&1
        # One header, then every job's rows.
        if [ -s "$out/$side-n$n.tsv" ]; then tail -n +2 "$t"; else cat "$t"; fi >> "$out/$side-n$n.tsv"
      done
    done
  done
done
uptime > "$out/load-after.txt"
# After the measurements: the comparison bootstraps every cell (minutes).
for n in $ranks; do
  $M bench --compare "$out/main-n$n.tsv" "$out/base-n$n.tsv" > "$out/compare-n$n.txt" 2>&1
done
