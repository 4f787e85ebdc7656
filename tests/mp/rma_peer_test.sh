#!/bin/sh
# Runs one MPI one-sided peer (bench/peers/mpi_rma_peer.cpp) at N=2 on tiny
# sizes beside grove's own window table, and checks that both TSVs have a
# put and a get row of each metric for every payload and that one
# `grove rma-bench --from-tsv` summary shows both. The peer reads back every
# payload it put before timing it (a difference fails it).
#
#   rma_peer_test.sh PEER EXE GROVE   (EXE empty: not built; exit 77 = skip)
set -u
peer=$1
exe=${2:-}
grove=$3
if [ -z "$exe" ] || [ ! -x "$exe" ]; then
  echo "rma peer $peer not built (scripts/deps.sh installs its toolchain): skipped"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/grove-rma-peer-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
args="--sizes 8,1000,1048576 --repeats 2 --pingpongs 3 --stream-bytes 2097152"
case $peer in
  openmpi)
    root=""
    [ "$(id -u)" -eq 0 ] && root=--allow-run-as-root
    # shellcheck disable=SC2086
    timeout 100 mpirun.openmpi $root --oversubscribe -n 2 --mca btl self,vader \
      --mca oob_tcp_if_include lo "$exe" $args --tsv "$dir/peer.tsv" ;;
  mpich)
    # shellcheck disable=SC2086
    UCX_NET_DEVICES=lo timeout 100 mpirun.mpich -iface lo -n 2 "$exe" $args --tsv "$dir/peer.tsv" ;;
  *) echo "rma_peer_test.sh: unknown peer $peer" >&2; exit 2 ;;
esac
status=$?
[ $status -eq 0 ] || { echo "FAIL: grove-rma-peer-$peer exited with $status"; exit 1; }
# shellcheck disable=SC2086
timeout 100 "$grove" run -n 2 "$grove" rma-bench --table window $args --tsv "$dir/grove.tsv" \
  > /dev/null || { echo "FAIL: grove's window table"; exit 1; }
for lib in grove:grove.tsv "$peer:peer.tsv"; do
  name=${lib%%:*}
  file=$dir/${lib#*:}
  for op in put get; do
    for metric in latency_us bandwidth_MiBps; do
      for payload in 8 1000 1048576; do
        n=$(awk -F'\t' -v m="$name/$op" -v k="$metric" -v p="$payload" \
          '$1 == m && $2 == 0 && $3 == k && $4 == p && $6 > 0' "$file" | wc -l)
        [ "$n" -eq 2 ] || { echo "FAIL: $name/$op $metric $payload: $n rows, not 2"; exit 1; }
      done
    done
  done
done
"$grove" rma-bench --from-tsv "$dir/grove.tsv" "$dir/peer.tsv" > "$dir/summary.txt" ||
  { echo "FAIL: the summary"; exit 1; }
grep -Eq "^$peer/get +1048576 bandwidth_MiBps" "$dir/summary.txt" &&
  grep -Eq "^grove/get +1048576 bandwidth_MiBps" "$dir/summary.txt" ||
  { echo "FAIL: the summary has not both libraries"; cat "$dir/summary.txt"; exit 1; }
echo "rma peer $peer ok"
