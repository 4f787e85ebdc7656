#!/bin/sh
# A tiny real run of `grove bench` at N=2 (two collectives, two sizes, a few
# calls) in OSU's loop order, and checks of its raw TSV and summaries: every
# row carries the span and both ranks' own times, and the summary read back
# shows the per-rank mean; --cpu-time adds one CPU row per rank and cell.
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
echo "bench smoke ok"
