#!/usr/bin/env bash
# How each rank waits inside one collective call, no timing: perf stat counts
# the system calls a wait makes (sched_yield, futex, poll, epoll_wait, sleeps),
# context switches and page faults of every rank, default wait policy, for a
# run of I1 and one of I2 timed calls; the difference over the difference in
# calls is the steady state per call (start-up and the summary cancel). A
# call includes its share of the barrier that precedes it (isolated cadence).
# Ranks in rank order. Needs perf (Debian: linux-perf) with access to the
# syscalls tracepoints (root, or kernel.perf_event_paranoid <= -1). Usage:
#   waits.sh GROVE COLL SIZE RANKS [OUT_DIR]
# e.g. waits.sh build/tools/grove allreduce 64 4
# Counts move by about 0.1 per call between runs; compare builds over a few
# runs each (waits.md).
set -euo pipefail
g=$(realpath "$1"); coll=$2; size=$3; n=$4; out=$(realpath -m "${5:-$(mktemp -d)}")
I1=${I1:-500}; I2=${I2:-2000}
events=syscalls:sys_enter_sched_yield,syscalls:sys_enter_futex,syscalls:sys_enter_poll
events+=,syscalls:sys_enter_ppoll,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_nanosleep
events+=,syscalls:sys_enter_clock_nanosleep,raw_syscalls:sys_enter,context-switches,page-faults
mkdir -p "$out"
for it in $I1 $I2; do
  rm -f "$out/$coll-$it"-r*.txt
  # The launcher sets GROVE_JOB_RANK in each rank's environment.
  "$g" run -n "$n" sh -c "exec perf stat -x, -e $events -o '$out/$coll-$it-r'\$GROVE_JOB_RANK.txt \
    -- '$g' bench --coll $coll --sizes $size --algo auto --cell-time 0.05 --min-iters $it \
    --max-iters $it" > "$out/$coll-$it.log" 2>&1
done
# The bench runs whole batches of calls: the calls are its table's iters column.
calls() { awk -v c="$coll" -v s="$size" '$1 == c && $3 == s { print $4 }' "$out/$coll-$1.log"; }
c1=$(calls "$I1"); c2=$(calls "$I2")
echo "$coll $size B, $n ranks, per call by rank (calls $c1 -> $c2):"
for r in $(seq 0 $((n - 1))); do
  # perf stat -x, lines: count,unit,event,...
  awk -F, -v d=$((c2 - c1)) -v r="$r" '
    /^#/ || NF < 3 { next }
    { name = $3; sub(/.*:/, "", name); sub(/^sys_enter_/, "", name)
      if (name == "sys_enter") name = "all_syscalls" }
    FNR == NR { before[name] = $1; next }
    { line = line sprintf(" %s %.2f", name, ($1 - before[name]) / d) }
    END { print "  rank " r ":" line }' "$out/$coll-$I1-r$r.txt" "$out/$coll-$I2-r$r.txt"
done
echo "counts in $out"
