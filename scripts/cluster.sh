#!/bin/bash
# cluster.sh: an emulated cluster of N hosts on this machine, one network
# namespace per host, joined by a bridge in a namespace of its own.
#
#   scripts/cluster.sh up N RATE      e.g. up 4 1gbit
#   scripts/cluster.sh down           removes everything `up` made (idempotent)
#   scripts/cluster.sh status         hosts, addresses, byte counters
#
# Host i is the namespace ${PREFIX}i (PREFIX from CLUSTER_PREFIX, default gvh)
# with one interface eth0 at 198.18.0.(i+1)/24 and the host name ${PREFIX}i
# (scripts/nsexec sets it). The switch is ${PREFIX}sw. Each host's NIC is
# shaped to RATE in both directions with HTB: what it sends on eth0, what it
# receives on its switch port p<i>; class 1:1 of either counts the bytes that
# crossed (`tc -n ${PREFIX}i -s class show dev eth0`). Addresses are from the
# benchmarking range and exist only inside these namespaces; nothing is
# attached to the machine's own network. Needs root and iproute2.
set -u
PREFIX=${CLUSTER_PREFIX:-gvh}
SW=${PREFIX}sw
NET=198.18.0
STATE=/tmp/grove-cluster-$PREFIX.state

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

[[ "$PREFIX" =~ ^[a-z][a-z0-9]{0,11}$ ]] || die "CLUSTER_PREFIX '$PREFIX' must be 1-12 lower-case letters and digits"

# shape NAMESPACE DEVICE RATE: one HTB class at RATE, a FIFO under it.
shape() {
  tc -n "$1" qdisc replace dev "$2" root handle 1: htb default 1 &&
    tc -n "$1" class add dev "$2" parent 1: classid 1:1 htb rate "$3" ceil "$3" quantum 60000 &&
    tc -n "$1" qdisc add dev "$2" parent 1:1 handle 10: pfifo limit 1000
}

hosts_made() {
  ip netns list | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" | sort -V
}

cmd_down() {
  local ns pids
  for ns in $(hosts_made); do
    pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
    # Whatever still runs "on" a host is part of the cluster: end it.
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    ip netns del "$ns"
    rm -rf "/etc/netns/$ns"
  done
  ip netns list | awk '{print $1}' | grep -qx "$SW" && ip netns del "$SW"
  rmdir /etc/netns 2>/dev/null
  rm -f "$STATE"
  return 0
}

cmd_up() {
  [ $# -eq 2 ] || die "usage: up N RATE"
  local n=$1 rate=$2 i j ns hosts
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "N must be 1..64"
  [[ "$rate" =~ ^[0-9]+(kbit|mbit|gbit)$ ]] || die "RATE '$rate' must look like 100mbit or 1gbit"
  [ "$(id -u)" -eq 0 ] || die "needs root"
  cmd_down
  ip netns add "$SW" || die "cannot create network namespaces (ip netns add $SW failed)"
  ip -n "$SW" link set lo up
  ip -n "$SW" link add br0 type bridge stp_state 0 forward_delay 0
  ip -n "$SW" link set br0 up
  hosts=$(printf '127.0.0.1\tlocalhost\n'; for ((j = 0; j < n; j++)); do printf '%s.%d\t%s%d\n' $NET $((j + 1)) "$PREFIX" $j; done)
  for ((i = 0; i < n; i++)); do
    ns=$PREFIX$i
    ip netns add "$ns" || die "cannot create $ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$ns" link set lo up
    ip link add eth0 netns "$ns" address "$(printf '02:67:72:00:00:%02x' $((i + 1)))" type veth \
      peer name "p$i" netns "$SW" || die "veth for $ns"
    ip -n "$SW" link set "p$i" master br0
    ip -n "$SW" link set "p$i" up
    ip -n "$ns" addr add "$NET.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    shape "$ns" eth0 "$rate" || die "shaping $ns:eth0 (tc htb)"
    shape "$SW" "p$i" "$rate" || die "shaping $SW:p$i (tc htb)"
    # `ip netns exec` binds /etc/netns/NS/hosts over /etc/hosts: names resolve on every host.
    mkdir -p "/etc/netns/$ns" && printf '%s\n' "$hosts" >"/etc/netns/$ns/hosts"
  done
  # Permanent neighbour entries: no ARP traffic in the counters or the timings.
  for ((i = 0; i < n; i++)); do
    for ((j = 0; j < n; j++)); do
      [ $j -eq $i ] || ip -n "$PREFIX$i" neigh replace "$NET.$((j + 1))" \
        lladdr "$(printf '02:67:72:00:00:%02x' $((j + 1)))" dev eth0 nud permanent
    done
  done
  echo "$n $rate" >"$STATE"
  echo "cluster.sh: $n hosts ${PREFIX}0..${PREFIX}$((n - 1)) at $NET.1..$n, $rate each way"
}

cmd_status() {
  [ -f "$STATE" ] && echo "cluster.sh: up: $(cat "$STATE")" || echo "cluster.sh: not up"
  local ns
  for ns in $(hosts_made); do
    echo "== $ns: $(ip -n "$ns" -br addr show dev eth0)"
    tc -n "$ns" -s class show dev eth0 classid 1:1 | sed -n 2p
  done
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 up N RATE | down | status   (CLUSTER_PREFIX names the hosts)" >&2; exit 2 ;;
esac
