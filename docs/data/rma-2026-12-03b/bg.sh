#!/usr/bin/env bash
# Ring-safe vs p2p under 64 KiB background ping-pong traffic (-n 8 --background), chunk 16 KiB (default) vs 8 KiB, alternated.
G=/work/main/build-release/tools/grove
out=${1:-/work/quiet/s29/bg}
mkdir -p $out/default $out/chunk8; uptime > $out/uptime-start.txt
for i in $(seq 1 ${RUNS:-3}); do
  $G run -n 8 $G rma-bench --modes safe,p2p --background > $out/default/run-$i.txt 2>&1
  GROVE_RING_CHUNK_BYTES=8192 $G run -n 8 $G rma-bench --modes safe,p2p --background > $out/chunk8/run-$i.txt 2>&1
done
uptime > $out/uptime-end.txt
