#!/usr/bin/env bash
# Instructions per call of one collective, no timing: callgrind counts only
# inside grove::Comm::<coll> (--toggle-collect) on every rank, with the block
# wait policy, for a run of I1 and one of I2 timed calls; the difference over
# I2 - I1 is the steady state (first-call resolution and start-up cancel).
# Ranks in pid order (rank order). Usage:
#   instructions.sh GROVE COLL SIZE RANKS [OUT_DIR]
# e.g. instructions.sh build/tools/grove allgatherv 1 2
# Wait rounds (polls before a sleep) still vary from run to run by a hundred
# or so instructions; compare per function with callgrind_annotate.
set -euo pipefail
g=$1; coll=$2; size=$3; n=$4; out=${5:-$(mktemp -d)}
I1=${I1:-100}; I2=${I2:-300}
mkdir -p "$out"
for it in $I1 $I2; do
  rm -f "$out/$coll-$it"-*.out
  "$g" run -n "$n" --param wait_policy=block valgrind --tool=callgrind \
    "--toggle-collect=grove::Comm::$coll(*" --callgrind-out-file="$out/$coll-$it-%p.out" \
    "$g" bench --coll "$coll" --sizes "$size" --algo auto --warmup 3 --min-iters "$it" \
    --max-iters "$it" > "$out/$coll-$it.log" 2>&1
  for f in $(ls "$out/$coll-$it"-*.out | sort -t- -k3 -n); do
    grep -m1 '^summary:\|^totals:' "$f" | awk '{print $2}'
  done > "$out/$coll-$it.tot"
done
echo "$coll $size B, $n ranks, instructions per call by rank:" \
  "$(paste "$out/$coll-$I1.tot" "$out/$coll-$I2.tot" |
    awk -v d=$((I2 - I1)) '{printf "%.0f ", ($2 - $1) / d}')"
echo "profiles in $out"
