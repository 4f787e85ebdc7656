#!/usr/bin/env bash
# Variants of the ring alternated run by run (fast/slow state classified afterwards).
G=/work/main/build-release/tools/grove
out=${1:-/work/quiet/s29/hunt2}
mkdir -p $out; uptime > $out/uptime-start.txt
for i in $(seq 1 ${RUNS:-30}); do
  for v in ${VARIANTS:-default chunk16 chunk32 crc1k unchecked}; do
    case $v in
      default) env=();;
      chunk16) env=(GROVE_RING_CHUNK_BYTES=16384);;
      chunk8) env=(GROVE_RING_CHUNK_BYTES=8192);;
      chunk32) env=(GROVE_RING_CHUNK_BYTES=32768);;
      crc1k) env=(GROVE_RING_CRC_BYTES=1024);;
      unchecked) env=(GROVE_RING_SLOT_COPY=unchecked);;
      one_pass) env=(GROVE_RING_SLOT_COPY=one_pass);;
      crc2k) env=(GROVE_RING_CRC_BYTES=2048);;
      crc0) env=(GROVE_RING_CRC_BYTES=0);;
      crc8k) env=(GROVE_RING_CRC_BYTES=8192);;
      crc4k) env=(GROVE_RING_CRC_BYTES=4096);;
    esac
    mkdir -p $out/$v
    env "${env[@]}" $G run -n 2 $G rma-bench --modes safe,p2p --sizes ${SIZES:-4KiB,64KiB,256KiB} > $out/$v/run-$i.txt 2>&1
  done
done
uptime > $out/uptime-end.txt
