# Sourced by the scripts: lets Open MPI's mpirun run as root (containers, CI).
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# cpu_family: the name the accuracy data of this CPU goes under, its vendor
# and widest vector unit (intel-avx512, amd-avx2, amd-avx512, ...), so that
# each family's measurements are kept apart. A PERFMODEL_MAX_ISA below that
# unit is named too (amd-avx512-capped-avx2): a capped run is this CPU's,
# not a narrower family's.
cpu_family() {
  local vendor isa rank="scalar avx2 avx512" cap=${PERFMODEL_MAX_ISA:-}
  case "$(grep -m1 '^vendor_id' /proc/cpuinfo 2>/dev/null)" in
    *GenuineIntel*) vendor=intel ;;
    *AuthenticAMD*) vendor=amd ;;
    *) vendor=$(uname -m) ;;
  esac
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then isa=avx512
  elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then isa=avx2
  else isa=scalar; fi
  # The cap narrows when it comes before the unit in $rank.
  if [ -n "$cap" ] && [[ "${rank%%"$isa"*}" == *"$cap"* ]]; then
    echo "$vendor-$isa-capped-$cap"
  else
    echo "$vendor-$isa"
  fi
}

# narrow_cflags: the gcc flags that keep -march=native code within
# PERFMODEL_MAX_ISA's cap, as calibrate's kernels and the built-in ones
# keep to it (scalar: baseline x86-64, SSE2).
narrow_cflags() {
  case "${PERFMODEL_MAX_ISA:-}" in
    avx2) echo -mno-avx512f ;;
    scalar) echo -mno-avx -mno-fma ;;
  esac
}
