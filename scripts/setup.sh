#!/usr/bin/env bash
# Installs what the toolkit needs on a Debian-like machine, where it is
# missing: Open MPI (with clang/libclang for the Rust MPI bindings), likwid
# for the reference benchmarks, poppler-utils (pdffonts, with which the chart
# tests check the PDF's embedded font), iproute2 and util-linux for the
# two-host test bed (ip netns, tc, unshare, nsenter), and the Python packages
# of the notebooks in a virtual environment (.venv). Safe to run again: it
# only adds what lacks.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in libopenmpi-dev openmpi-bin libclang-dev clang likwid python3-venv poppler-utils iproute2 util-linux; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ -f notebooks/requirements.txt ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q -r notebooks/requirements.txt
fi
