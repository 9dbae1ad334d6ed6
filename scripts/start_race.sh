#!/usr/bin/env bash
# Starts many fleetsim runs at once on this machine, as a sweep's points or a user's
# scripts may, and counts those that failed (docs/DESIGN.md, Rules: singletons' session
# directories). Each run is a 20-request singleton (no mpirun) writing its own file; they
# start in waves of WAVE (default 12) a few hundredths of a second apart.
#   scripts/start_race.sh              # 480 runs of build/sim/fleetsim
#   scripts/start_race.sh 120 BINARY
# Prints "N of M runs failed" and the first failure's output; exits 1 if any failed. Takes
# about 50 s for 480 runs on the 2-core machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-480}
fleetsim=${2:-$root/build/sim/fleetsim}
wave=${WAVE:-12}
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$runs"); do
  ("$fleetsim" run --num-reqs 20 --quiet --output "$work/run-$i.h5" > "$work/log-$i" 2>&1 ||
    echo "$i" >> "$work/failed") &
  sleep "0.0$((RANDOM % 9))"
  if ((i % wave == 0)); then wait; fi
done
wait
failed=0
[[ -f $work/failed ]] && failed=$(wc -l < "$work/failed")
echo "$failed of $runs runs failed"
if ((failed > 0)); then
  head -20 "$work/log-$(head -1 "$work/failed")"
  exit 1
fi
