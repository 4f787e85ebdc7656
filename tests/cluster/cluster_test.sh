#!/bin/bash
# Runs grove programs on an emulated cluster (scripts/cluster.sh) that this
# script makes and removes, started by a real launcher over PMIx.
#
#   cluster_test.sh BIN_DIR mpirun H P    H hosts x P ranks under mpirun (rsh agent: nsexec)
#   cluster_test.sh BIN_DIR srun H P      the same under Slurm: srun --mpi=pmix
#   cluster_test.sh BIN_DIR tcp-bytes     a 1 MiB bcast crosses the shaped links
#   cluster_test.sh BIN_DIR host-drop     a host drops out of the network under srun
#
# BIN_DIR holds the test drivers (mp_bootstrap, mp_colls, mp_fence,
# mp_bcast_bytes). mpirun and srun check, on H x P ranks: the hosts each rank
# is told (Bootstrap::hosts), every collective and algorithm (mp_colls), and
# the fence while a release relay is SIGKILLed (mp_fence kill 1). Between
# hosts UCX uses TCP on eth0 (UCX_TLS=tcp,self UCX_NET_DEVICES=eth0): UCX
# takes the namespaces for one machine and would otherwise use shared memory.
#
# Exit status: 0 when every check passed, 77 (skipped, reason printed) when
# this machine cannot create network namespaces, 1 otherwise.
set -u
bin=$(cd "$1" && pwd)
mode=$2
scripts=$(cd "$(dirname "$0")/../../scripts" && pwd)
export CLUSTER_PREFIX=g$$h # unique per run: tests may run side by side
prefix=$CLUSTER_PREFIX
failures=0
started=$(date +%s.%N)

say() { echo "cluster_test: $*"; }
fail() {
  say "FAIL: $*"
  failures=$((failures + 1))
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ---- can this machine make namespaces at all? ----
if [ "$(id -u)" -ne 0 ]; then
  say "SKIPPED: needs root to create network namespaces (running as uid $(id -u))"
  exit 77
fi
if ! probe_error=$(ip netns add "${prefix}probe" 2>&1); then
  say "SKIPPED: cannot create network namespaces: ip netns add: $probe_error"
  exit 77
fi
ip netns del "${prefix}probe"

teardown() {
  [ -n "${srun_up:-}" ] && "$scripts/slurm-cluster.sh" down >/dev/null 2>&1
  "$scripts/cluster.sh" down >/dev/null 2>&1
}
trap teardown EXIT

# up HOSTS: the cluster, at 1 Gbit/s (a functional test: the rate only has to be real).
up() {
  "$scripts/cluster.sh" up "$1" 1gbit >/dev/null || { say "FAIL: cluster.sh up $1 1gbit"; exit 1; }
}

out=$(mktemp "${TMPDIR:-/tmp}/grove-cluster.XXXXXX")
trap 'teardown; rm -f "$out" "$out.hosts"' EXIT

# on_host0 COMMAND: runs COMMAND on host 0 (bounded: 240 s), output into $out.
on_host0() {
  timeout -k 5 240 "$scripts/nsexec" "${prefix}0" "cd $bin && $1" >"$out" 2>&1
}

# launch LAUNCHER H P ENV PROGRAM ARGS: H x P ranks of PROGRAM under LAUNCHER,
# with environment ENV ("NAME=value ..."). Returns the launcher's status.
launch() {
  local launcher=$1 h=$2 p=$3 env=$4
  shift 4
  local common="GROVE_WAIT_POLICY=block UCX_TLS=tcp,self UCX_NET_DEVICES=eth0"
  if [ "$launcher" = mpirun ]; then
    local x="" v
    for v in $common $env; do x="$x -x $v"; done
    on_host0 "mpirun.openmpi --allow-run-as-root --enable-recovery -np $((h * p)) \
      --hostfile $out.hosts --mca plm_rsh_agent $scripts/nsexec \
      --mca oob_tcp_if_include 198.18.0.0/24 $x $*"
  else
    on_host0 "SLURM_CONF=/tmp/grove-slurm-$prefix/slurm.conf $common $env \
      srun --mpi=pmix -N $h -n $((h * p)) $*"
  fi
}

# step NAME PATTERN LAUNCHER H P ENV PROGRAM ARGS: one check; passes when the
# output matches PATTERN (grep -E) and shows no failed check. The launcher
# must exit by itself within 10 s of the result, except where a rank was
# killed under mpirun (STRAY_LAUNCHER_OK=1): Open MPI 4.1.4's mpirun does not
# exit once a rank on another host was killed, even with --enable-recovery
# (every rank has ended; mpirun and the orteds wait in their event loops),
# so the test ends it and says so.
step() {
  local name=$1 pattern=$2
  shift 2
  local t0 bg status ended=""
  t0=$(date +%s.%N)
  : >"$out"
  launch "$@" &
  bg=$!
  while kill -0 $bg 2>/dev/null && ! grep -Eq -- "$pattern" "$out"; do sleep 0.2; done
  for _ in $(seq 1 50); do
    kill -0 $bg 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 $bg 2>/dev/null; then
    ended="; the launcher had not exited 10 s after the result: ended by the test"
    pkill -TERM -P $bg # the `timeout` that runs the launcher, a child of this script
    [ "${STRAY_LAUNCHER_OK:-0}" = 1 ] || fail "$name: the launcher did not exit"
  fi
  wait $bg 2>/dev/null
  status=$?
  if grep -Eq -- "$pattern" "$out" && ! grep -Eq "check failed|FAILED" "$out"; then
    say "ok: $name ($(elapsed "$t0") s, launcher status $status$ended)"
  else
    fail "$name (launcher status $status); output:"
    sed 's/^/    /' "$out" | grep -v "UCX  WARN" | head -40
  fi
}

# bytes NAMESPACE DEVICE: bytes sent by class 1:1 (the shaped NIC direction).
bytes() {
  tc -n "$1" -s class show dev "$2" classid 1:1 | awk '/Sent/ { print $2; exit }'
}

run_layout() {  # LAUNCHER H P
  local launcher=$1 h=$2 p=$3 n=$(($2 * $3))
  up "$h"
  for ((i = 0; i < h; i++)); do echo "$prefix$i slots=$p"; done >"$out.hosts"
  if [ "$launcher" = srun ]; then
    srun_up=1
    "$scripts/slurm-cluster.sh" up >"$out" 2>&1 || { cat "$out"; say "FAIL: slurm-cluster.sh up"; exit 1; }
  fi
  step "$launcher $h x $p: hosts" "hosts ok: $h hosts x $p ranks \\(pmix\\)" \
    "$launcher" "$h" "$p" "" mp_bootstrap hosts pmix "$h" "$p" "$prefix"
  step "$launcher $h x $p: every collective" "colls ok: $n ranks" \
    "$launcher" "$h" "$p" "" mp_colls
  STRAY_LAUNCHER_OK=$([ "$launcher" = mpirun ] && echo 1 || echo 0) \
    step "$launcher $h x $p: fence, a relay killed" "fence kill ok: $((n - 1)) survivors, 1 kills" \
    "$launcher" "$h" "$p" "GROVE_FENCE_RELEASE_DELAY_MS=300 GROVE_RELEASE_RADIX=2 GROVE_TIMEOUT_MS=30000" \
    mp_fence kill 1
}

# A 1 MiB bcast from rank 0 on host 0 to one rank on each of hosts 1..3:
# each of those hosts must receive at least 1 MiB on its link (the switch
# port's egress towards it). With UCX's own choice of transports the same
# bcast moves (almost) nothing over the links: it uses shared memory.
run_tcp_bytes() {
  local size=1048576 i before after got
  up 4
  for ((i = 0; i < 4; i++)); do echo "$prefix$i slots=1"; done >"$out.hosts"
  for variant in tcp default; do
    for ((i = 1; i < 4; i++)); do before[$i]=$(bytes "${prefix}sw" "p$i"); done
    if [ $variant = tcp ]; then
      launch mpirun 4 1 "" mp_bcast_bytes $size
    else
      on_host0 "mpirun.openmpi --allow-run-as-root -np 4 --hostfile $out.hosts \
        --mca plm_rsh_agent $scripts/nsexec --mca oob_tcp_if_include 198.18.0.0/24 \
        -x GROVE_WAIT_POLICY=block mp_bcast_bytes $size"
    fi
    grep -q "bcast_bytes ok: 4 ranks, $size bytes" "$out" || { fail "bcast ($variant):"; cat "$out"; continue; }
    for ((i = 1; i < 4; i++)); do
      after=$(bytes "${prefix}sw" "p$i")
      got=$((after - before[i]))
      if [ $variant = tcp ] && [ $got -lt $size ]; then
        fail "UCX over TCP: host $i received $got bytes on its link, less than the $size broadcast"
      elif [ $variant = default ] && [ $got -ge $size ]; then
        fail "UCX default transports: host $i received $got bytes on its link (expected a shared-memory shortcut)"
      else
        say "ok: $variant: host $i received $got bytes on its link for a $size-byte bcast"
      fi
    done
  done
}

# Host 3 of 4 (ranks 6 and 7) loses its link while fences run: the other six
# see exactly those two ranks depart (the watch: keepalive unanswered for
# 3 s) and finish their fences with identical bytes.
run_host_drop() {
  up 4
  srun_up=1
  "$scripts/slurm-cluster.sh" up >"$out" 2>&1 || { cat "$out"; say "FAIL: slurm-cluster.sh up"; exit 1; }
  local t0 srun_pid
  t0=$(date +%s.%N)
  launch srun 4 2 "GROVE_PMIX_WATCH_TIMEOUT_MS=3000 GROVE_TIMEOUT_MS=30000" mp_fence drop 6,7 &
  srun_pid=$!
  for _ in $(seq 1 300); do
    grep -q "drop ready" "$out" 2>/dev/null && break
    sleep 0.1
  done
  ip -n "${prefix}3" link set eth0 down
  for _ in $(seq 1 300); do
    grep -q "fence drop ok" "$out" 2>/dev/null && break
    kill -0 $srun_pid 2>/dev/null || break
    sleep 0.1
  done
  # Let the cut-off host talk again so that Slurm can end the step.
  ip -n "${prefix}3" link set eth0 up
  wait $srun_pid
  if grep -q "fence drop ok: 6 survivors, departed 6,7" "$out" && ! grep -q "check failed" "$out"; then
    say "ok: srun 4 x 2: host 3 dropped out, ranks 6,7 departed ($(elapsed "$t0") s)"
  else
    fail "host drop; output:"
    grep -v "UCX  WARN" "$out" | sed 's/^/    /' | head -40
  fi
}

case "$mode" in
  mpirun | srun) run_layout "$mode" "$3" "$4" ;;
  tcp-bytes) run_tcp_bytes ;;
  host-drop) run_host_drop ;;
  *) echo "usage: cluster_test.sh BIN_DIR mpirun|srun H P | tcp-bytes | host-drop" >&2; exit 2 ;;
esac
if [ $failures -ne 0 ]; then
  say "$failures check(s) failed ($(elapsed "$started") s)"
  exit 1
fi
say "all checks passed: $mode ${3:-} ${4:-} ($(elapsed "$started") s)"
