# Sourced by the bench scripts: the checkout (root), the binary (FLEETSIM, default this
# checkout's build), the output folder (BENCH_OUT, default bench/out), and Open MPI's
# environment for mpirun here.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fleetsim=${FLEETSIM:-$root/build/sim/fleetsim}
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"
if [[ $(id -u) == 0 ]]; then  # Open MPI refuses root unless told
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
