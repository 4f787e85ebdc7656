#!/usr/bin/env bash
# Two library builds (and crc coverage variants), alternated run by run.
G=/work/main/build-release/tools/grove
out=${1:-/work/quiet/s29/ab}
mkdir -p $out; uptime > $out/uptime-start.txt
for i in $(seq 1 ${RUNS:-25}); do
  for v in ${VARIANTS:-base movsb base-crc2k movsb-crc2k}; do
    lib=/work/ab/s29-${v%%-*}
    case $v in *-crc2k) env=(GROVE_RING_CRC_BYTES=2048);; *-crc4k) env=(GROVE_RING_CRC_BYTES=4096);; *-crc1k) env=(GROVE_RING_CRC_BYTES=1024);; *) env=();; esac
    mkdir -p $out/$v
    env LD_LIBRARY_PATH=$lib "${env[@]}" $G run -n 2 $G rma-bench --modes safe,p2p --sizes ${SIZES:-512,4KiB,64KiB,256KiB} > $out/$v/run-$i.txt 2>&1
  done
done
uptime > $out/uptime-end.txt
