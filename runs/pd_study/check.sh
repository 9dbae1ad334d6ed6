#!/usr/bin/env bash
# The P/D study's shape, held by ctest (study_pd_split): for the 70B on long prompts, a
# prefill-heavy split (3:1) takes more traffic within the SLOs than colocated serving, and a
# decode-heavy one (1:3) less -- the study's claim that the split must follow the workload's
# prefill share. Runs check.yaml (a reduced sweep) and exits non-zero otherwise.
#   runs/pd_study/check.sh [output folder]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fleetsim=${FLEETSIM:-$root/build/sim/fleetsim}
out=${1:-$here/out/check}
"$fleetsim" sweep "$here/check.yaml" --output-dir "$out" --quiet
# Points (fixed order): 0 colocated, 1 disaggregated 1:3, 2 disaggregated 3:1.
"$fleetsim" sweep "$here/check.yaml" --list | grep -q '^point 2: .*pd_split=3:1' ||
  { echo "FAILED: check.yaml's points are not colocated, 1:3, 3:1"; exit 1; }
rate() { awk -F, -v p="$1" 'NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
  $col["point"] == p { print $col["max_rate_scale"] }' "$out/sweep.csv"; }
colocated=$(rate 0) decode_heavy=$(rate 1) prefill_heavy=$(rate 2)
echo "capacity (rate scale): colocated $colocated, 1:3 $decode_heavy, 3:1 $prefill_heavy"
awk -v c="$colocated" -v d="$decode_heavy" -v p="$prefill_heavy" 'BEGIN { exit !(p > c && c > d) }' ||
  { echo "FAILED: expected 3:1 > colocated > 1:3"; exit 1; }
echo "ok: 3:1 > colocated > 1:3"
