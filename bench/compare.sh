#!/usr/bin/env bash
# Alternates two fleetsim binaries on one benchmark case in one uninterrupted run, for the
# before/after ratios of bench/RESULTS.md (wall times on a shared VM move by a third
# between runs; alternating puts both binaries under the same conditions).
#   BASE=/old/build/sim/fleetsim [BASE_HOME=/old/checkout] bench/compare.sh CASE [ROUNDS]
# CASE: vidur (fleet_vidur_like), 1m (fleet_1024 x traffic_1m), hybrid (fleet_hybrid_64),
# moe-dp (fleet_moe_dp x traffic_moe_300k: every step a DP x EP lock-step).
# BASE_HOME is the base binary's FLEETSIM_HOME (its own model and hardware catalog: a
# binary may refuse a newer checkout's cards). One process, --threads 1,
# --no-request-rows; prints a row per run: user and wall seconds, requests per wall
# second, peak RSS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
new=${FLEETSIM:-$root/build/sim/fleetsim}
base=${BASE:?set BASE to the binary to compare against}
out=${BENCH_OUT:-$root/bench/out}
mkdir -p "$out"
case ${1:-} in
  vidur) cluster=bench/fleet_vidur_like.yaml workload=bench/traffic_vidur_like.yaml ;;
  1m) cluster=bench/fleet_1024.yaml workload=bench/traffic_1m.yaml ;;
  hybrid) cluster=bench/fleet_hybrid_64.yaml workload=bench/traffic_hybrid_sessions.yaml ;;
  moe-dp) cluster=bench/fleet_moe_dp.yaml workload=bench/traffic_moe_300k.yaml ;;
  *)
    echo "usage: BASE=bin [BASE_HOME=dir] bench/compare.sh vidur|1m|hybrid|moe-dp [rounds]" >&2
    exit 2
    ;;
esac
rounds=${2:-2}

run() {  # label, binary, FLEETSIM_HOME ("" for the default)
  local label=$1 bin=$2 home=$3
  local env=()
  [[ -z $home ]] || env=(env "FLEETSIM_HOME=$home")
  "${env[@]}" /usr/bin/time -f "%U %e %M" -o "$out/compare.time" "$bin" run \
    --cluster "$root/$cluster" --workload "$root/$workload" --no-request-rows --threads 1 \
    --quiet --output "$out/compare-$label.h5"
  local user wall rss requests
  read -r user wall rss < "$out/compare.time"
  requests=$(awk '/num_requests:/ {print $2}' "$root/$workload")
  awk -v c="$1" -v r="$round" -v u="$user" -v w="$wall" -v n="$requests" -v m="$rss" \
    'BEGIN { printf "| %s | %d | %.2f | %.2f | %.0f | %.0f |\n", c, r, u, w, n / w, m / 1024 }'
}

echo "| binary | round | user (s) | wall (s) | requests/s | peak RSS (MiB) |"
echo "|---|---|---|---|---|---|"
for ((round = 1; round <= rounds; ++round)); do
  run base "$base" "${BASE_HOME:-}"
  run new "$new" ""
done
