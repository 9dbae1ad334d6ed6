#!/usr/bin/env bash
# The sweep studies' command line (runs/sweep_study.sh): an unknown option, or --table-only
# with no earlier run to tabulate, is one line on stderr, nothing on stdout, exit 2, and no
# sweep is run.
#   tests/runs/study_options.sh SOURCE_DIR SCRATCH_DIR   (FLEETSIM: the binary)
set -uo pipefail
src=$1 scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
fail=0
expect_refusal() {  # study, args..., then the text the error must hold
  local study=$1 want=${*: -1} args=("${@:2:$#-2}")
  local out=$scratch/out err=$scratch/err rc
  bash "$src/runs/$study/study.sh" "${args[@]}" > "$out" 2> "$err"
  rc=$?
  if [[ $rc != 2 || -s $out || $(wc -l < "$err") != 1 ]] || ! grep -q -- "$want" "$err"; then
    echo "FAIL: $study ${args[*]}: exit $rc, stdout $(wc -c < "$out") bytes, stderr:" >&2
    cat "$err" >&2
    fail=1
  fi
}
for study in pcie_pro6000 pd_study; do
  expect_refusal "$study" "$scratch/$study" --tabel-only "unknown option '--tabel-only'"
  expect_refusal "$study" "$scratch/$study" --table-only "no earlier run in $scratch/$study/"
  if compgen -G "$scratch/$study/*/sweep.csv" > /dev/null; then
    echo "FAIL: $study ran a sweep although refused" >&2
    fail=1
  fi
done
exit $fail
