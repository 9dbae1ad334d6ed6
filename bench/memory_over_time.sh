#!/usr/bin/env bash
# Resident memory of each rank against simulated time (bench/README.md, issue 20): runs
# the day at 2 ranks with --progress always (a line every 10 s of wall) and, at each
# progress line, prints the simulated hour it reports, the wall seconds and every rank's
# RSS in MiB; then the run's summary line.
#   bench/memory_over_time.sh day        # traffic_day.yaml: the daily cycle
#   bench/memory_over_time.sh day-flat   # traffic_day_flat.yaml: the same at a constant rate
#   bench/memory_over_time.sh day-peak   # traffic_day_peak.yaml: 3 hours at the day's peak rate
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"
case ${1:-day} in
  day) workload=bench/traffic_day.yaml ;;
  day-flat) workload=bench/traffic_day_flat.yaml ;;
  day-peak) workload=bench/traffic_day_peak.yaml ;;
  *)
    echo "usage: bench/memory_over_time.sh day|day-flat|day-peak" >&2
    exit 2
    ;;
esac
name=memory-${1:-day}
log=$out/$name.log
mpirun -np 2 "$fleetsim" run --cluster "$root/bench/fleet_10k.yaml" --workload "$root/$workload" \
  --no-request-rows --threads 1 --progress always --output "$out/$name.h5" > "$log" 2>&1 &
launcher=$!
start=$(date +%s)
# One sample per progress line (every 10 s of wall): the simulated time it reports, then
# each rank's RSS read as it appears.
echo "simulated_h wall_s rss_MiB_per_rank..."
seen=0
while kill -0 "$launcher" 2> /dev/null; do
  sleep 1
  progress=$(grep "progress: t = " "$log" || true)
  lines=$(grep -c . <<< "$progress" || true)
  ((lines > seen)) || continue
  seen=$lines
  simulated_s=$(tail -1 <<< "$progress" | sed -E 's/.*t = ([0-9.]+) s.*/\1/')
  # ps fails once the ranks are gone.
  rss=$(ps -C "$(basename "$fleetsim")" -o rss= | awk '{printf " %.0f", $1 / 1024}' || true)
  [[ -n $rss ]] && echo "$(awk -v s="$simulated_s" 'BEGIN {printf "%.2f", s / 3600}') $(($(date +%s) - start))$rss"
done
wait "$launcher"
grep -E "requests on" "$log"
