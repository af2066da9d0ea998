#!/usr/bin/env bash
# The alpha-beta fit against a link of known speed: two hosts in network
# namespaces joined by a veth shaped to 1 Gbit/s and 200 Mbit/s
# (scripts/twohost.sh); the ping-pong must recover each shaped rate within
# 10% and a T0 that does not move with the rate, the ghost stencil runs
# across the hosts with its prediction, and the knee of the two-host profile
# is checked against the formula. Needs root. A benchmark, not a test: on a
# loaded machine the CPUs that carry the link's traffic are shared.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
cargo test --release -p predict --test twohost two_hosts_recover -- --ignored --nocapture --test-threads=1
