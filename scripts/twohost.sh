#!/usr/bin/env bash
# A two-host test bed inside one Linux machine: two "hosts", each a network
# namespace with its own UTS namespace (its own hostname, so Open MPI sees
# two nodes) and its own /etc/hosts, joined by a veth pair whose egress is
# shaped by tc's token bucket filter to a known rate. Needs root and
# iproute2 (`ip netns`, `tc`).
#
#   scripts/twohost.sh run [--rate RATE] -- CMD [ARG]...
#       builds the bed, runs CMD on host A (with the variables below set),
#       and tears the bed down when CMD ends, fails or is interrupted;
#       exits with CMD's status (3 when the bed cannot be built).
#   scripts/twohost.sh check
#       exits 0 when this machine can build the bed, else prints why, exit 3.
#
# Inside `run`, CMD (and anything it starts) sees:
#   TWOHOST_A, TWOHOST_B         host names (twohost-a, twohost-b)
#   TWOHOST_MPIRUN_ARGS          the mpirun options that launch across both:
#       --bind-to none --host twohost-a,twohost-b
#       --mca plm_rsh_agent <scripts/twohost-rsh.sh> --mca mpi_yield_when_idle 1
#       --mca btl tcp,self --mca btl_tcp_if_include <subnet>
#       --mca oob_tcp_if_include <subnet>
#   TWOHOST_SHAPE                a command that reshapes the link, both ways:
#       $TWOHOST_SHAPE 200mbit [BURST]   (`none` removes the shaping)
#   TWOHOST_LINK                 $TWOHOST_LINK down / up: cuts the link
#   TWOHOST_EXEC_B               runs a command on host B: $TWOHOST_EXEC_B tc -s qdisc
#   TWOHOST_KILL_B               kills the processes of that name on host B
#       (and nowhere else): $TWOHOST_KILL_B calibrate
#
# Addresses: 10.213.20.1 (A) and 10.213.20.2 (B) on a /30. They exist only
# inside the two namespaces, which have no other interface than loopback
# and the veth pair, so no packet of the bed can leave it.
#
# CPUs: the CPUs this script may use are split in two halves, one per host
# (taskset), and mpirun is told not to bind (--bind-to none): each host's
# Open MPI sees the whole machine and would bind both ranks to core 0, where
# they would take turns on one core and every message would wait for a
# time slice (milliseconds). The ranks also yield the CPU while they poll
# (mpi_yield_when_idle): the bed's wire is kernel work (the qdisc, the veth
# and TCP in soft interrupts) on the same CPUs, which a spinning rank would
# starve.
#
# Shaping (tc tbf on each veth's egress): rate RATE; burst BURST, by default
# RATE·1 ms, at least 4 KiB. The bucket must hold what the link sends
# between two runs of the qdisc: at 1 Gbit/s (83 000 frames/s) a VM's qdisc
# lags enough that a 16-32 KiB bucket loses tokens and the link carries only
# 60-75% of its rate, while at 200 Mbit/s 4 KiB loses nothing. A message of
# n > BURST bytes takes (n − BURST)/RATE + T0 (the full bucket is a head start
# that lowers the fitted intercept, not the slope); a smaller message goes at
# the veth's speed while the bucket lasts. limit = max(4 MiB, RATE·50 ms) of
# queue: TCP's data in flight is delayed, never dropped (a drop would mean a
# retransmission and a slower, noisier link than the rate). tc counts
# Ethernet frames: the MPI payload moves at RATE·1448/1514 (0.956·RATE) with
# a 1500-byte MTU and TCP timestamps.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

SUBNET=10.213.20.0/30
ADDR_A=10.213.20.1
ADDR_B=10.213.20.2
HOST_A=twohost-a
HOST_B=twohost-b

die() {
  echo "twohost: $*" >&2
  exit 3
}

check() {
  [ "$(id -u)" -eq 0 ] || { echo "twohost: needs root (network namespaces and tc)" >&2; return 3; }
  command -v ip >/dev/null && command -v tc >/dev/null && command -v unshare >/dev/null \
    && command -v nsenter >/dev/null || { echo "twohost: needs iproute2 (ip, tc) and util-linux (unshare, nsenter)" >&2; return 3; }
  local probe="twohost-probe-$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "twohost: cannot create a network namespace (ip netns add failed)" >&2
    return 3
  fi
  ip netns del "$probe"
}

# Names unique to this run, so parallel runs do not collide.
setup_names() {
  local id="$$"
  NS_A="twohost-a-$id"
  NS_B="twohost-b-$id"
  VETH_A="th${id}a"
  VETH_B="th${id}b"
  STATE="/run/twohost-$id"
}

teardown() {
  set +e
  # Processes left in the namespaces (a killed job's orted or ranks).
  for ns in "$NS_A" "$NS_B"; do
    local pids
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
  done
  for h in a b; do
    if [ -e "$STATE/uts-$h" ]; then umount "$STATE/uts-$h" 2>/dev/null; fi
  done
  ip netns del "$NS_A" 2>/dev/null
  ip netns del "$NS_B" 2>/dev/null
  rm -rf "/etc/netns/$NS_A" "/etc/netns/$NS_B" "$STATE"
  rmdir /etc/netns 2>/dev/null
  return 0
}

# The CPUs this process may use, split in two halves: host A's and host
# B's, so the two hosts' ranks never share a core (mpirun binds a rank to
# the first core it may use, which would otherwise be core 0 on both).
split_cpus() {
  local list all=() part a b i
  list=$(taskset -pc $$ | sed 's/.*: *//')
  IFS=, read -r -a parts <<< "$list"
  for part in "${parts[@]}"; do
    if [[ "$part" == *-* ]]; then
      for ((i = ${part%-*}; i <= ${part#*-}; i++)); do all+=("$i"); done
    else
      all+=("$part")
    fi
  done
  if [ ${#all[@]} -lt 2 ]; then
    CPUS_A=${all[0]} CPUS_B=${all[0]}
    echo "twohost: one CPU only; both hosts share it and the timings will show it" >&2
    return
  fi
  a=$(( ${#all[@]} / 2 ))
  CPUS_A=$(IFS=,; echo "${all[*]:0:a}")
  CPUS_B=$(IFS=,; echo "${all[*]:a}")
}

# Host names as both hosts resolve them (ip netns exec bind-mounts
# /etc/netns/NS/hosts over /etc/hosts).
hosts_file() {
  printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "$ADDR_A" "$HOST_A" "$ADDR_B" "$HOST_B"
}

build() {
  split_cpus
  mkdir -p "$STATE" "/etc/netns/$NS_A" "/etc/netns/$NS_B"
  hosts_file > "/etc/netns/$NS_A/hosts"
  hosts_file > "/etc/netns/$NS_B/hosts"
  ip netns add "$NS_A"
  ip netns add "$NS_B"
  ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B"
  ip -n "$NS_A" addr add "$ADDR_A/30" dev "$VETH_A"
  ip -n "$NS_B" addr add "$ADDR_B/30" dev "$VETH_B"
  for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
  ip -n "$NS_A" link set "$VETH_A" up
  ip -n "$NS_B" link set "$VETH_B" up
  # A persistent UTS namespace per host, with its hostname.
  touch "$STATE/uts-a" "$STATE/uts-b"
  unshare --uts="$STATE/uts-a" hostname "$HOST_A"
  unshare --uts="$STATE/uts-b" hostname "$HOST_B"
  # The namespace of each host, for the rsh agent.
  printf '%s %s %s %s\n%s %s %s %s\n' "$HOST_A" "$NS_A" "$STATE/uts-a" "$CPUS_A" \
    "$HOST_B" "$NS_B" "$STATE/uts-b" "$CPUS_B" > "$STATE/hosts.map"
}

# Bytes as tc reads them ("b" suffix), from bits/s.
shape_one() { # ns dev rate_bps burst_bytes
  local ns=$1 dev=$2 bps=$3 burst=$4
  local limit=$((bps / 8 / 20))
  ((limit < 4194304)) && limit=4194304
  tc -n "$ns" qdisc replace dev "$dev" root tbf rate "${bps}bit" burst "${burst}b" limit "${limit}b"
}

# RATE in tc's words (1gbit, 200mbit, 500kbit) to bits/s.
rate_bps() {
  local r=${1,,}
  case "$r" in
    *gbit) echo $((${r%gbit} * 1000000000)) ;;
    *mbit) echo $((${r%mbit} * 1000000)) ;;
    *kbit) echo $((${r%kbit} * 1000)) ;;
    *bit) echo $((${r%bit})) ;;
    *) return 1 ;;
  esac
}

# SIZE in tc's words (4kb = 4096 bytes, 125000b) to bytes.
size_bytes() {
  local v=${1,,}
  case "$v" in
    *kb) echo $((${v%kb} * 1024)) ;;
    *mb) echo $((${v%mb} * 1048576)) ;;
    *b) echo $((${v%b})) ;;
    *) return 1 ;;
  esac
}

shape() { # rate|none [burst]
  if [ "$1" = none ]; then
    tc -n "$NS_A" qdisc del dev "$VETH_A" root 2>/dev/null || true
    tc -n "$NS_B" qdisc del dev "$VETH_B" root 2>/dev/null || true
    return 0
  fi
  local bps
  bps=$(rate_bps "$1") || die "rate '$1' is not understood; give e.g. 1gbit, 200mbit"
  local burst=$((bps / 8 / 1000))
  if [ -n "${2:-}" ]; then
    burst=$(size_bytes "$2") || die "burst '$2' is not understood; give e.g. 4kb, 125000b"
  fi
  ((burst < 4096)) && burst=4096
  shape_one "$NS_A" "$VETH_A" "$bps" "$burst"
  shape_one "$NS_B" "$VETH_B" "$bps" "$burst"
}

link() { # up|down
  ip -n "$NS_A" link set "$VETH_A" "$1"
  ip -n "$NS_B" link set "$VETH_B" "$1"
}

# Runs a command on host X (a or b): its network, hostname and hosts file.
on_host() { # a|b cmd...
  local h=$1 ns cpus
  shift
  if [ "$h" = a ]; then ns=$NS_A cpus=$CPUS_A; else ns=$NS_B cpus=$CPUS_B; fi
  ip netns exec "$ns" nsenter --uts="$STATE/uts-$h" taskset -c "$cpus" "$@"
}

run() {
  local rate=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --rate) rate=$2; shift 2 ;;
      --) shift; break ;;
      *) die "unknown option $1; usage: twohost.sh run [--rate RATE] -- CMD..." ;;
    esac
  done
  [ $# -gt 0 ] || die "no command; usage: twohost.sh run [--rate RATE] -- CMD..."
  check || exit 3
  setup_names
  trap teardown EXIT
  trap 'exit 130' INT TERM
  child=""
  build || die "building the two-host bed failed"
  [ -n "$rate" ] && shape "$rate"
  export TWOHOST_A=$HOST_A TWOHOST_B=$HOST_B TWOHOST_STATE=$STATE
  export TWOHOST_MPIRUN_ARGS="--bind-to none --host $HOST_A,$HOST_B --mca plm_rsh_agent $here/twohost-rsh.sh --mca mpi_yield_when_idle 1 --mca btl tcp,self --mca btl_tcp_if_include $SUBNET --mca oob_tcp_if_include $SUBNET"
  export TWOHOST_SHAPE="$here/twohost.sh _shape $NS_A $VETH_A $NS_B $VETH_B"
  export TWOHOST_LINK="$here/twohost.sh _link $NS_A $VETH_A $NS_B $VETH_B"
  export TWOHOST_EXEC_B="$here/twohost.sh _on $NS_B $STATE/uts-b"
  export TWOHOST_KILL_B="$here/twohost.sh _kill $NS_B"
  set +e
  on_host a "$@" &
  child=$!
  trap 'kill -TERM "$child" 2>/dev/null; exit 130' INT TERM
  wait "$child"
  local status=$?
  set -e
  exit "$status"
}

case "${1:-}" in
  run) shift; run "$@" ;;
  check) check ;;
  _shape) NS_A=$2 VETH_A=$3 NS_B=$4 VETH_B=$5; shape "$6" "${7:-}" ;;
  _link) NS_A=$2 VETH_A=$3 NS_B=$4 VETH_B=$5; link "$6" ;;
  _kill) # ns name: SIGKILL to the processes called NAME in that namespace only
    for pid in $(ip netns pids "$2"); do
      [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$3" ] && kill -9 "$pid"
    done
    exit 0 ;;
  _on) ns=$2 uts=$3; shift 3; exec ip netns exec "$ns" nsenter --uts="$uts" "$@" ;;
  *) die "usage: twohost.sh run [--rate RATE] -- CMD... | twohost.sh check" ;;
esac
