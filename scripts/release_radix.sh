#!/usr/bin/env bash
# Regenerates docs/release-radix.md's data and plot: the seed-000 release
# radix table by formula and by simulation (store and forward, pipelined),
# the (alpha, c) sensitivity sweep, and T(r) per payload as an SVG.
#
#   scripts/release_radix.sh [GROVE_BINARY]    (default build/tools/grove)
#
# Writes docs/data/release-radix*.{txt,tsv} and docs/release-radix-curves.png.
set -euo pipefail
cd "$(dirname "$0")/.."
grove=${1:-build/tools/grove}
out=docs/data
mkdir -p "$out"

"$grove" model radix --segment 64KiB > "$out/release-radix.txt"
# Every radix simulated at N = 1024, for the plot.
"$grove" model radix -n 1024 --sim-all --segment 64KiB --pipeline-radices 2,4,8,16,32,64 \
  --curve "$out/release-radix-curve.tsv" > "$out/release-radix-1024-all.txt"

# The seed's sweep: (alpha, c) from (150, 40) down to (20, 5) us.
: > "$out/release-radix-sweep.txt"
for pair in 150,40 100,25 75,20 50,12.5 20,5; do
  alpha=${pair%,*}
  c=${pair#*,}
  echo "### alpha=$alpha c=$c" >> "$out/release-radix-sweep.txt"
  "$grove" model radix --alpha "$alpha" --c "$c" >> "$out/release-radix-sweep.txt"
done

gnuplot -e "curve='$out/release-radix-curve.tsv'; output='docs/release-radix-curves.png'" \
  scripts/release_radix.gp
echo "release_radix.sh: wrote $out/release-radix*.txt, docs/release-radix-curves.png"
