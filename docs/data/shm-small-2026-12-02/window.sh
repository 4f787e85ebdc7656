#!/bin/bash
# The quiet window of the 2026-12-02 13:13 session. Nothing else may run.
set -u
cd /work/main
q=/work/quiet/s25
echo "window start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $q/window.log
# 1. Issue 11: the model against measurement, each cell priced with its state's table.
scripts/tune-measure.sh docs/data/tune-2026-12-02b > $q/tune.log 2>&1
echo "tune done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $q/window.log
# 2. Issue 14: the shm changes of this session (new) against dca5140 (base), peers in each run.
V="base=LD_LIBRARY_PATH=/work/ab/base,new=LD_LIBRARY_PATH=/work/ab/new"
S="1,4,16,64,256,1KiB,1MiB"
$q/ab.sh $q/ab-n2-osu 2 barrier-after "$S" "2:$V"
$q/ab.sh $q/ab-n2-iso 2 isolated "$S" "2:$V"
$q/ab.sh $q/ab-n4-osu 2 barrier-after "$S" "4:$V"
$q/ab.sh $q/ab-n8-osu 1 barrier-after "$S" "8:$V"
# 3. A longer spin window on a core of one's own, N = 2, 1 MiB.
$q/ab.sh $q/ab-n2-spin 2 barrier-after "1MiB" "2:new=LD_LIBRARY_PATH=/work/ab/new,spin1000=LD_LIBRARY_PATH=/work/ab/new+GROVE_WAIT_SPIN_US=1000"
echo "window end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $q/window.log
