#!/usr/bin/env bash
# scripts/gemm_stream_rate.py on the measured RTX 4090 bundle (../shared, third-party
# data): one row per GEMM, and the gate_up_proj cell at 1 token equal to the bytes over
# the time read straight from the table; a model card that is not there exits 2.
#   gemm_stream_rate.sh <source dir>
set -euo pipefail
source=$1
tp1=$source/../shared/data/profiles/llmservingsim/perf/RTX4090/meta-llama/Llama-3.1-8B/bf16/tp1
if [[ ! -f $tp1/dense.csv ]]; then
  echo "skipped: ../shared/data is absent (the measured RTX 4090 bundle)"
  [[ ${CI:-} == true ]] && exit 1
  exit 77
fi
script=$source/scripts/gemm_stream_rate.py
out=$(python3 "$script" "$tp1" llama-3.1-8b RTX-4090)
echo "$out"
for kernel in qkv_proj o_proj gate_up_proj down_proj; do
  [[ $(grep -c "^$kernel " <<<"$out") == 1 ]] || { echo "FAIL: no single row for $kernel"; exit 1; }
done
# Llama-3.1-8B's gate_up_proj: k = 4096, n = 2 x 14336; the RTX 4090's 1008 GB/s.
expected=$(awk -F, '$1 == "gate_up_proj" && $2 == 1 {
  printf "%.2f", (4096 + 4096 * 28672 + 28672) * 2 / ($3 * 1e-6) / 1008e9 }' "$tp1/dense.csv")
got=$(awk '$1 == "gate_up_proj" { print $4 }' <<<"$out")
[[ -n $expected && $got == "$expected" ]] || { echo "FAIL: gate_up_proj m=1 $got, table gives $expected"; exit 1; }
set +e
err=$(python3 "$script" "$tp1" no-such-model RTX-4090 2>&1 >/dev/null)
rc=$?
set -e
[[ $rc == 2 && $err == *"models/no-such-model/config.json"* ]] ||
  { echo "FAIL: a missing model card gave exit $rc: $err"; exit 1; }
echo "gemm_stream_rate: ok"
