#!/usr/bin/env bash
# A refactor's guard: runs one fleetsim binary over a fixed set of cases and prints one
# sha256 line per output table -- the determinism matrix (the default fleet under all
# twelve routing forms, as tests/fleet/determinism.sh runs it), the hybrid and RTX 4090
# single instances with /steps, the example sweep, the load-balancing study's table,
# `inspect --json` of every model card, analytic bundles of every model on every catalog
# GPU, kernel-db bundles, and `validate vllm-bench` of the shared runs. Two binaries that
# print the same lines produce the same tables. The analytic cache is private to each run
# of this script, so no case reads a bundle another binary built.
#   scripts/table_digest.sh [--long] FLEETSIM > digest.txt     (--long adds the 27B sweep)
#   diff <(scripts/table_digest.sh old/fleetsim) <(scripts/table_digest.sh build/sim/fleetsim)
set -euo pipefail
long=false
if [[ ${1:-} == --long ]]; then long=true; shift; fi
fleetsim=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
data=$root/../shared/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FLEETSIM_CACHE=$work/cache

digest() {  # label, files...: one line per file, named by the label and the file's name
  local label=$1 f
  shift
  for f in "$@"; do echo "$(sha256sum < "$f" | cut -c1-16)  $label/$(basename "$f")"; done
}

run_case() {  # label, run arguments...: a run, its CSV export
  local label=$1
  shift
  "$fleetsim" run --quiet --output "$work/$label.h5" "$@"
  "$fleetsim" export --csv "$work/$label.h5" > /dev/null
  digest "$label" "$work/$label".*.csv
}

for policy in round_robin random least_outstanding least_kv power_of_two prefix_affinity; do
  for weighted in false true; do
    sed -e "s/^  policy: .*/  policy: $policy/" -e "s/^  capacity_weighted: .*/  capacity_weighted: $weighted/" \
      "$root/cluster_configs/default_fleet.yaml" > "$work/fleet-$policy-$weighted.yaml"
    run_case "fleet-$policy-$weighted" --seed 5 --cluster "$work/fleet-$policy-$weighted.yaml" \
      --workload "$root/tests/fleet/determinism_traffic.yaml"
  done
done
run_case hybrid --trace-steps --cluster "$root/cluster_configs/single_node_hybrid_instance.yaml" \
  --workload "$root/runs/examples/shared_prefix_sessions.jsonl"
run_case hybrid-horizon --horizon 30 --cluster "$root/cluster_configs/single_node_hybrid_instance.yaml" \
  --workload "$root/runs/examples/shared_prefix_sessions.jsonl"

"$fleetsim" sweep --quiet --output-dir "$work/sweep_small" "$root/runs/examples/sweep_small.yaml"
digest sweep_small "$work/sweep_small/sweep.csv"
if $long; then
  "$fleetsim" sweep --quiet --output-dir "$work/hybrid27b" "$root/runs/hybrid27b_h200/study.yaml"
  digest hybrid27b_h200 "$work/hybrid27b/sweep.csv"
  run_case bench-1024 --no-request-rows --num-reqs 200000 --cluster "$root/bench/fleet_1024.yaml" \
    --workload "$root/bench/traffic_1m.yaml"
fi

for card in "$root"/models/*/config.json; do
  model=$(basename "$(dirname "$card")")
  for hw in H200-SXM RTX-PRO-6000; do
    if "$fleetsim" inspect --json --model "$model" --hardware "$hw" > "$work/inspect-$model-$hw.json" 2>&1; then
      digest inspect "$work/inspect-$model-$hw.json"
    else
      digest inspect-refused "$work/inspect-$model-$hw.json"
    fi
  done
  for hw_file in "$root"/cluster_configs/hardware/*.yaml; do
    hw=$(basename "$hw_file" .yaml)
    out=$work/bundle-$model-$hw
    if "$fleetsim" bundle build --model "$model" --hardware "$hw" --out "$out" > /dev/null 2> "$out.err"; then
      (cd "$out" && find . -type f | sort | while read -r f; do
        echo "$(sha256sum < "$f" | cut -c1-16)  bundle-$model-$hw/${f#./}"; done)
    else
      digest bundle-refused "$out.err"
    fi
  done
done

if [[ -d $data ]]; then
  for hw in H100-SXM H200-SXM A100-SXM-80GB; do
    for model in llama-3.1-8b qwen3.8-27b qwen3-30b-a3b; do
      out=$work/kdb-$model-$hw
      if "$fleetsim" bundle build --source kernel-db --model "$model" --hardware "$hw" --out "$out" \
        > /dev/null 2> "$out.err"; then
        (cd "$out" && find . -type f | sort | while read -r f; do
          echo "$(sha256sum < "$f" | cut -c1-16)  kdb-$model-$hw/${f#./}"; done)
      else
        digest kdb-refused "$out.err"
      fi
    done
  done
  bench=$data/traces/llmservingsim_vllm_bench perf=$data/profiles/llmservingsim/perf
  "$fleetsim" validate vllm-bench "$bench/RTX4090/Llama-3.1-8B" --model llama-3.1-8b \
    --bundle "$perf/RTX4090/meta-llama/Llama-3.1-8B/bf16" > "$work/validate-4090.txt"
  "$fleetsim" validate vllm-bench "$bench/RTXPRO6000/Llama-3.1-8B" --model llama-3.1-8b \
    --bundle "$perf/RTXPRO6000/meta-llama/Llama-3.1-8B/bf16" --hardware RTX-PRO-6000 \
    > "$work/validate-pro6000.txt"
  digest validate "$work"/validate-*.txt
  run_case rtx4090 --trace-steps --cluster "$root/cluster_configs/single_node_single_instance.yaml" \
    --workload "$bench/RTX4090/Llama-3.1-8B/requests.jsonl"
fi

FLEETSIM=$fleetsim bash "$root/runs/hetero_lb/study.sh" > "$work/hetero_lb.md"
digest study "$work/hetero_lb.md"
