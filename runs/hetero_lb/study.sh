#!/usr/bin/env bash
# The heterogeneous load-balancing study: the mixed H100 + A100 fleet of cluster.yaml at
# about 80 % of its capacity, routed by round robin, least outstanding, power of two and
# their capacity-weighted forms. Prints a Markdown table (fleet P50/P99 TTFT, P99 E2E,
# SLO attainment, and the share of requests the H100s served).
#   runs/hetero_lb/study.sh [load fraction, default 0.8]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fleetsim=${FLEETSIM:-$root/build/sim/fleetsim}
load=${1:-0.8}
out=$here/out
mkdir -p "$out"

config() {  # policy, weighted -> a config file
  local file=$out/cluster-$1-$2.yaml
  sed -e "s/^  policy: .*/  policy: $1/" -e "s/^  capacity_weighted: .*/  capacity_weighted: $2/" \
    "$here/cluster.yaml" > "$file"
  echo "$file"
}

field() {  # csv file, row (group), column name
  awk -F, -v row="$2" -v col="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
    $1 == row { print $c }' "$1"
}

# Capacity: the fleet's served rate under a steady overload (3x what it can take), with
# capacity-weighted least-outstanding routing so that no GPU type idles while the other
# queues.
"$fleetsim" run --quiet --cluster "$(config least_outstanding true)" --workload "$here/traffic.yaml" \
  --rate-scale 1500 --num-reqs 12000 --no-request-rows --output "$out/capacity.h5"
"$fleetsim" export --csv "$out/capacity.h5" > /dev/null
capacity=$(field "$out/capacity.summary.csv" fleet throughput_rps)
rate=$(awk -v c="$capacity" -v l="$load" 'BEGIN { printf "%.1f", c * l }')
echo "capacity: $capacity requests/s; offered load: $rate requests/s ($load of capacity)"
echo
echo "| routing | TTFT p50 (s) | TTFT p99 (s) | E2E p99 (s) | SLO attainment | H100 share |"
echo "|---|---|---|---|---|---|"
round_robin_p99=""
weighted_p99=()
for spec in round_robin:false least_outstanding:false power_of_two:false \
            round_robin:true least_outstanding:true power_of_two:true; do
  policy=${spec%%:*} weighted=${spec##*:}
  name=$policy$([[ $weighted == true ]] && echo " (capacity-weighted)" || true)
  "$fleetsim" run --quiet --seed 1 --cluster "$(config "$policy" "$weighted")" \
    --workload "$here/traffic.yaml" --rate-scale "$rate" --output "$out/$policy-$weighted.h5"
  "$fleetsim" export --csv "$out/$policy-$weighted.h5" > /dev/null
  s=$out/$policy-$weighted.summary.csv
  h100=$(field "$s" llama8b-h100 requests)
  all=$(field "$s" fleet requests)
  p99=$(field "$s" fleet ttft_p99_s)
  [[ $spec == round_robin:false ]] && round_robin_p99=$p99
  [[ $weighted == true ]] && weighted_p99+=("$name:$p99")
  printf "| %s | %.3f | %.3f | %.2f | %.1f %% | %.1f %% |\n" "$name" \
    "$(field "$s" fleet ttft_p50_s)" "$(field "$s" fleet ttft_p99_s)" "$(field "$s" fleet e2e_p99_s)" \
    "$(awk -v a="$(field "$s" fleet slo_attainment)" 'BEGIN { print 100 * a }')" \
    "$(awk -v h="$h100" -v a="$all" 'BEGIN { print 100 * h / a }')"
done

# The expected result: every capacity-aware policy beats round robin on P99 TTFT.
echo
for entry in "${weighted_p99[@]}"; do
  name=${entry%%:*} p99=${entry##*:}
  if awk -v w="$p99" -v r="$round_robin_p99" 'BEGIN { exit !(w < r) }'; then
    echo "ok: $name P99 TTFT $p99 s < round robin $round_robin_p99 s"
  else
    echo "FAILED: $name P99 TTFT $p99 s is not below round robin's $round_robin_p99 s"
    exit 1
  fi
done
