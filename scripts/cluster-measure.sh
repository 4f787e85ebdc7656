#!/bin/bash
# The measurements of docs/cluster.md ("Measurements"), on an emulated
# cluster (scripts/cluster.sh) this script makes and removes. Raw TSVs, logs
# and a summary (summary.md, the tables of docs/cluster.md filled in) land in
# OUTDIR. Needs root, iproute2, Open MPI (mpirun.openmpi) and a build tree
# with tools/grove and bench/peers/grove-peer-openmpi.
#
#   scripts/cluster-measure.sh OUTDIR [GROVE]       GROVE defaults to build/tools/grove
#   CLUSTER_SMOKE=1 scripts/cluster-measure.sh OUTDIR   tiny sizes, 1-2 calls per cell:
#                                                    checks every step runs (no figures)
#   CLUSTER_SUMMARY_ONLY=1 [CLUSTER_STEPS=...] scripts/cluster-measure.sh OUTDIR
#                                                    summary.md again from OUTDIR's files
#
# The full run takes about 15 minutes on a quiet 2-core machine. Steps (each
# a function below; CLUSTER_STEPS="bcast8 colls8 hier4x2 fence16 a2a16
# fence_load" runs a subset):
#   bcast8      8 hosts x 1 rank, 100 Mbit/s: bcast 1 MiB, grove auto and
#               forced algorithms (pipeline at 8/16/32/64 KiB segments, chain,
#               scatter_allgather, every other algorithm) against Open MPI's
#               default, its forced pipeline (64 KiB segments) and its default
#               with mpi_yield_when_idle 1
#   colls8      8 x 1 at 100 Mbit/s and 1 Gbit/s: allreduce 1 MiB, allgather
#               128 KiB per rank, alltoall 128 KiB per peer (and bcast 1 MiB),
#               grove auto against Open MPI's default (and with
#               mpi_yield_when_idle 1)
#   hier4x2     4 hosts x 2 ranks, 1 Gbit/s: hier against every flat
#               algorithm for barrier, bcast, reduce, allreduce, allgather
#   fence16     16 hosts x 1, FENCE16_RATE (1000mbit): the fence with 1 MiB per rank, release
#               radix 4 against the routing tree (radix 64, flat at 16 ranks),
#               beside `grove fence compare` with alpha, c, B fitted on the
#               same cluster from flat releases (the routing tree at 4, 8, 16
#               hosts, two payloads) and from `grove probe` between two hosts
#   a2a16       16 x 1, 1 Gbit/s: pairwise alltoall 1 KiB..1 MiB per peer,
#               posting depth 1, 2, 4, 8, 16 and auto, streaming cadence
#   fence_load  one host (grove run, no cluster): a fence of 16 ranks quiet
#               and beside a polling daemon, per wait policy, wall time and
#               getrusage CPU time per rank and call
#   tune16      (not run unless named) 16 x 1, 1 Gbit/s: grove probe between
#               hosts 0 and 1, grove bench --algo all for bcast and scatter at
#               4, 8 and 16 hosts, grove tune --report against the probe
#               (grove waits with wait_policy=block here: see run_tune16)
#
# Between hosts UCX runs over TCP on eth0 (UCX_TLS=tcp,self,
# UCX_NET_DEVICES=eth0: docs/cluster.md) and Open MPI over btl tcp,self;
# both started by mpirun.openmpi from host 0 with nsexec as rsh agent. grove
# waits with its default wait_policy unless CLUSTER_WAIT_POLICY names one.
set -u
out=${1:?usage: scripts/cluster-measure.sh OUTDIR [GROVE]}
repo=$(cd "$(dirname "$0")/.." && pwd)
scripts=$repo/scripts
grove=$(readlink -f "${2:-$repo/build/tools/grove}")
peer=$(readlink -f "$(dirname "$grove")/../bench/peers/grove-peer-openmpi")
[ -x "$grove" ] || { echo "cluster-measure.sh: $grove is not an executable (build it first)" >&2; exit 2; }
[ -x "$peer" ] || { echo "cluster-measure.sh: $peer is missing (cmake --build build --target grove-peer-openmpi)" >&2; exit 2; }
command -v mpirun.openmpi >/dev/null || { echo "cluster-measure.sh: mpirun.openmpi not found (openmpi-bin)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "cluster-measure.sh: needs root (network namespaces)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
export CLUSTER_PREFIX=${CLUSTER_PREFIX:-gvm}
prefix=$CLUSTER_PREFIX
steps=${CLUSTER_STEPS:-bcast8 colls8 hier4x2 fence16 a2a16 fence_load}
smoke=${CLUSTER_SMOKE:-0}
failures=0

MiB=1048576
KiB=1024
if [ "$smoke" = 1 ]; then
  # Every step, every job and every summary, with cells too small to mean anything.
  cell="--cell-time 0.01 --warmup 0 --min-iters 1 --max-iters 2"
  stream_cell="--cell-time 0.01 --warmup 0 --min-iters 1 --max-iters 16"
  bcast_size=$((64 * KiB)) # the pipeline rows still have several segments
  allreduce_size=$((4 * KiB)) block=$((1 * KiB)) fence_blob=$((4 * KiB)) fence_small=$((1 * KiB)) fence_tiny=64
  hier_sizes="8,4KiB" hier_ag_sizes="8,1KiB" a2a_sizes="1KiB,4KiB" probe_opts="--max-size 64KiB --max-its 3 --release-copies 2"
  load_rounds=1 load_cell="--cell-time 0.01 --warmup 0 --min-iters 1 --max-iters 2"
else
  # Call times at 100 Mbit/s: bcast 1 MiB 90-620 ms, so ~10 calls a cell.
  cell="--cell-time 1 --warmup 2 --min-iters 10 --max-iters 200"
  # Streaming: batches of 16 calls; at least 3 batches (1 MiB a peer at 16
  # hosts and 1 Gbit/s: ~130 ms a call, 2 s a batch).
  stream_cell="--cell-time 1 --warmup 2 --min-iters 48 --max-iters 100000"
  bcast_size=$MiB
  allreduce_size=$MiB block=$((128 * KiB)) fence_blob=$MiB fence_small=$((64 * KiB)) fence_tiny=64
  hier_sizes="8,64KiB,1MiB" hier_ag_sizes="8,8KiB,128KiB" a2a_sizes="1KiB:1MiB:4"
  probe_opts="--max-size 256KiB --max-its 5" # bounded: the flat-release fit is the main one
  load_rounds=3 load_cell="--cell-time 1 --warmup 3 --min-iters 20"
fi
policy_x=""
[ -n "${CLUSTER_WAIT_POLICY:-}" ] && policy_x="-x GROVE_WAIT_POLICY=$CLUSTER_WAIT_POLICY"

work=$(mktemp -d "${TMPDIR:-/tmp}/grove-cluster-measure.XXXXXX")
cleanup() {
  "$scripts/cluster.sh" down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { echo "== $* ($(date -u +%H:%M:%S))"; }
warn() {
  echo "cluster-measure.sh: FAILED: $*" >&2
  failures=$((failures + 1))
}

# up HOSTS RATE: a fresh cluster (the previous one removed).
current=""
up() {
  [ "$current" = "$1 $2" ] && return 0
  "$scripts/cluster.sh" up "$1" "$2" >"$work/up.log" 2>&1 || {
    cat "$work/up.log" >&2
    echo "cluster-measure.sh: cluster.sh up $1 $2 failed" >&2
    exit 1
  }
  current="$1 $2"
  echo "cluster: $1 hosts at $2 ($(date -u +%H:%M:%S))" >>"$out/settings.txt"
}

# mpi HOSTS PER_HOST SECONDS LOG ARGS...: mpirun.openmpi ARGS from host 0 on
# the first HOSTS hosts, PER_HOST ranks each, ended after SECONDS.
mpi() {
  local h=$1 p=$2 t=$3 log=$4 i
  shift 4
  for ((i = 0; i < h; i++)); do echo "$prefix$i slots=$p"; done >"$work/hosts"
  echo "mpirun.openmpi -np $((h * p)) (hosts $h x $p) $*" >>"$out/commands.txt"
  timeout -k 10 "$t" "$scripts/nsexec" "${prefix}0" "cd $work && mpirun.openmpi --allow-run-as-root \
    -np $((h * p)) --hostfile $work/hosts --mca plm_rsh_agent $scripts/nsexec \
    --mca oob_tcp_if_include 198.18.0.0/24 $*" >"$log" 2>&1
}

# grove_job HOSTS PER_HOST SECONDS NAME BENCH_ARGS...: grove bench across the
# hosts; raw samples in OUTDIR/NAME.tsv, output in NAME.log.
grove_job() {
  local h=$1 p=$2 t=$3 name=$4
  shift 4
  mpi "$h" "$p" "$t" "$out/$name.log" -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 $policy_x \
    "$grove" bench "$@" --tsv "$out/$name.tsv" || warn "$name (grove bench; log $out/$name.log)"
}

# ompi_job HOSTS PER_HOST SECONDS NAME LIBRARY MCA_ARGS -- PEER_ARGS...: the
# Open MPI peer over btl tcp,self, its rows labelled LIBRARY.
ompi_job() {
  local h=$1 p=$2 t=$3 name=$4 library=$5 mca=()
  shift 5
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    mca+=("$1")
    shift
  done
  shift
  mpi "$h" "$p" "$t" "$out/$name.log" --mca pml ob1 --mca btl tcp,self \
    --mca btl_tcp_if_include 198.18.0.0/24 "${mca[@]}" "$peer" "$@" --library "$library" \
    --tsv "$out/$name.tsv" || warn "$name (Open MPI peer; log $out/$name.log)"
}

# medians TSV...: one line per cell: library, collective, algorithm, ranks,
# bytes, cadence, median of the span (us), samples.
medians() {
  local tab
  tab=$(printf '\t')
  cat "$@" 2>/dev/null | awk -F'\t' '$1 !~ /^#/ && $1 != "library" && NF >= 8 {
      print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $8 }' |
    sort -t "$tab" -k1,6 -k7,7g |
    awk -F'\t' '
      function flush() {
        if (n) printf "%s\t%.1f\t%d\n", prev, ((n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) * 1e6, n
        n = 0
      }
      { k = $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6; if (k != prev) { flush(); prev = k } v[++n] = $7 }
      END { flush() }'
}

# wire_us COLLECTIVE RANKS BYTES RATE_MBIT: the wire bound in us. Each host
# has one NIC of RATE each way; TCP carries 1448 payload bytes per 1514-byte
# frame (what the shaper counts), so a link moves RATE x 1448/1514 of
# payload. Bytes the busiest NIC must carry: bcast M (every rank receives
# it), allreduce 2(N-1)/N M (reduce-scatter + allgather), allgather and
# alltoall (N-1) b.
wire_us() {
  awk -v c="$1" -v n="$2" -v b="$3" -v r="$4" 'BEGIN {
    m = b
    if (c == "allreduce") m = 2 * (n - 1) / n * b
    else if (c == "allgather" || c == "alltoall") m = (n - 1) * b
    printf "%.1f", m * 8 / (r * 1e6 * 1448 / 1514) * 1e6 }'
}

# bound_table RATE_MBIT TSV...: every cell's median beside its wire bound.
bound_table() {
  local rate=$1
  shift
  echo "| library | collective | algorithm | ranks | bytes | median ms | wire bound ms | median / bound |"
  echo "|---|---|---|---:|---:|---:|---:|---:|"
  medians "$@" | grep -v "/" | while IFS=$(printf '\t') read -r lib coll algo ranks bytes _cad med _n; do
    case $coll in bcast | allreduce | allgather | alltoall) ;; *) continue ;; esac
    local bound
    bound=$(wire_us "$coll" "$ranks" "$bytes" "$rate")
    awk -v l="$lib" -v c="$coll" -v a="$algo" -v n="$ranks" -v b="$bytes" -v m="$med" -v w="$bound" \
      'BEGIN { printf "| %s | %s | %s | %d | %d | %.2f | %.2f | %.2f |\n", l, c, a, n, b, m / 1e3, w / 1e3, m / w }'
  done
}

# peers_table MARKDOWN PEERS TSV...: grove bench's own summary of the TSVs
# (medians with 95% CIs, per-rank means, grove / peer ratios with CIs).
peers_table() {
  local md=$1 peers=$2
  shift 2
  local args=()
  [ -n "$peers" ] && args=(--peers "$peers")
  "$grove" bench --from-tsv "$@" "${args[@]}" --markdown "$md" >"$md.txt" 2>&1 ||
    warn "grove bench --from-tsv $* (see $md.txt)"
}

# ---------------------------------------------------------------- steps

run_bcast8() {
  step "bcast8: 8 hosts x 1, 100 Mbit/s, bcast $bcast_size B"
  up 8 100mbit
  local sizes=$bcast_size seg
  grove_job 8 1 900 bcast8-grove-all --coll bcast --algo all --sizes "$sizes" $cell
  for seg in 8192 16384 32768; do
    grove_job 8 1 600 "bcast8-grove-pipeline$seg" --coll bcast --algo "pipeline:seg=$seg" --sizes "$sizes" $cell
  done
  ompi_job 8 1 600 bcast8-ompi-default openmpi -- --coll bcast --sizes "$sizes" $cell
  ompi_job 8 1 600 bcast8-ompi-pipeline64k openmpi-pipeline64k \
    --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm 3 \
    --mca coll_tuned_bcast_algorithm_segmentsize 65536 -- --coll bcast --sizes "$sizes" $cell
  # Open MPI busy-polls unless it knows a node is oversubscribed; here 8
  # "nodes" share 2 cores, so also with mpi_yield_when_idle (not a default).
  ompi_job 8 1 600 bcast8-ompi-yield openmpi-yield --mca mpi_yield_when_idle 1 -- \
    --coll bcast --sizes "$sizes" $cell
  "$grove" select --show --coll bcast >"$out/bcast8-select.txt" 2>&1
}

run_colls8() {
  local rate
  for rate in 100 1000; do
    step "colls8: 8 hosts x 1, $rate Mbit/s"
    up 8 "${rate}mbit"
    grove_job 8 1 900 "colls8-${rate}m-grove-ar" --coll allreduce,bcast --algo auto --sizes "$allreduce_size" $cell
    grove_job 8 1 900 "colls8-${rate}m-grove-ag" --coll allgather,alltoall --algo auto --sizes "$block" $cell
    ompi_job 8 1 900 "colls8-${rate}m-ompi-ar" openmpi -- --coll allreduce,bcast --sizes "$allreduce_size" $cell
    ompi_job 8 1 900 "colls8-${rate}m-ompi-ag" openmpi -- --coll allgather,alltoall --sizes "$block" $cell
    ompi_job 8 1 900 "colls8-${rate}m-ompi-yield-ar" openmpi-yield --mca mpi_yield_when_idle 1 -- \
      --coll allreduce,bcast --sizes "$allreduce_size" $cell
    ompi_job 8 1 900 "colls8-${rate}m-ompi-yield-ag" openmpi-yield --mca mpi_yield_when_idle 1 -- \
      --coll allgather,alltoall --sizes "$block" $cell
  done
}

run_hier4x2() {
  step "hier4x2: 4 hosts x 2, 1 Gbit/s, hier against flat algorithms"
  up 4 1000mbit
  grove_job 4 2 900 hier4x2-flat --coll barrier,bcast,reduce,allreduce --algo all --sizes "$hier_sizes" $cell
  grove_job 4 2 900 hier4x2-flat-allgather --coll allgather --algo all --sizes "$hier_ag_sizes" $cell
  grove_job 4 2 900 hier4x2-hier --coll barrier,bcast,reduce,allreduce --algo hier --sizes "$hier_sizes" $cell
  grove_job 4 2 900 hier4x2-hier-allgather --coll allgather --algo hier --sizes "$hier_ag_sizes" $cell
}

run_fence16() {
  # FENCE16_RATE=100mbit makes the links, not the 2 cores, the bound (a
  # flat 16 MiB release is ~21 s a call there: FENCE16_CELL bounds the calls).
  local rate=${FENCE16_RATE:-1000mbit} fence_cell=${FENCE16_CELL:-$cell}
  step "fence16: 16 hosts x 1, $rate, fence of $fence_blob B per rank"
  up 16 "$rate"
  local algo n
  for algo in routing release:4; do
    # shellcheck disable=SC2086
    grove_job 16 1 1800 "fence16-${algo/:/}" --coll fence --algo "$algo" \
      --sizes "$fence_tiny,$fence_small,$fence_blob" $fence_cell
  done
  # Flat releases at fewer hosts (radix 64 is one level up to 64 ranks):
  # their coverage against N gives alpha and c, the two payloads at 16 give B.
  for n in 4 8; do
    grove_job "$n" 1 600 "fence16-routing-n$n" --coll fence --algo routing --sizes "$fence_tiny" $cell
  done
  # The same three constants by grove probe between hosts 0 and 1.
  mpi 2 1 180 "$out/fence16-probe.txt" -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 \
    "$grove" probe --out "$out/fence16-plogp.txt" $probe_opts || warn "grove probe (log $out/fence16-probe.txt)"
  fit_flat_releases >"$out/fence16-fit.txt"
  local fit alpha c bw
  fit=$(grep -m1 "release: alpha" "$out/fence16-probe.txt")
  alpha=$(echo "$fit" | awk '{ for (i = 1; i < NF; ++i) if ($i == "alpha") print $(i + 1) }')
  c=$(echo "$fit" | awk '{ for (i = 1; i < NF; ++i) if ($i == "c") print $(i + 1) }')
  bw=$(echo "$fit" | awk '{ for (i = 1; i < NF; ++i) if ($i == "B") print $(i + 1) }')
  [ -n "$alpha" ] && [ -n "$c" ] && [ -n "$bw" ] && echo "probe $alpha $c $bw" >>"$out/fence16-fit.txt"
  [ -n "$fit" ] || echo "grove probe: $(grep -m1 'release fit' "$out/fence16-probe.txt")" >>"$out/fence16-fit.txt"
  local source
  while read -r source alpha c bw; do
    case $source in flat | probe) ;; *) continue ;; esac
    "$grove" fence compare --sizes 16 --payloads "$((16 * fence_blob)),$((16 * fence_small)),$((16 * fence_tiny))" \
      --release 4 --routing 64 --alpha "$alpha" --c "$c" --bw "$bw" --t 1 >"$out/fence16-compare-$source.txt" 2>&1 ||
      warn "grove fence compare with the $source fit (see $out/fence16-compare-$source.txt)"
  done <"$out/fence16-fit.txt"
  grep -q "^flat " "$out/fence16-fit.txt" || warn "no fit from the flat releases (see $out/fence16-fit.txt)"
}

# fit_flat_releases: "flat ALPHA_US C_US B_GBPS" from the routing tree's
# release coverage (one level: T = alpha + (N-1)(c + P/B), P the release on
# the wire): a least-squares line over N = 4, 8, 16 at the tiny blob gives
# alpha and c + P/B; the 16-rank coverage at the tiny and the largest blob
# gives B = 15 (P_large - P_tiny) / (T_large - T_tiny).
fit_flat_releases() {
  medians "$out"/fence16-routing.tsv "$out"/fence16-routing-n*.tsv |
    awk -F'\t' -v tiny="$fence_tiny" -v blob="$fence_blob" '
      $3 ~ /^routing\/release_coverage\(payload=/ {
        p = $3; sub(/^.*payload=/, "", p); sub(/\).*$/, "", p)
        if ($5 == tiny) { xs[$4] = $4 - 1; ys[$4] = $7; pt[$4] = p }
        if ($4 == 16 && $5 == blob) { tl = $7; pl = p }
      }
      END {
        n = 0
        for (k in xs) { ++n; sx += xs[k]; sy += ys[k]; sxx += xs[k] * xs[k]; sxy += xs[k] * ys[k] }
        if (n < 2 || !(16 in ys) || tl == "" || tl <= ys[16]) { print "flat-fit: not enough cells (" n " rank counts)"; exit }
        slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        alpha = (sy - slope * sx) / n
        bits_per_us = 15 * (pl - pt[16]) * 8 / (tl - ys[16])
        c = slope - pt[16] * 8 / bits_per_us
        if (alpha < 0.1) alpha = 0.1
        if (c < 0.1) c = 0.1
        printf "flat %.1f %.1f %.4f\n", alpha, c, bits_per_us / 1000
      }'
}

run_a2a16() {
  step "a2a16: 16 hosts x 1, 1 Gbit/s, pairwise alltoall posting depths, streaming"
  up 16 1000mbit
  local depth
  for depth in 1 2 4 8 16; do
    grove_job 16 1 900 "a2a16-posts$depth" --coll alltoall --algo "pairwise:posts=$depth" \
      --cadence streaming --sizes "$a2a_sizes" $stream_cell
  done
  grove_job 16 1 900 a2a16-auto --coll alltoall --algo auto --cadence streaming --sizes "$a2a_sizes" $stream_cell
}

run_fence_load() {
  step "fence_load: 16 ranks on this host, quiet and beside a polling daemon, per wait policy"
  "$scripts/cluster.sh" down >/dev/null 2>&1
  current=""
  echo "grove bench --background daemon -n 16 --wait-policies all --rounds $load_rounds --coll fence" \
    "--algo auto --sizes 1KiB --cpu-time $load_cell" >>"$out/commands.txt"
  timeout -k 10 1200 "$grove" bench --background daemon -n 16 --wait-policies all --rounds "$load_rounds" \
    --coll fence --algo auto --sizes 1KiB --cpu-time $load_cell --tsv "$out/fence_load.tsv" \
    --markdown "$out/fence_load.md" >"$out/fence_load.log" 2>&1 || warn "fence_load (log $out/fence_load.log)"
}

# ---------------------------------------------------------------- summary

# The model against measurement across hosts (docs/tuning.md, issue 11):
# grove probe between hosts 0 and 1, then grove bench --algo all for bcast
# and scatter at 4, 8 and 16 hosts, and grove tune --report against the
# probe's table (tune16-report.md). Not among the default steps.
run_tune16() {
  step "tune16: 16 hosts x 1, 1 Gbit/s: probe, bench at 4, 8, 16 hosts, report"
  up 16 1gbit
  local n sizes="1,1KiB,64KiB,1MiB" tune_cell="--cell-time 0.3 --warmup 1 --min-iters 5 --max-iters 100"
  [ "$smoke" = 1 ] && sizes="1,1KiB" tune_cell=$cell
  # Sixteen ranks and the links' packet processing share two cores here:
  # ranks that spin leave the packets to ksoftirqd, which runs a tick later
  # (a 4 ms one-way trip instead of 5-10 us), so this step waits with
  # wait_policy=block unless CLUSTER_WAIT_POLICY names another; the probe and
  # the benchmarks wait alike, so the table prices what the cells pay.
  local tune_policy="-x GROVE_WAIT_POLICY=${CLUSTER_WAIT_POLICY:-block}"
  mpi 2 1 300 "$out/tune16-probe.txt" -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=eth0 $tune_policy \
    "$grove" probe --out "$out/tune16-plogp.txt" --release-copies 0 \
    $([ "$smoke" = 1 ] && echo "--max-size 64KiB --max-its 3" || echo "--max-its 20") ||
    warn "grove probe (log $out/tune16-probe.txt)"
  for n in 4 8 16; do
    policy_x=$tune_policy grove_job "$n" 1 600 "tune16-n$n" --algo all --coll bcast,scatter --sizes "$sizes" $tune_cell
  done
  "$grove" tune --plogp "$out/tune16-plogp.txt" --report "$out"/tune16-n{4,8,16}.tsv --ranks-per-host 1 \
    >"$out/tune16-report.md" 2>&1 || warn "grove tune --report (see $out/tune16-report.md)"
}

summarize() {
  local s=$out/summary.md f
  {
    echo "# Cluster measurements ($(date -u +%Y-%m-%d), $([ "$smoke" = 1 ] && echo "SMOKE RUN: no figures" || echo "full run"))"
    echo
    echo "grove $(git -C "$repo" rev-parse --short HEAD 2>/dev/null), $(nproc) cores, $(uname -r)," \
      "$(mpirun.openmpi --version 2>/dev/null | head -1)"
    echo "Commands: commands.txt; clusters: settings.txt; raw samples: *.tsv; logs: *.log."
    echo "Wire bound: the bytes the busiest NIC carries at RATE x 1448/1514 (TCP payload per frame)."
    if [[ " $steps " == *" bcast8 "* ]]; then
      echo
      echo "## bcast 1 MiB, 8 hosts x 1 rank, 100 Mbit/s"
      echo
      echo "grove's auto at 8 hosts x 1 (grove select --show --coll bcast):"
      echo
      sed 's/^/    /' "$out/bcast8-select.txt"
      echo
      bound_table 100 "$out"/bcast8-*.tsv
      peers_table "$out/bcast8.md" openmpi,openmpi-pipeline64k,openmpi-yield "$out"/bcast8-*.tsv
      echo
      echo "grove against Open MPI's default and its forced pipeline (span and per-rank mean, 95% CIs):"
      echo
      cat "$out/bcast8.md"
    fi
    if [[ " $steps " == *" colls8 "* ]]; then
      for f in 100 1000; do
        echo
        echo "## allreduce, allgather, alltoall (and bcast), 8 hosts x 1 rank, $f Mbit/s"
        echo
        bound_table "$f" "$out"/colls8-"${f}"m-*.tsv
        peers_table "$out/colls8-${f}m.md" openmpi,openmpi-yield "$out"/colls8-"${f}"m-*.tsv
        echo
        cat "$out/colls8-${f}m.md"
      done
    fi
    if [[ " $steps " == *" hier4x2 "* ]]; then
      echo
      echo "## 4 hosts x 2 ranks, 1 Gbit/s: hier against the flat algorithms"
      echo
      echo "| collective | bytes | hier ms | best flat | best flat ms | flat auto ms | hier / best flat |"
      echo "|---|---:|---:|---|---:|---:|---:|"
      medians "$out"/hier4x2-*.tsv | grep -v "/" | awk -F'\t' '
        $3 == "hier" { hier[$2 "\t" $5] = $7; next }
        $3 == "auto" { auto[$2 "\t" $5] = $7; next }
        { k = $2 "\t" $5; if (!(k in best) || $7 < best[k]) { best[k] = $7; who[k] = $3 } }
        END {
          for (k in hier) {
            split(k, p, "\t")
            printf "| %s | %d | %.3f | %s | %.3f | %s | %.2f |\n", p[1], p[2], hier[k] / 1e3, who[k],
              best[k] / 1e3, (k in auto) ? sprintf("%.3f", auto[k] / 1e3) : "-", hier[k] / best[k]
          }
        }' | sort
      echo
      echo "(flat auto: --algo all's auto cell, which on 4 x 2 is hier itself for blocking calls.)"
      peers_table "$out/hier4x2.md" "" "$out"/hier4x2-*.tsv
      echo
      cat "$out/hier4x2.md"
    fi
    if [[ " $steps " == *" fence16 "* ]]; then
      echo
      echo "## fence, 16 hosts x 1, ${FENCE16_RATE:-1000mbit}: release radix 4 against the routing tree (radix 64)"
      echo
      echo "Fits (fence16-fit.txt: source alpha_us c_us B_Gbit/s; flat = the routing tree's releases"
      echo "at N = 4, 8, 16 and two payloads, probe = grove probe between hosts 0 and 1):"
      echo
      sed 's/^/    /' "$out/fence16-fit.txt" 2>/dev/null
      echo
      echo "| blob per rank | metric | routing ms | release:4 ms | routing / release:4 measured | predicted (flat fit) | predicted (probe fit) |"
      echo "|---:|---|---:|---:|---:|---:|---:|"
      medians "$out"/fence16-routing.tsv "$out"/fence16-release4.tsv | awk -F'\t' -v n=16 \
        -v flat="$out/fence16-compare-flat.txt" -v probe="$out/fence16-compare-probe.txt" '
        function load(file, which,   line, f, i, cov, tot) {
          # grove fence compare: n modex bandwidth tree radix ... fence_coverage_us
          # fence_total_us ...; the columns are found by their header names.
          cov = 7; tot = 8
          while ((getline line < file) > 0) {
            split(line, f, "\t")
            if (f[1] == "n") {
              for (i = 1; i in f; i++) {
                if (f[i] == "fence_coverage_us") cov = i
                if (f[i] == "fence_total_us") tot = i
              }
              continue
            }
            if (f[1] != n || f[3] == "inf") continue
            if (f[4] == "routing") { rc[which, f[2]] = f[cov]; rt[which, f[2]] = f[tot] }
            if (f[4] == "release" && f[5] == 4) { lc[which, f[2]] = f[cov]; lt[which, f[2]] = f[tot] }
          }
        }
        function pred(which, modex, span) {
          if (span) return ((which, modex) in lt) && lt[which, modex] > 0 ? sprintf("%.2f", rt[which, modex] / lt[which, modex]) : "-"
          return ((which, modex) in lc) && lc[which, modex] > 0 ? sprintf("%.2f", rc[which, modex] / lc[which, modex]) : "-"
        }
        BEGIN { load(flat, "flat"); load(probe, "probe") }
        {
          split($3, a, "/")
          metric = (a[2] == "") ? "fence (span)" : (a[2] ~ /^release_coverage/ ? "release coverage" : "")
          if (metric == "") next
          t[$5 "\t" metric "\t" a[1]] = $7; seen[$5 "\t" metric] = 1
        }
        END {
          for (k in seen) {
            split(k, p, "\t")
            modex = p[1] * n
            r = t[k "\trouting"]; l = t[k "\trelease:4"]; span = p[2] == "fence (span)"
            printf "| %d | %s | %.2f | %.2f | %s | %s | %s |\n", p[1], p[2], r / 1e3, l / 1e3,
              (l > 0) ? sprintf("%.2f", r / l) : "-", pred("flat", modex, span), pred("probe", modex, span)
          }
        }' | sort -n -t'|' -k2
      peers_table "$out/fence16.md" "" "$out"/fence16-*.tsv
      echo
      cat "$out/fence16.md"
      for f in flat probe; do
        [ -f "$out/fence16-compare-$f.txt" ] || continue
        echo
        echo "grove fence compare with the $f fit (fence16-compare-$f.txt):"
        echo
        sed 's/^/    /' "$out/fence16-compare-$f.txt"
      done
    fi
    if [[ " $steps " == *" a2a16 "* ]]; then
      echo
      echo "## pairwise alltoall, 16 hosts x 1, 1 Gbit/s, streaming: posting depth"
      echo
      echo "| bytes per peer | posts=1 | posts=2 | posts=4 | posts=8 | posts=16 | auto | best depth | auto / best |"
      echo "|---:|---:|---:|---:|---:|---:|---:|---|---:|"
      medians "$out"/a2a16-*.tsv | grep -v "/cpu" | awk -F'\t' '
        { d = $3; sub(/^pairwise:posts=/, "", d); t[$5 "\t" d] = $7; sizes[$5] = 1
          if (d != "auto" && (!($5 in best) || $7 < best[$5])) { best[$5] = $7; who[$5] = d } }
        END {
          for (b in sizes) {
            line = "| " b
            split("1 2 4 8 16 auto", ds, " ")
            for (i = 1; i <= 6; ++i) line = line " | " ((b "\t" ds[i]) in t ? sprintf("%.3f", t[b "\t" ds[i]] / 1e3) : "-")
            printf "%s | %s | %s |\n", line, who[b], ((b "\tauto") in t) ? sprintf("%.2f", t[b "\tauto"] / best[b]) : "-"
          }
        }' | sort -n -t'|' -k2
      echo
      echo "(ms per call; the algorithm auto picks: grove select --show --coll alltoall -n 16.)"
      peers_table "$out/a2a16.md" "" "$out"/a2a16-*.tsv
      echo
      cat "$out/a2a16.md"
    fi
    if [[ " $steps " == *" fence_load "* ]]; then
      echo
      echo "## fence of 16 ranks on $(nproc) cores, quiet and beside a polling daemon, per wait policy"
      echo
      echo "| wait policy | load | fence ms (span) | per-rank mean ms | CPU ms per rank and call (median over ranks) |"
      echo "|---|---|---:|---:|---:|"
      local lines
      lines=$(medians "$out/fence_load.tsv")
      awk -F'\t' '$1 !~ /^#/ && $1 != "library" && $3 !~ /\// && $9 != "-" {
          n = split($9, r, ","); s = 0; for (i = 1; i <= n; ++i) s += r[i]
          sum[$1] += s / n; cnt[$1]++ }
        END { for (l in sum) printf "%s\t%.1f\n", l, sum[l] / cnt[l] * 1e6 }' "$out/fence_load.tsv" >"$work/rankmean"
      echo "$lines" | awk -F'\t' -v rm="$work/rankmean" '
        BEGIN { while ((getline line < rm) > 0) { split(line, f, "\t"); mean[f[1]] = f[2] } }
        { lib = $1; split($3, a, "/"); if (a[2] == "cpu_per_call") cpu[lib] = $7; else if (a[2] == "") span[lib] = $7; libs[lib] = 1 }
        END {
          for (l in libs) {
            p = l; load = "quiet"
            if (sub(/\+bg$/, "", p)) load = "daemon"
            sub(/^grove\/?/, "", p); if (p == "") p = "default"
            printf "| %s | %s | %.3f | %s | %s |\n", p, load, span[l] / 1e3,
              (l in mean) ? sprintf("%.3f", mean[l] / 1e3) : "-", (l in cpu) ? sprintf("%.3f", cpu[l] / 1e3) : "-"
          }
        }' | sort
      echo
      cat "$out/fence_load.md" 2>/dev/null
    fi
    echo
    echo "failures: $failures"
  } >"$s"
  step "summary: $s"
}

if [ "${CLUSTER_SUMMARY_ONLY:-0}" = 1 ]; then
  # The summary alone, from the files of an earlier run (CLUSTER_STEPS: its steps).
  failures=${CLUSTER_FAILURES:-0}
  summarize
  exit 0
fi
{
  git -C "$repo" rev-parse HEAD 2>/dev/null || echo "commit unknown"
  uname -a
  nproc
  free -m | sed -n 2p
  date -u
  echo "steps: $steps; smoke: $smoke; wait_policy: ${CLUSTER_WAIT_POLICY:-grove default}"
} >"$out/settings.txt"
: >"$out/commands.txt"
started=$(date +%s)
for s in $steps; do
  case $s in
    bcast8 | colls8 | hier4x2 | fence16 | a2a16 | fence_load | tune16) "run_$s" ;;
    *) echo "cluster-measure.sh: unknown step '$s'" >&2; exit 2 ;;
  esac
done
"$scripts/cluster.sh" down >/dev/null 2>&1
current=""
# The summary in a process of its own, as CLUSTER_SUMMARY_ONLY=1 would make it again.
CLUSTER_SUMMARY_ONLY=1 CLUSTER_STEPS="$steps" CLUSTER_SMOKE=$smoke CLUSTER_FAILURES=$failures \
  "$0" "$out" "$grove" || warn "the summary"
echo "cluster-measure.sh: $(($(date +%s) - started)) s, $failures failures; summary in $out/summary.md"
[ "$failures" -eq 0 ]
