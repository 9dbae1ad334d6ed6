#!/usr/bin/env bash
# Bad input under mpirun: a malformed trace line that the ranks meet in different windows,
# a bad cluster config, and a generator of independent requests (which every rank reads)
# whose --rate-scale puts an arrival past the largest simulated time. Each gives one error
# line naming file, line and field (or the option), exit 2, no hang (the test's timeout),
# and no output file. The generator's error is the one one reader meets, at every rank
# count: a rank with no gateway of its own (3 ranks, 2 gateways) reads no further ahead
# than the others, so with the arrivals 5e8 s apart the time series' limit is met first.
# The same at 2 and 3 threads a process, each thread a rank.
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
# Ten seconds apart; at --rate-scale 2e-8 that is 5e8 s, at 5e-9 2e9 s.
cat > "$work/slow.yaml" <<'YAML'
generator:
  seed: 1
  num_requests: 40
  arrivals: {process: constant, rate_per_s: 0.1}
  input_tokens: {distribution: fixed, value: 100}
  output_tokens: {distribution: fixed, value: 10}
YAML

check() {  # ranks, expected message, fleetsim arguments...
  local ranks=$1 expected=$2
  shift 2
  "$mpiexec" -np "$ranks" --oversubscribe "$fleetsim" run --output "$work/out.h5" "$@" \
    > "$work/stdout" 2> "$work/stderr"
  local rc=$?
  local lines
  # The warning that threads outnumber a process's processors (mpirun binds each of two
  # or fewer ranks to one core) is not an error line.
  lines=$(grep "^fleetsim: " "$work/stderr" | grep -vc "^fleetsim: warning: --threads")
  if [[ $rc != 2 || $lines != 1 ]] || ! grep -qF -- "$expected" "$work/stderr"; then
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
for ranks in 1 2 3; do
  check "$ranks" "--rate-scale: puts an arrival at 2e+09 s" --workload "$work/slow.yaml" \
    --rate-scale 0.000000005
  check "$ranks" "timeseries.interval_s: the run reaches 500000000.05 s" \
    --workload "$work/slow.yaml" --rate-scale 0.00000002
done
# Threads are ranks too (comm/communicator.h): the same one line, whichever thread of
# which process meets the error (the generator's is met by the threads that read).
for spec in 1:2 2:2 1:3; do
  ranks=${spec%%:*} threads=${spec##*:}
  check "$ranks" "bad.jsonl:251: input_tokens" --workload "$work/bad.jsonl" --threads "$threads"
  check "$ranks" "--rate-scale: puts an arrival at 2e+09 s" --workload "$work/slow.yaml" \
    --rate-scale 0.000000005 --threads "$threads"
  check "$ranks" "timeseries.interval_s: the run reaches 500000000.05 s" \
    --workload "$work/slow.yaml" --rate-scale 0.00000002 --threads "$threads"
done
