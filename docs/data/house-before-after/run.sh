#!/usr/bin/env bash
# Issue 10 before/after: baseline (81367dd) vs main, auto, every collective,
# 1 B..1 MiB, N=2,4, two interleaved rounds each. Raw TSVs in $out.
set -euo pipefail
out=${1:-/work/quiet/i10}
mkdir -p "$out"
B=/work/baseline/build/tools/grove
M=/work/main/build/tools/grove
uptime > "$out/load-before.txt"
for round in 1 2; do
  for n in 2 4; do
    for side in base main; do
      g=$B; [ $side = main ] && g=$M
      $g run -n $n $g bench --algo auto --tsv "$out/$side-n$n-r$round.tsv" > "$out/$side-n$n-r$round.txt" 2>&1
    done
  done
done
uptime > "$out/load-after.txt"
for n in 2 4; do
  for side in base main; do
    { cat "$out/$side-n$n-r1.tsv"; tail -n +2 "$out/$side-n$n-r2.tsv"; } > "$out/$side-n$n.tsv"
  done
  $M bench --compare "$out/main-n$n.tsv" "$out/base-n$n.tsv" > "$out/compare-n$n.txt" 2>&1
done
