#!/usr/bin/env bash
# Installs the Debian packages fleetsim builds and tests with, only those missing.
# Runs as root, or through sudo otherwise. Debian 12 (bookworm) is the reference.
set -euo pipefail

packages=(
  g++ cmake ninja-build make pkg-config
  libopenmpi-dev openmpi-bin          # MPI ranks
  libhdf5-openmpi-dev hdf5-tools      # parallel HDF5 output, h5dump/h5diff for tests
  libtbb-dev                          # threads inside a rank
  libyaml-cpp-dev                     # configs (and HF config.json)
  libcli11-dev                        # command line
  libgtest-dev                        # tests
  clang-format git                    # tests/style: the formatting check
  clang-16 libclang-rt-16-dev llvm    # scripts/fuzz.sh: libFuzzer + ASan/UBSan, llvm-symbolizer
  slurm-wlm munge                     # tests/slurm: a one-node Slurm (slurmctld, slurmd, srun)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
