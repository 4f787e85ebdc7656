#!/bin/bash
# The model against bcast and scatter on the emulated cluster (issue 11, item 5):
# 16 hosts x 1 rank at 1 Gbit/s; grove probe between hosts 0 and 1; grove bench
# --algo all at 4, 8 and 16 hosts; grove tune --report against the probe's table.
set -u
out=$1
repo=/work/main
scripts=$repo/scripts
grove=$repo/build/tools/grove
mkdir -p "$out"; out=$(cd "$out" && pwd)
export CLUSTER_PREFIX=gvm
prefix=gvm
work=$(mktemp -d /tmp/grove-tune-cluster.XXXXXX)
trap '"$scripts/cluster.sh" down >/dev/null 2>&1; rm -rf "$work"' EXIT
mpi() {
  local h=$1 p=$2 t=$3 log=$4 i
  shift 4
  for ((i = 0; i < h; i++)); do echo "$prefix$i slots=$p"; done >"$work/hosts"
  echo "mpirun.openmpi -np $((h * p)) (hosts $h x $p) $*" >>"$out/commands.txt"
  timeout -k 10 "$t" "$scripts/nsexec" "${prefix}0" "cd $work && mpirun.openmpi --allow-run-as-root \
    -np $((h * p)) --hostfile $work/hosts --mca plm_rsh_agent $scripts/nsexec \
    --mca oob_tcp_if_include 198.18.0.0/24 $*" >"$log" 2>&1
}
echo "== up $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
"$scripts/cluster.sh" up 16 1000mbit > "$out/up.log" 2>&1 || { cat "$out/up.log"; exit 1; }
echo "== probe $(date -u +%T)"
mpi 2 1 300 "$out/probe.txt" -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 \
  "$grove" probe --out "$out/plogp.txt" --max-its 20 --release-copies 0 || echo "probe failed"
cell="--cell-time 0.3 --warmup 1 --min-iters 5 --max-iters 100"
for n in 4 8 16; do
  echo "== bench n=$n $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  mpi "$n" 1 600 "$out/bench-n$n.log" -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 \
    "$grove" bench --algo all --coll bcast,scatter --sizes 1,1KiB,64KiB,1MiB $cell \
    --tsv "$out/bench-n$n.tsv" || echo "bench n=$n failed"
done
echo "== report $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
"$grove" tune --plogp "$out/plogp.txt" --report "$out"/bench-n*.tsv > "$out/report.md" 2>&1
echo "== done $(date -u +%T)"
