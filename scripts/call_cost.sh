#!/usr/bin/env bash
# Instructions per collective call on one rank, counted by callgrind: a
# deterministic measure of grove's software cost, unaffected by a noisy host.
#
#   scripts/call_cost.sh BUILD_DIR COLLECTIVE BYTES [RANKS] [RANK] [CALLS]
#   scripts/call_cost.sh build-perf bcast 1 2 1
#
# Runs examples/call_loop.cpp under `grove run -n RANKS` (wait_policy=spin);
# rank RANK runs under callgrind, counting only the measured loop (after 200
# warm-up calls), the other ranks natively, so they are always ahead and the
# measured rank hardly ever waits. Prints Ir per call, in all and without
# those spent waiting on the shared-memory path (a loaded host makes the
# measured rank wait now and then); the callgrind file is kept
# (callgrind_annotate --inclusive=yes FILE shows where they go).
# CALL_LOOP=PROGRAM runs that program instead of BUILD_DIR's call_loop (an
# older build's library with today's call_loop.cpp, for collectives its own
# call_loop lacks). Results and method: docs/call-cost.md.
set -euo pipefail

if [ $# -lt 3 ]; then
  sed -n '2,18p' "$0"
  exit 2
fi
build=$1 collective=$2 bytes=$3 ranks=${4:-2} rank=${5:-0} calls=${6:-2000}
out=${TMPDIR:-/tmp}/call_cost.$collective.$bytes.n$ranks.r$rank
loop=${CALL_LOOP:-$build/examples/example_call_loop}

"$build/tools/grove" run -n "$ranks" --param wait_policy=spin sh -c "
  if [ \"\$GROVE_JOB_RANK\" = $rank ]; then
    exec valgrind --tool=callgrind --toggle-collect='*measured_calls*' \
      --callgrind-out-file=$out.callgrind $loop $collective $bytes $calls 200 2>$out.log
  else
    exec $loop $collective $bytes $calls 200
  fi" >/dev/null
ir=$(awk '/Collected/ {print $4}' "$out.log")
# Instructions spent waiting for another rank on the shared-memory path
# (Group::wait_entered, inclusive): how often the measured rank has to wait
# depends on how the host schedules the native ranks, so the comparable
# figure is the count without them.
waiting=$(callgrind_annotate --inclusive=yes "$out.callgrind" 2>/dev/null |
  awk '/Group::wait_entered\(.*\) \[/ { gsub(",", "", $1); if ($1 + 0 > w) w = $1 + 0 }
       END { print w + 0 }')
echo "$collective $bytes B, $ranks ranks, rank $rank: $((ir / calls)) instructions per call," \
  "$(((ir - waiting) / calls)) not waiting ($ir in $calls calls; $out.callgrind)"
