#!/usr/bin/env bash
# Resident memory of each rank over a run (bench/README.md, issue 20): samples every
# rank's RSS every SAMPLE_S seconds (default 10) while the day runs at 2 ranks, and
# prints one line per sample -- wall seconds, then each rank's RSS in MiB -- followed by
# the run's progress lines (simulated time against wall, about once a minute) and its
# summary, to place the samples in the simulated day.
#   bench/memory_over_time.sh day        # traffic_day.yaml: the daily cycle
#   bench/memory_over_time.sh day-flat   # traffic_day_flat.yaml: the same at a constant rate
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"
case ${1:-day} in
  day) workload=bench/traffic_day.yaml ;;
  day-flat) workload=bench/traffic_day_flat.yaml ;;
  *)
    echo "usage: bench/memory_over_time.sh day|day-flat" >&2
    exit 2
    ;;
esac
name=memory-${1:-day}
every=${SAMPLE_S:-10}
mpirun -np 2 "$fleetsim" run --cluster "$root/bench/fleet_10k.yaml" --workload "$root/$workload" \
  --no-request-rows --threads 1 --progress always --output "$out/$name.h5" \
  > "$out/$name.log" 2>&1 &
launcher=$!
start=$(date +%s)
echo "wall_s rss_MiB_per_rank..."
while kill -0 "$launcher" 2> /dev/null; do
  sleep "$every"
  # ps fails once the ranks are gone.
  rss=$(ps -C "$(basename "$fleetsim")" -o rss= | awk '{printf " %.0f", $1 / 1024}' || true)
  [[ -n $rss ]] && echo "$(($(date +%s) - start))$rss"
done
wait "$launcher"
grep -E "progress|requests on" "$out/$name.log"
