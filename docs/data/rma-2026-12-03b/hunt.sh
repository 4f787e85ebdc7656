#!/usr/bin/env bash
# Ring-safe vs p2p at 64 B, 4 KiB, 256 KiB: many short runs, to catch both copy states.
G=/work/main/build-release/tools/grove
out=${1:-/work/quiet/s29/hunt}
mkdir -p $out
uptime > $out/uptime-start.txt
for i in $(seq 1 ${RUNS:-150}); do
  $G run -n 2 $G rma-bench --modes safe,p2p --sizes 64,512,4KiB,32KiB,256KiB > $out/run-$i.txt 2>&1
done
uptime > $out/uptime-end.txt
