#!/usr/bin/env bash
# Installs the Debian packages fleetsim builds and tests with, only those missing.
# Runs as root, or through sudo otherwise. Debian 12 (bookworm) is the reference.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake ninja-build make pkg-config
  libopenmpi-dev openmpi-bin          # MPI ranks
  libhdf5-openmpi-dev hdf5-tools      # parallel HDF5 output, h5dump/h5diff for tests
  libyaml-cpp-dev                     # configs (and HF config.json)
  libcli11-dev                        # command line
  libgtest-dev                        # tests
  clang-format git                    # tests/style: the formatting check
  clang-16 libclang-rt-16-dev llvm    # scripts/fuzz.sh: libFuzzer + ASan/UBSan, llvm-symbolizer
  slurm-wlm munge                     # tests/slurm: a one-node Slurm (slurmctld, slurmd, srun)
  nodejs                              # fleetsim report: chart SVGs (web/render_images.mjs), npm
  librsvg2-bin fonts-dejavu-core      # fleetsim report: chart PNGs (rsvg-convert), their font
  chromium                            # tests/report: the report page in headless Chromium
  python3-h5py python3-pandas         # tests/output: the README's Python reader
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
# npm comes inside some builds of nodejs (NodeSource's); Debian's needs Debian's npm.
command -v npm >/dev/null || missing+=(npm)
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The report's charting libraries (Vega, Vega-Lite, vega-embed) and the page test's browser
# driver (playwright-core), at the versions web/package-lock.json pins, into web/node_modules.
# Again only when the lock file changed since the last install.
web=web
stamp=$web/node_modules/.fleetsim-installed-lock.json
if ! cmp -s "$web/package-lock.json" "$stamp" 2>/dev/null; then
  echo "install-deps: npm ci in $web/"
  npm ci --prefix "$web" --no-audit --no-fund --loglevel=error
  cp "$web/package-lock.json" "$stamp"
else
  echo "install-deps: $web/node_modules matches package-lock.json"
fi
