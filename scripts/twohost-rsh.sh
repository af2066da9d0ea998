#!/usr/bin/env bash
# The remote-shell agent of the two-host test bed (scripts/twohost.sh), in
# the place of ssh: `mpirun --mca plm_rsh_agent scripts/twohost-rsh.sh`
# calls it as `twohost-rsh.sh [ssh options] HOST COMMAND...` to start Open
# MPI's daemon on HOST. Like ssh it resolves HOST with the caller's
# /etc/hosts, fails when the address cannot be reached over the bed's link,
# and runs COMMAND through a shell on that host with a fresh environment;
# the host is the network and UTS namespace the bed made for it.
set -uo pipefail

map="${TWOHOST_STATE:-}/hosts.map"
if [ -z "${TWOHOST_STATE:-}" ] || [ ! -r "$map" ]; then
  echo "twohost-rsh: no two-host bed is running (start commands with scripts/twohost.sh run)" >&2
  exit 255
fi

# ssh options Open MPI may pass before the host (-x: no X11 forwarding).
while [ $# -gt 0 ] && [[ "$1" == -* ]]; do shift; done
host=${1:-}
shift || true
if [ -z "$host" ]; then
  echo "twohost-rsh: no host given" >&2
  exit 255
fi

addr=$(getent hosts "$host" | awk '{print $1; exit}')
if [ -z "$addr" ]; then
  echo "twohost-rsh: could not resolve host name '$host'" >&2
  exit 255
fi
# The bed's host with that address (by its name in the bed's hosts file).
name=$(getent hosts "$addr" | awk '{print $2; exit}')
read -r _ ns uts cpus < <(awk -v n="$name" '$1 == n {print; exit}' "$map")
if [ -z "${ns:-}" ]; then
  echo "twohost-rsh: host '$host' ($addr) is not a host of the two-host bed" >&2
  exit 255
fi
if ! ip route get "$addr" >/dev/null 2>&1; then
  echo "twohost-rsh: cannot reach host '$host' ($addr): network is unreachable" >&2
  exit 255
fi

# Each host keeps to its own CPUs (the bed's hosts.map), as two nodes do.
exec ip netns exec "$ns" nsenter --uts="$uts" taskset -c "$cpus" \
  env -i PATH="$PATH" HOME="${HOME:-/root}" LANG="${LANG:-C.UTF-8}" \
  TWOHOST_STATE="$TWOHOST_STATE" sh -c "$*"
