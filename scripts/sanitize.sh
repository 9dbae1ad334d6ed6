#!/usr/bin/env bash
# Builds fleetsim and its tests under sanitizers, and runs the tests there:
#
#   scripts/sanitize.sh address          # ASan + LeakSanitizer + UBSan: build-asan/, every test
#   scripts/sanitize.sh thread           # TSan: build-tsan/, the tests that run threads (the
#                                        # fleet determinism runs at --threads 2, and the
#                                        # threads-as-ranks collectives, comm/communicator.h)
#   scripts/sanitize.sh address -L fast  # arguments after the sanitizer go to ctest instead
#   FLEETSIM_SANITIZE_TARGETS="fleetsim core_test" scripts/sanitize.sh address -R '^Json'
#                                        # build only those targets (default: all), then test
#   scripts/sanitize.sh --ci             # the subset the suite runs (test sanitize_ci, label
#                                        # sanitize): ASan+UBSan on core_test and model_test
#                                        # (the readers the fuzzers also cover, the model and
#                                        # hardware cards) and the MPI runtime at 1-4 ranks
#
# Each sanitizer has its own build folder, configured with -DFLEETSIM_SANITIZE=... (gcc,
# RelWithDebInfo, ccache when installed, at most 2 jobs under nice). ctest runs there with
# the options below: every report is fatal and fails the test that met it, except what
# the suppression files in scripts/sanitizers/ name -- leaks and races inside Open MPI,
# PMIx, hwloc, HDF5 and TBB, each with its reason. The test binaries are listed when ctest
# starts (gtest discovery at test time), under the same options. Record of what was run
# and found: docs/FUZZING.md, "Sanitizers".
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
supp="$root/scripts/sanitizers"

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

# The options every sanitized process gets (ctest passes the environment on to the test
# binaries, mpirun to its ranks).
export_options() {
  local symbolizer
  symbolizer=$(command -v llvm-symbolizer || true)
  # fast_unwind_on_malloc=0: whole allocation stacks. Open MPI 4.1 dlcloses its components
  # at MPI_Finalize, so the top frames of the leaks they keep have no module name left;
  # only the frames below (MPI_Init_thread in libmpi) let lsan.supp name them. It costs
  # time in every allocation, so the test binaries that never start MPI get the fast
  # unwinder back (tests/CMakeLists.txt, fleetsim_test).
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0:fast_unwind_on_malloc=0${symbolizer:+:external_symbolizer_path=$symbolizer}"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="suppressions=$supp/ubsan.supp:print_stacktrace=1:halt_on_error=1"
  export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1:history_size=4"
  # Open MPI refuses root without these; in containers the CMA copy path warns.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
}

# build SANITIZER FOLDER [TARGET...]
build() {
  local sanitizer=$1 dir=$2
  shift 2
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    local extra=()
    command -v ninja >/dev/null && extra+=(-G Ninja)
    command -v ccache >/dev/null &&
      extra+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
    mkdir -p "$dir"
    cmake -S . -B "$dir" "${extra[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFLEETSIM_SANITIZE="$sanitizer" >"$dir/configure.log" 2>&1 ||
      { cat "$dir/configure.log" >&2; exit 2; }
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  nice -n 10 cmake --build "$dir" --parallel "${FLEETSIM_SANITIZE_JOBS:-2}" "${targets[@]}"
}

# check SANITIZER FOLDER CTEST_ARGS...
check() {
  local dir=$2
  shift 2
  ctest --test-dir "$dir" --output-on-failure --timeout 1800 "$@"
}

export_options
case "${1:-}" in
  address)
    shift
    # shellcheck disable=SC2086  # a list of target names
    build address,undefined "$root/build-asan" ${FLEETSIM_SANITIZE_TARGETS:-}
    check address "$root/build-asan" "$@"
    ;;
  thread)
    shift
    build thread "$root/build-tsan" fleetsim comm_thread_ranks_test
    # Unless the arguments choose tests (-R, -E, -L, -I): every determinism run (each at
    # (2,2) and (4,2) ranks x threads) and the threaded collectives, since the other
    # tests' binaries are not built here.
    chosen=0
    for arg in "$@"; do
      case $arg in -R* | -E* | -L* | -I* | --tests-regex | --label-regex) chosen=1 ;; esac
    done
    [[ $chosen == 1 ]] || set -- "$@" -R '^(fleet_determinism_|comm_thread_ranks_)'
    check thread "$root/build-tsan" "$@"
    ;;
  --ci)
    # What fits beside the suite on a 2-core CI machine: the libraries these tests link
    # (core, model, comm), not the whole simulator (docs/FUZZING.md, "Sanitizers"). The
    # gtest binaries run directly, since ctest would also list the test binaries this
    # subset does not build.
    build address,undefined "$root/build-asan" core_test model_test comm_mpi_test \
      comm_agreement_test
    # Neither binary initialises MPI, so the fast unwinder is enough for their leaks
    # (tests/CMakeLists.txt, fleetsim_test, says why the others do without it).
    for binary in core_test model_test; do
      ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=1" \
        "$root/build-asan/tests/$binary" --gtest_brief=1
    done
    check address "$root/build-asan" -R '^comm_(mpi_runtime|error_agreement)_'
    ;;
  -h|--help) usage ;;
  *) usage >&2; exit 2 ;;
esac
