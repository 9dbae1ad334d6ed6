#!/usr/bin/env bash
# The PCIe study's MoE claim, held by ctest (study_pcie_moe_ep): on 8 RTX PRO 6000s, an
# instance of 4 GPUs serving Qwen3-30B-A3B as DP 4 x EP takes more traffic within the SLOs
# than one at TP 4 -- TP's two all-reduces per layer over PCIe and host memory cost more
# than expert parallelism's dispatch and combine in the MoE layers alone. Runs check.yaml
# (a reduced sweep) and exits non-zero otherwise.
#   runs/pcie_pro6000/check.sh [output folder]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fleetsim=${FLEETSIM:-$root/build/sim/fleetsim}
out=${1:-$here/out/check}
"$fleetsim" sweep "$here/check.yaml" --output-dir "$out" --quiet
# Points (fixed order): 0 TP 1, 1 TP 1 x DP 4, 2 TP 4 (TP 4 x DP 4 exceeds the node: skipped).
"$fleetsim" sweep "$here/check.yaml" --list |
  awk '/^point 1: tp=1 dp=4 / { a = 1 } /^point 2: tp=4 dp=1 / { b = 1 } END { exit !(a && b) }' ||
  { echo "FAILED: check.yaml's points 1 and 2 are not DP 4 x EP and TP 4"; exit 1; }
rate() { awk -F, -v p="$1" 'NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
  $col["point"] == p { print $col["max_rate_scale"] }' "$out/sweep.csv"; }
ep=$(rate 1) tp=$(rate 2)
echo "capacity (rate scale): DP 4 x EP $ep, TP 4 $tp"
awk -v e="$ep" -v t="$tp" 'BEGIN { exit !(e > t && t > 0) }' ||
  { echo "FAILED: expected DP 4 x EP above TP 4 (and TP 4 above zero)"; exit 1; }
echo "ok: DP 4 x EP > TP 4"
