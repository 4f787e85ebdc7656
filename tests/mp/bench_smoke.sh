#!/bin/sh
# A tiny real run of `grove bench` at N=2 (two collectives, two sizes, a few
# calls) in OSU's loop order, and checks of its raw TSV and summaries: every
# row carries the span and both ranks' own times, and the summary read back
# shows the per-rank mean; --cpu-time adds one CPU row per rank and cell;
# --calibrate writes a ping-pong row per cell, moment and size, and at N = 3
# too (rank 2 only joins its barrier).
# Quotes no timing; asserts only shapes and counts.
#
#   bench_smoke.sh GROVE
set -u
grove=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/grove-bench-smoke.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 120 "$grove" run -n 2 --param wait_policy=block "$grove" bench --coll bcast,allreduce \
  --sizes 4,64 --algo auto --cadence barrier-after --cell-time 0.005 --warmup 1 --min-iters 1 \
  --max-iters 3 --tsv "$dir/run.tsv" >"$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; fail "grove bench exited with $?"; }
grep -q "cadence barrier-after, a barrier after each call" "$dir/out.txt" || fail "no loop line"
head -1 "$dir/run.tsv" | grep -q "^library	collective	algorithm	ranks	bytes	cadence	iteration	seconds	rank_seconds$" ||
  fail "TSV header"
# One batch of 8 calls per cell (--max-iters 3 stops after the first batch).
rows=$(tail -n +2 "$dir/run.tsv" | awk -F'\t' '$6 == "barrier-after" && NF == 9 && split($9, t, ",") == 2' | wc -l)
[ "$rows" -eq 32 ] || fail "expected 32 rows with two per-rank times, got $rows"
"$grove" bench --from-tsv "$dir/run.tsv" >"$dir/summary.txt" 2>&1 || fail "--from-tsv exited with $?"
grep -q "rank_mean_us \[95% CI\] (min..max)" "$dir/summary.txt" || fail "no per-rank mean column"
n=$(grep -c "^grove  *\(bcast\|allreduce\)  *auto  *2  *\(4\|64\)  *barrier-after  *8 .*\.\.[0-9]" "$dir/summary.txt")
[ "$n" -eq 4 ] || { cat "$dir/summary.txt"; fail "expected 4 summary rows with a per-rank mean, got $n"; }
# Without --cpu-time no CPU rows; with it, one per rank per cell, each a
# rank's mean CPU seconds per call (a number, never negative).
[ "$(awk -F'\t' '$3 ~ /cpu_per_call/' "$dir/run.tsv" | wc -l)" -eq 0 ] || fail "CPU rows without --cpu-time"
timeout 120 "$grove" run -n 2 --param wait_policy=block "$grove" bench --coll barrier,bcast \
  --sizes 64 --algo auto --cpu-time --cell-time 0.005 --warmup 1 --min-iters 1 --max-iters 3 \
  --tsv "$dir/cpu.tsv" >"$dir/cpu.txt" 2>&1 || { cat "$dir/cpu.txt"; fail "grove bench --cpu-time exited with $?"; }
cpu=$(awk -F'\t' '$3 == "auto/cpu_per_call" && $4 == 2 && $8 + 0 >= 0 && $8 ~ /^[0-9.e+-]+$/' "$dir/cpu.tsv" | wc -l)
[ "$cpu" -eq 4 ] || { cat "$dir/cpu.tsv"; fail "expected 4 cpu_per_call rows (2 cells x 2 ranks), got $cpu"; }
calls=$(awk -F'\t' '$3 == "auto"' "$dir/cpu.tsv" | wc -l)
[ "$calls" -eq 16 ] || fail "expected 16 timed rows beside the CPU rows, got $calls"
# --calibrate: per cell, before and after, at 8 B and 1 MiB: 4 rows, each
# a positive one-way time; the file is appended to, its header written once.
# With --calibrate-retries a cell run again (the state changed during it)
# still leaves the 4 rows of its last run only.
for n in 2 3; do
  timeout 120 "$grove" run -n $n --param wait_policy=block "$grove" bench --coll bcast,scatter \
    --sizes 64 --algo auto --cell-time 0.005 --warmup 1 --min-iters 1 --max-iters 3 \
    --calibrate "$dir/calibration.tsv" --calibrate-retries $((n - 2)) >"$dir/calibrate.txt" 2>&1 ||
    { cat "$dir/calibrate.txt"; fail "grove bench --calibrate at N=$n exited with $?"; }
done
[ "$(grep -c '^cell	moment	bytes	one_way_us$' "$dir/calibration.tsv")" -eq 1 ] || fail "calibration header"
for n in 2 3; do
  for cell in bcast scatter; do
    c=$(awk -F'\t' -v k="$cell/auto/$n/64/isolated" \
      '$1 == k && ($2 == "before" || $2 == "after") && ($3 == 8 || $3 == 1048576) && $4 + 0 > 0' \
      "$dir/calibration.tsv" | wc -l)
    [ "$c" -eq 4 ] || { cat "$dir/calibration.tsv"; fail "expected 4 calibration rows of $cell at N=$n, got $c"; }
  done
done
[ "$(wc -l < "$dir/calibration.tsv")" -eq 17 ] || fail "expected 16 calibration rows and a header"
"$grove" bench --from-tsv "$dir/run.tsv" --calibrate "$dir/x.tsv" >"$dir/refused.txt" 2>&1 &&
  fail "--calibrate with --from-tsv was accepted"
grep -q "calibrate applies to a plain run" "$dir/refused.txt" || { cat "$dir/refused.txt"; fail "no refusal text"; }
"$grove" bench --calibrate-retries 2 >"$dir/refused.txt" 2>&1 &&
  fail "--calibrate-retries without --calibrate was accepted"
grep -q "calibrate-retries goes with --calibrate FILE" "$dir/refused.txt" ||
  { cat "$dir/refused.txt"; fail "no refusal text for --calibrate-retries"; }
echo "bench smoke ok"
