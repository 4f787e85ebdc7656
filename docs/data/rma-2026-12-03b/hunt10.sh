#!/usr/bin/env bash
# The final defaults (16 KiB chunks, 2 KiB CRC coverage, one copy per partly covered range) alone, many short runs, to catch the fast copy state.
G=/work/main/build-release/tools/grove
out=${1:-/work/quiet/s29/hunt10}
mkdir -p $out/default; uptime > $out/uptime-start.txt
end=$(( $(date +%s) + ${SECONDS_TOTAL:-420} ))
i=0
while [ $(date +%s) -lt $end ]; do
  i=$((i+1))
  $G run -n 2 $G rma-bench --modes safe,p2p --sizes 64,512,2KiB,4KiB,6KiB,8KiB,12KiB,32KiB,64KiB,128KiB,256KiB > $out/default/run-$i.txt 2>&1
done
uptime > $out/uptime-end.txt
