#!/usr/bin/env bash
# Installs the Debian packages grove needs, only those missing. Idempotent;
# silent when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format
  libucx-dev ucx-utils libpmix-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox
  # `make fuzz` (tests/fuzz/): clang with libFuzzer's runtime.
  clang libclang-rt-14-dev
  # Peers of `grove bench --peers` (bench/peers/); optional at build time.
  # Open MPI's mpirun also starts grove programs in the tests (tests/pmix/).
  openmpi-bin libopenmpi-dev mpich libmpich-dev libgloo-dev
  # The emulated cluster and Slurm on it (scripts/cluster.sh, scripts/slurm-cluster.sh).
  iproute2 slurmd slurmctld slurm-client munge
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
