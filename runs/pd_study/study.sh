#!/usr/bin/env bash
# The P/D study (README.md beside this file): four sweeps -- Llama-3.1-70B and the 27B
# hybrid on 64 H100 GPUs, P and D across nodes (NIC) and on the same node (NVLink) -- each
# point's capacity found by max_rate bisection; then one table of every point, ranked by
# goodput per GPU at its highest passing rate.
#   runs/pd_study/study.sh [output folder, default runs/pd_study/out] [--table-only]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fleetsim=${FLEETSIM:-$root/build/sim/fleetsim}
out=${1:-$here/out}
mkdir -p "$out"

sweeps="llama70b_cross_node llama70b_same_node qwen27b_cross_node qwen27b_same_node"
# shellcheck source=SCRIPTDIR/../sweep_study.sh
source "$here/../sweep_study.sh"
# shellcheck disable=SC2086 # the names are words
run_sweeps "${2:-}" $sweeps

# One row per point: model, links, layout; its capacity (the highest passing rate scale x
# the workload's 10 req/s); goodput per GPU at capacity (capacity x SLO attainment / GPUs:
# the requests per second within both SLOs that each GPU carries there); the sweep's own
# goodput_per_gpu of that run (good requests over first arrival to last finish, so it also
# counts the drain after the 60 s window); TTFT and TPOT p99 of that run.
rows=$out/rows.txt
: > "$rows"
for name in $sweeps; do
  model=${name%%_*} links=${name#*_}
  point_layouts "$name"
  awk -F, -v model="$model" -v links="${links/_/ }" -v layouts="$out/$name.layouts" '
    BEGIN { while ((getline line < layouts) > 0) { split(line, f, "\t"); layout[f[1]] = f[2] } }
    NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
    { l = layout[$col["point"]]; shown = l ~ /serving=colocated/ ? "-" : links
      sub(/ serving=disaggregated/, "", l); sub(/ serving=colocated/, " colocated", l)
      capacity = $col["max_rate_scale"] * 10
      printf "%s\t%s\t%s\t%.3f\t%.1f\t%.3f\t%.3f\t%.3f\n", model, shown, l,
        capacity * $col["slo_attainment"] / $col["gpus"], capacity, $col["goodput_per_gpu"],
        $col["ttft_p99_s"], $col["tpot_p99_s"] }
  ' "$out/$name/sweep.csv" >> "$rows"
done
echo "| model | P-D links | layout | goodput/GPU at capacity | capacity (req/s) | sweep goodput/GPU | TTFT p99 (s) | TPOT p99 (s) |"
echo "|---|---|---|---|---|---|---|---|"
sort -t$'\t' -k1,1 -k4,4gr -k2,2 "$rows" |
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
