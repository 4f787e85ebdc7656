#!/usr/bin/env bash
# The simulator's results for a spread of runs, to compare two builds bit
# for bit (docs/simulator.md, "Where the time goes"): every schedule
# algorithm of every collective three ways (real bytes with jitter and 4
# ranks per node; sizes only at 64 ranks; blocking sends, a receive cost, 2
# threads and another root), then a few larger runs, with a pLogP table.
#   scripts/sim-golden.sh GROVE OUTDIR
# writes OUTDIR/N.trace (grove sim --trace), OUTDIR/N.out (the output
# with --per-rank, without the lines that depend on the machine or on the
# memory model: wall_s, events_per_s, trace, estimate, and schedules, which
# counts how the schedules are held, not what they do) and OUTDIR/index
# (each run's arguments and exit status). Two builds agree when
#   diff -r OUTDIR1 OUTDIR2
# finds nothing. Not a timing measurement (the runs take a few minutes).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 GROVE OUTDIR" >&2
  exit 2
fi
grove=$1
out=$2
mkdir -p "$out"
rm -f "$out"/*.trace "$out"/*.out "$out/index"
plogp="$out/plogp.tsv"
cat >"$plogp" <<'TABLE'
L 50
bytes os_us or_us g_us
0 1 2 1.5
1024 2 3 3
65536 10 12 20
1048576 100 80 300
TABLE
i=0
run() {
  i=$((i + 1))
  local status=0
  "$grove" sim "$@" --per-rank --trace "$out/$i.trace" >"$out/$i.out" 2>&1 || status=$?
  echo "$* -> $status" >>"$out/index"
  sed -i '/^wall_s\|^events_per_s\|^trace\t\|^estimate\|^schedules\t/d' "$out/$i.out"
}
"$grove" select --algorithms | awk '
    /^[a-z_]+$/ { coll = $1; next }
    $1 != "shm" && $1 != "hier" { print coll, $1 }' >"$out/algorithms"
while read -r coll algo; do
  run "$coll" --algo "$algo" -n 37 --size 10KiB --data real --jitter 0.3 --ranks-per-node 4
  run "$coll" --algo "$algo" -n 64 --size 64KiB
  run "$coll" --algo "$algo" -n 23 --size 1000 --recv 2 --overlap false --t 2 --root 5
done <"$out/algorithms"
run allreduce --algo ring -n 300 --size 1MiB
run allgather --algo ring -n 200 --size 1MiB --jitter 0.5
run alltoall --algo pairwise -n 150 --size 4KiB --recv 1
run alltoallv --algo pairwise -n 150 --size 4KiB
run bcast --algo pipeline -n 100 --size 1MiB --t 1
# Receives matched out of posting order, from the newest end of long queues.
run bcast --algo scatter_allgather -n 300 --size 1MiB
run bcast --algo scatter_allgather -n 130 --size 1MB --jitter 0.3 --ranks-per-node 4
run release --algo kary:4,seg=64KiB -n 200 --size 1MB
run allreduce --algo ring -n 50 --size 64KiB --plogp "$plogp" --jitter 0.2
run alltoall --algo bruck -n 33 --size 1KiB --plogp "$plogp" --data real
run allgather --algo bruck -n 40 --size 3KiB --plogp "$plogp" --ranks-per-node 8
# The table's path is the only difference between two output directories.
sed -i "s#$plogp#PLOGP#" "$out/index"
echo "$i runs in $out"
