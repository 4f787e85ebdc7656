#!/bin/sh
# No shared-memory segment is left behind when a rank is killed while
# communicators are being made (docs/reliability.md, section 2): 4 ranks
# under `grove run --on-failure=notify` call dup() in a loop (each dup maps a
# new segment) until one of them SIGKILLs itself; every trial kills another
# rank at another moment, rank 0 (which creates the segments) included.
# The launcher's sweep of segments whose maker is gone is switched off
# (run_sweep_stale=false): what is counted is what the ranks themselves
# removed. After each job no segment named after its rank 0 may exist
# (/dev/shm/grove-<pid>-<start>...), and the three survivors must have named
# the killed rank. The last `grove run` (sweep on) removes whatever a failed
# trial left.
#
#   shm_leak.sh GROVE MP_RELIABILITY WORKDIR
set -u
grove=$1
driver=$2
dir=$3
mkdir -p "$dir"
out="$dir/shm_leak.out"
trials=0
fail=0
for case in 0:120 1:180 2:240 3:300 0:60 1:90 2:150 3:210; do
  victim=${case%:*}
  delay=${case#*:}
  trials=$((trials + 1))
  "$grove" run -n 4 --on-failure=notify --param run_sweep_stale=false --param wait_policy=block \
    --param timeout_ms=20000 "$driver" dup_killed "$victim" "$delay" >"$out" 2>&1
  status=$?
  pid=$(sed -n 's/^pid of rank 0: \([0-9]*\)$/\1/p' "$out" | head -n 1)
  named=$(grep -c "^dup_killed ok: rank [0-9] named rank $victim$" "$out")
  dups=$(sed -n 's/^dups made: \([0-9]*\)$/\1/p' "$out" | head -n 1)
  left=$(ls /dev/shm | grep -c "^grove-$pid-")
  echo "trial $trials: rank $victim killed after $delay ms: exit $status, ${dups:-?} dups, $named survivors named it, $left segments left"
  if [ -z "$pid" ] || [ "$status" -ne 137 ] || [ "$named" -ne 3 ] || [ "$left" -ne 0 ]; then
    echo "shm_leak: trial $trials failed; output:"
    cat "$out"
    ls -l /dev/shm | grep "grove-$pid-"
    fail=1
  fi
done
"$grove" run -n 1 true
if [ $fail -eq 0 ]; then
  echo "shm_leak ok: $trials trials, no segment left"
fi
exit $fail
