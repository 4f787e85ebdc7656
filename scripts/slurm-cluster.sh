#!/bin/bash
# slurm-cluster.sh: Slurm on the emulated cluster that scripts/cluster.sh made
# (same CLUSTER_PREFIX): munge, slurmctld on host 0, one slurmd per host,
# srun --mpi=pmix. Debian 12 packages: slurmd slurmctld slurm-client munge.
#
#   scripts/slurm-cluster.sh up       writes slurm.conf, starts the daemons, waits until idle
#   scripts/slurm-cluster.sh down     stops them and removes the state (idempotent)
#   scripts/slurm-cluster.sh status   sinfo
#
# Everything lives in /tmp/grove-slurm-$CLUSTER_PREFIX (configuration, spool,
# state, logs). Commands run on a host and need the configuration:
#
#   scripts/nsexec gvh0 "SLURM_CONF=/tmp/grove-slurm-gvh/slurm.conf srun --mpi=pmix -N 4 ./app"
#
# What this machine needs that a real cluster does not, done by the wrapper
# each slurmd starts under (it runs in the private mount namespace that
# `ip netns exec` makes):
#   - `ip netns exec` mounts a fresh /sys without the cgroup hierarchies, and
#     slurmd 22.05 will not start without them: the wrapper mounts the
#     machine's cgroup v1 controllers again;
#   - all hosts share /tmp, where Slurm's PMIx plugin makes one directory per
#     job step named after the step only: each host gets its own tmpfs there.
set -u
PREFIX=${CLUSTER_PREFIX:-gvh}
D=/tmp/grove-slurm-$PREFIX
HERE=$(cd "$(dirname "$0")" && pwd)
NSEXEC=$HERE/nsexec

die() {
  echo "slurm-cluster.sh: $*" >&2
  exit 1
}

hosts() {
  ip netns list | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" | sort -V
}

on() {  # on HOST COMMAND: run COMMAND on HOST with this cluster's configuration
  "$NSEXEC" "$1" "SLURM_CONF=$D/slurm.conf $2"
}

cmd_down() {
  local p pids=""
  for p in "$D"/slurmd-*.pid "$D"/slurmctld.pid; do
    [ -f "$p" ] && pids="$pids $(cat "$p")"
  done
  if [ -n "$pids" ]; then
    kill $pids 2>/dev/null
    for _ in $(seq 1 25); do
      kill -0 $pids 2>/dev/null || break
      sleep 0.2
    done
    kill -9 $pids 2>/dev/null
  fi
  # munged stays: it serves the whole machine (and any other Slurm on it).
  rm -rf "$D"
  return 0
}

cmd_up() {
  local b n last h idle
  for b in slurmd slurmctld srun sinfo munged; do
    command -v $b >/dev/null || die "$b is missing (apt-get install slurmd slurmctld slurm-client munge)"
  done
  n=$(hosts | wc -l)
  [ "$n" -ge 1 ] || die "no emulated hosts ${PREFIX}0.. (run CLUSTER_PREFIX=$PREFIX scripts/cluster.sh up N RATE first)"
  cmd_down
  mkdir -p "$D/state" "$D/log" "$D/pmix"

  # munge: one daemon for the machine (its socket is a file, reachable from every host).
  if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    if [ ! -s /etc/munge/munge.key ]; then
      mungekey --create --force 2>/dev/null ||
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
      chown munge:munge /etc/munge/munge.key 2>/dev/null
      chmod 400 /etc/munge/munge.key
    fi
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
    /usr/sbin/munged --force 2>/dev/null || die "munged failed to start"
    munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munge does not work after starting munged"
  fi

  last=$((n - 1))
  cat >"$D/slurm.conf" <<CONF
ClusterName=grove
SlurmctldHost=${PREFIX}0(198.18.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool-%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=${PREFIX}[0-$last] NodeAddr=198.18.0.[1-$n] CPUs=$(nproc) State=UNKNOWN
PartitionName=all Nodes=${PREFIX}[0-$last] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
  echo "PMIxCliTmpDirBase=$D/pmix" >"$D/mpi.conf"
  cat >"$D/slurm-host.sh" <<WRAP
#!/bin/sh
# Runs slurmd for one emulated host (see scripts/slurm-cluster.sh).
mount -t tmpfs -o mode=755 cgroup-root /sys/fs/cgroup
awk '\$3 == "cgroup" {print \$2, \$4}' /proc/1/mounts | while read -r dir options; do
  mkdir -p "\$dir" && mount -t cgroup -o "\$options" cgroup "\$dir"
done
mount -t tmpfs -o mode=1777 pmix-tmp $D/pmix
exec "\$@"
WRAP
  chmod +x "$D/slurm-host.sh"

  on "${PREFIX}0" "slurmctld" || die "slurmctld did not start (see $D/log/slurmctld.log)"
  for h in $(hosts); do
    on "$h" "$D/slurm-host.sh slurmd -N $h" || die "slurmd on $h did not start (see $D/log/slurmd-$h.log)"
  done
  for _ in $(seq 1 60); do
    idle=$(on "${PREFIX}0" "sinfo -h -t idle -o %D" 2>/dev/null | head -1)
    if [ "${idle:-0}" = "$n" ]; then
      echo "slurm-cluster.sh: $n hosts idle; SLURM_CONF=$D/slurm.conf"
      return 0
    fi
    sleep 0.5
  done
  die "the hosts did not come up idle within 30 s (see $D/log)"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status)
    [ -f "$D/slurm.conf" ] || die "not up"
    on "${PREFIX}0" sinfo
    ;;
  *) echo "usage: $0 up|down|status   (CLUSTER_PREFIX names the cluster)" >&2; exit 2 ;;
esac
