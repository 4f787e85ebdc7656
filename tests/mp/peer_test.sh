#!/bin/sh
# Runs one peer driver of `grove bench --peers` (bench/peers/) at N=2 over
# every collective it has on a few tiny sizes, and checks its TSV. Each cell
# verifies its result bytes inside the driver, so a wrong collective fails.
#
#   peer_test.sh PEER EXE     (EXE empty: the peer was not built; exit 77 = skip)
set -u
peer=$1
exe=${2:-}
if [ -z "$exe" ] || [ ! -x "$exe" ]; then
  echo "peer $peer not built (scripts/deps.sh installs its toolchain): skipped"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/grove-peer-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
args="--sizes 0,1,7,4096 --cell-time 0.005 --warmup 1 --min-iters 5 --max-iters 40 --tsv $dir/out.tsv"
case $peer in
  openmpi)
    root=""
    [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    # shellcheck disable=SC2086
    timeout 100 mpirun.openmpi $root --oversubscribe -n 2 --mca btl self,vader \
      --mca oob_tcp_if_include lo "$exe" $args ;;
  mpich)
    # shellcheck disable=SC2086
    UCX_NET_DEVICES=lo timeout 100 mpirun.mpich -iface lo -n 2 "$exe" $args ;;
  gloo)
    # shellcheck disable=SC2086
    timeout 100 "$exe" -n 2 $args ;;
  *) echo "peer_test.sh: unknown peer $peer" >&2; exit 2 ;;
esac
status=$?
[ $status -eq 0 ] || { echo "FAIL: grove-peer-$peer exited with $status"; exit 1; }
expected="bcast scatter gather allgather alltoall barrier allreduce reduce allgatherv alltoallv"
[ "$peer" = gloo ] || expected="$expected reduce_scatter"
head -1 "$dir/out.tsv" | grep -q "^library	collective	algorithm	ranks	bytes	cadence	iteration	seconds	rank_seconds$" ||
  { echo "FAIL: TSV header"; exit 1; }
# Every row carries both ranks' own times (OSU's per-rank mean).
bad=$(tail -n +2 "$dir/out.tsv" | awk -F'\t' 'NF != 9 || split($9, t, ",") != 2' | head -1)
[ -z "$bad" ] || { echo "FAIL: row without two per-rank times: $bad"; exit 1; }
for c in $expected; do
  grep -q "^$peer	$c	native	2	" "$dir/out.tsv" || { echo "FAIL: no $c rows in the TSV"; exit 1; }
done
echo "peer $peer ok: $(($(wc -l < "$dir/out.tsv") - 1)) samples"
