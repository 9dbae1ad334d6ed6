#!/usr/bin/env bash
# The 1M-request case (fleet_1024 x traffic_1m) at one and two MPI ranks, and at --threads
# 1 and 2 in one process, alternated in one uninterrupted run (wall times on a shared VM
# move by a third between runs; alternating puts both sides under the same conditions).
#   [FLEETSIM=bin] bench/ranks.sh ranks|threads [ROUNDS]
# Prints a row per run (wall seconds, requests per wall second, peak RSS of the largest
# process) and each round's ratio of the one-rank (one-thread) wall time to the other's.
# Both sides of `ranks` start through mpirun, so both pay its start.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"
mode=${1:-}
[[ $mode == ranks || $mode == threads ]] ||
  { echo "usage: [FLEETSIM=bin] bench/ranks.sh ranks|threads [rounds]" >&2; exit 2; }
rounds=${2:-3}
requests=$(awk '/num_requests:/ {print $2}' "$root/bench/traffic_1m.yaml")

run() {  # n (ranks or threads): prints the wall seconds
  local n=$1
  local cmd=("$fleetsim" run --cluster "$root/bench/fleet_1024.yaml"
             --workload "$root/bench/traffic_1m.yaml" --no-request-rows --quiet
             --output "$out/ranks-$mode-$n.h5")
  if [[ $mode == ranks ]]; then
    cmd=(mpirun -np "$n" "${cmd[@]}" --threads 1)
  else
    cmd=("${cmd[@]}" --threads "$n")
  fi
  /usr/bin/time -f "%e %M" -o "$out/ranks.time" "${cmd[@]}"
  local wall rss
  read -r wall rss < "$out/ranks.time"
  awk -v m="$mode" -v n="$n" -v r="$round" -v w="$wall" -v q="$requests" -v k="$rss" \
    'BEGIN { printf "| %s %d | %d | %.2f | %.0f | %.0f |\n", m, n, r, w, q / w, k / 1024 }' >&2
  echo "$wall"
}

echo "| side | round | wall (s) | requests/s | peak RSS (MiB) |" >&2
echo "|---|---|---|---|---|" >&2
ratios=()
for ((round = 1; round <= rounds; ++round)); do
  one=$(run 1)
  two=$(run 2)
  ratios+=("$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", a / b }')")
done
echo "$mode 1 -> 2, per round: ${ratios[*]}"
