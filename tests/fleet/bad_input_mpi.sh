#!/usr/bin/env bash
# Bad input under mpirun: a malformed trace line that the ranks meet in different windows,
# and a bad cluster config. Each gives one error line naming file, line and field, exit 2,
# no hang (the test's timeout), and no output file.
#   bad_input_mpi.sh <fleetsim> <mpiexec>
set -uo pipefail
fleetsim=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 0 299); do
  if [[ $i == 250 ]]; then
    echo '{"arrival_s": 2.5, "input_tokens": "many", "output_tokens": 2}'
  else
    echo "{\"arrival_s\": $((i / 100)).$((i % 100 / 10))$((i % 10)), \"input_tokens\": $((100 + i)), \"output_tokens\": 10}"
  fi
done > "$work/bad.jsonl"
printf 'instance_groups:\n  - {name: g, model: llama-3.1-8b, hardware: H100-SXM, tp: 3}\n' > "$work/bad.yaml"

check() {  # ranks, expected message, fleetsim arguments...
  local ranks=$1 expected=$2
  shift 2
  "$mpiexec" -np "$ranks" --oversubscribe "$fleetsim" run --output "$work/out.h5" "$@" \
    > "$work/stdout" 2> "$work/stderr"
  local rc=$?
  local lines
  lines=$(grep -c "^fleetsim: " "$work/stderr")
  if [[ $rc != 2 || $lines != 1 ]] || ! grep -q "$expected" "$work/stderr"; then
    echo "np $ranks $*: exit $rc, $lines fleetsim line(s), expected exit 2 and one line with '$expected':"
    cat "$work/stderr"
    exit 1
  fi
  if ls "$work"/out.h5* > /dev/null 2>&1; then
    echo "np $ranks $*: an output file was left behind"
    exit 1
  fi
  echo "np $ranks: $(grep "^fleetsim: " "$work/stderr")"
}

for ranks in 1 2 3; do
  check "$ranks" "bad.jsonl:251: input_tokens" --workload "$work/bad.jsonl"
done
check 2 "bad.yaml:2: instance_groups.g.tensor_parallel_size" --cluster "$work/bad.yaml"
