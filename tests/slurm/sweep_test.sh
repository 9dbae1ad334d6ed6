#!/usr/bin/env bash
# slurm/submit sweep on a real one-node Slurm: a throttled job array runs one point per
# task, the collect job runs after it (afterok), and its sweep.csv equals the one a direct
# `fleetsim sweep` of the same spec writes.
#   sweep_test.sh <fleetsim> <source dir> [spec]   (default runs/examples/sweep_small.yaml)
# Exit 77 (skip) where Slurm cannot start here, except under CI=true (then 1).
set -euo pipefail
fleetsim=$(realpath "$1") source=$(realpath "$2")
spec=$(realpath "${3:-$source/runs/examples/sweep_small.yaml}")
harness=$source/tests/slurm/slurm_cluster.sh
"$harness" check || exit $?
# Every wait takes what is left of 150 s, so a stuck Slurm fails the test within about
# 150 s plus the cleanup's 30 s, far inside ctest's TIMEOUT (which could not clean up).
budget=${FLEETSIM_SLURM_BUDGET_S:-150}  # seconds for everything; a bigger study may ask for more
left() { local n=$((budget - SECONDS)); echo $((n > 1 ? n : 1)); }

work=$(mktemp -d /tmp/fleetsim-slurm-sweep.XXXXXX)
chmod 755 "$work"
direct_pid=""
cleanup() {
  local rc=$?
  [[ -z "$direct_pid" ]] || kill "$direct_pid" 2>/dev/null || true
  if [[ $rc -ne 0 ]]; then
    "$harness" logs "$work/cluster" || true
    for f in "$work"/slurm/logs/*.out "$work"/direct.log; do
      [[ -f "$f" ]] && { echo "---- $f"; tail -n 30 "$f"; }
    done
  fi
  "$harness" stop "$work/cluster" || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

points=$(timeout 60 "$fleetsim" sweep "$spec" --list | sed -n '1s/^points: *//p')
[[ "$points" =~ ^[1-9][0-9]*$ ]] || { echo "'fleetsim sweep --list' gave no 'points: N'"; exit 1; }

"$harness" start "$work/cluster"
export SLURM_CONF=$work/cluster/slurm.conf
export FLEETSIM=$fleetsim
cd "$work"  # submit works from any folder

started=$SECONDS
timeout 60 "$source/slurm/submit" sweep "$spec" --max-parallel 2 --output-dir slurm > submit.out
cat submit.out
array=$(sed -n 's/^array job: \([0-9]*\) .*/\1/p' submit.out)
collect=$(sed -n 's/^collect job: \([0-9]*\) .*/\1/p' submit.out)
[[ -n "$array" && -n "$collect" ]] || { echo "submit printed no array and collect job ids"; exit 1; }
info=$(timeout 10 scontrol -o show job "$array")
grep -q "ArrayTaskThrottle=2" <<<"$info" || { echo "the array is not throttled to 2: $info"; exit 1; }
# (null) once the array has already succeeded; the order is checked again at the end.
dependency=$(timeout 10 scontrol -o show job "$collect" | grep -o 'Dependency=[^ ]*' || true)
[[ "$dependency" == "Dependency=afterok:${array}_*"* || "$dependency" == "Dependency=(null)" ]] ||
  { echo "the collect job does not wait for the array (afterok): $dependency"; exit 1; }

# The same spec, directly, while Slurm works (it leaves gaps between tasks).
timeout "$(left)" "$fleetsim" sweep "$spec" --output-dir "$work/direct" --quiet > direct.log 2>&1 &
direct_pid=$!

"$harness" wait "$collect" "$(left)"
"$harness" wait "$array" 5
tasks=$(timeout 10 scontrol -o show job "$array")
done_tasks=$(grep -c 'JobState=COMPLETED' <<<"$tasks")
[[ $done_tasks -eq $points ]] || { echo "$done_tasks array tasks completed, expected $points"; exit 1; }
last_end=$(grep -o 'EndTime=[^ ]*' <<<"$tasks" | cut -d= -f2 | sort | tail -1)
collect_start=$(timeout 10 scontrol -o show job "$collect" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
[[ ! "$collect_start" < "$last_end" ]] ||
  { echo "the collect job started at $collect_start, before the last point ended ($last_end)"; exit 1; }
echo "Slurm: $points points and the collect job in $((SECONDS - started)) s"
for ((k = 0; k < points; ++k)); do
  for ext in yaml h5; do
    [[ -s "slurm/points/point-$k.$ext" ]] || { echo "array task $k wrote no points/point-$k.$ext"; exit 1; }
  done
done
[[ -s slurm/sweep.h5 ]] || { echo "the collect job wrote no sweep.h5"; exit 1; }
rows=$(($(wc -l < slurm/sweep.csv) - 1))
[[ $rows -eq $points ]] || { echo "sweep.csv has $rows rows, expected $points"; exit 1; }

wait "$direct_pid" || { echo "the direct fleetsim sweep failed"; direct_pid=""; exit 1; }
direct_pid=""
if ! cmp -s slurm/sweep.csv direct/sweep.csv; then
  echo "sweep.csv from Slurm differs from the direct fleetsim sweep:"
  diff slurm/sweep.csv direct/sweep.csv | head -10
  exit 1
fi
echo "sweep.csv ($rows points) identical to the direct sweep's; $((SECONDS - started)) s in all"
echo "slurm sweep test: passed"
