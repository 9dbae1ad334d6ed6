#!/usr/bin/env bash
# The PCIe study (README.md beside this file): two sweeps on one node of eight RTX PRO 6000s
# (PCIe only) -- Qwen3-32B at TP 1/2/4/8, Qwen3-30B-A3B at every TP x DP (expert parallel)
# that fits the node -- each point's capacity found by max_rate bisection; then one table of
# every point, ranked per model by goodput per GPU at its highest passing rate.
#   runs/pcie_pro6000/study.sh [output folder, default runs/pcie_pro6000/out] [--table-only]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fleetsim=${FLEETSIM:-$root/build/sim/fleetsim}
out=${1:-$here/out}
mkdir -p "$out"

sweeps="qwen32b qwen30b_a3b"
# shellcheck source=SCRIPTDIR/../sweep_study.sh
source "$here/../sweep_study.sh"
# shellcheck disable=SC2086 # the names are words
run_sweeps "${2:-}" $sweeps

# One row per point: model, layout; goodput per GPU at capacity (capacity x SLO attainment
# / GPUs: the requests per second within both SLOs each GPU carries there); its capacity
# (the highest passing rate scale x the workload's 10 req/s); the sweep's own
# goodput_per_gpu of that run (good requests over first arrival to last finish, so it also
# counts the drain after the 60 s window); TTFT and TPOT p99 of that run.
rows=$out/rows.txt
: > "$rows"
for name in $sweeps; do
  point_layouts "$name"
  awk -F, -v model="$name" -v layouts="$out/$name.layouts" '
    BEGIN { while ((getline line < layouts) > 0) { split(line, f, "\t"); layout[f[1]] = f[2] } }
    NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
    { l = layout[$col["point"]]; if ($col["dp"] > 1) l = l " (EP " $col["tp"] * $col["dp"] ")"
      capacity = $col["max_rate_scale"] * 10
      printf "%s\t%s\t%.3f\t%.1f\t%.3f\t%.3f\t%.3f\n", model, l,
        capacity * $col["slo_attainment"] / $col["gpus"], capacity, $col["goodput_per_gpu"],
        $col["ttft_p99_s"], $col["tpot_p99_s"] }
  ' "$out/$name/sweep.csv" >> "$rows"
done
echo "| model | layout | goodput/GPU at capacity | capacity (req/s) | sweep goodput/GPU | TTFT p99 (s) | TPOT p99 (s) |"
echo "|---|---|---|---|---|---|---|"
sort -t$'\t' -k1,1r -k3,3gr "$rows" |
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }'
