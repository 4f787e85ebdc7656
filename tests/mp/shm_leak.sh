#!/bin/sh
# No shared-memory segment is left behind when a rank is killed while
# communicators are being made (docs/reliability.md): 4 ranks under
# `grove run --on-failure=notify` call dup() in a loop (each dup maps a new
# segment) until one of them SIGKILLs itself; every trial kills another
# rank at another moment, rank 0 (which creates the segments) included.
# After each job no segment named after its rank 0's pid may exist, and the
# three survivors must have named the killed rank.
#
#   shm_leak.sh GROVE MP_RELIABILITY WORKDIR
set -u
grove=$1
driver=$2
dir=$3
uid=$(id -u)
mkdir -p "$dir"
out="$dir/shm_leak.out"
before=$(ls /dev/shm | grep -c "^grove\.$uid\.")
trials=0
fail=0
for case in 0:120 1:180 2:240 3:300 0:60 1:90 2:150 3:210; do
  victim=${case%:*}
  delay=${case#*:}
  trials=$((trials + 1))
  "$grove" run -n 4 --on-failure=notify --param wait_policy=block --param timeout_ms=20000 \
    "$driver" dup_killed "$victim" "$delay" >"$out" 2>&1
  status=$?
  pid=$(sed -n 's/^pid of rank 0: \([0-9]*\)$/\1/p' "$out" | head -n 1)
  named=$(grep -c "^dup_killed ok: rank [0-9] named rank $victim$" "$out")
  left=$(ls /dev/shm | grep -c "^grove\.$uid\.$pid\.")
  echo "trial $trials: rank $victim killed after $delay ms: exit $status, $named survivors named it, $left segments left"
  if [ -z "$pid" ] || [ "$status" -ne 137 ] || [ "$named" -ne 3 ] || [ "$left" -ne 0 ]; then
    echo "shm_leak: trial $trials failed; output:"
    cat "$out"
    ls -l /dev/shm | grep "grove\.$uid\.$pid\." 
    fail=1
  fi
done
after=$(ls /dev/shm | grep -c "^grove\.$uid\.")
echo "segments of uid $uid in /dev/shm: $before before, $after after (other jobs may be running)"
if [ $fail -eq 0 ]; then
  echo "shm_leak ok: $trials trials, no segment left"
fi
exit $fail
