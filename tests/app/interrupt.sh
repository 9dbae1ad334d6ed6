#!/usr/bin/env bash
# SIGTERM and SIGINT during a long `fleetsim run`, in one process and under mpirun at 2
# ranks: one "fleetsim: interrupted" line, exit 143 / 130 (128 + the signal) from fleetsim
# itself -- mpirun reports its own non-zero code --, and neither the .tmp nor a final file
# left. Under mpirun with its default odls_base_sigkill_timeout (1 s), which on a loaded
# machine SIGKILLs the ranks before their next window boundary: the line and the file's
# removal come from the signal handler, at once.
#   interrupt.sh <fleetsim> <mpiexec> <project root>
set -uo pipefail
fleetsim=$1 mpiexec=$2 root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/^  num_requests: 1000000$/  num_requests: 50000000/' "$root/bench/traffic_1m.yaml" \
  > "$work/traffic.yaml"
grep -q 'num_requests: 50000000' "$work/traffic.yaml" ||
  { echo "bench/traffic_1m.yaml changed: no 'num_requests: 1000000' line to raise"; exit 1; }

# The pid of rank 1 among mpirun's children.
rank1_of() {
  local child
  for child in $(pgrep -P "$1"); do
    tr '\0' '\n' < "/proc/$child/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' &&
      { echo "$child"; return; }
  done
}

check() {  # ranks, signal, expected exit code ('' for any non-zero)[, stop]
  # stop: SIGSTOP rank 1 between mpirun's SIGCONT and its SIGTERM, so that rank 0 waits
  # for it at the next window boundary until mpirun's SIGKILL: only the signal handler
  # can then print the line and remove the file.
  local ranks=$1 signal=$2 expected=$3 stop=${4:-} launch=() pid rc lines rank1=""
  # mpirun (Open MPI 4) passes SIGINT and SIGTERM on as SIGCONT, then SIGTERM 1 s later,
  # then SIGKILL 1 s after that (odls_base_sigkill_timeout; blocking sleeps in
  # orte/mca/odls/base/odls_base_default_fns.c); the defaults are kept on purpose.
  [[ $ranks != 1 ]] && launch=("$mpiexec" -np "$ranks" --oversubscribe)
  rm -f "$work"/out.h5*
  # Fifty million requests: far more than the seconds before the signal can simulate (a
  # million took 2 s at 2 ranks on an idle 2-core machine, finishing before mpirun passed
  # the SIGTERM on).
  "${launch[@]}" "$fleetsim" run --quiet --output "$work/out.h5" --no-request-rows \
    --cluster "$root/bench/fleet_1024.yaml" --workload "$work/traffic.yaml" \
    > "$work/stdout" 2> "$work/stderr" &
  pid=$!
  # Signal once the run is simulating: its output file is open.
  for _ in $(seq 1 600); do
    [[ -e $work/out.h5.tmp ]] && break
    sleep 0.1
  done
  [[ -e $work/out.h5.tmp ]] || { echo "np $ranks: the run never opened its file"; kill -KILL $pid; exit 1; }
  sleep 1
  [[ -n $stop ]] && rank1=$(rank1_of $pid)
  kill -"$signal" $pid
  if [[ -n $rank1 ]]; then
    sleep 0.5
    kill -STOP "$rank1"
  fi
  wait $pid
  rc=$?
  lines=$(grep -c "^fleetsim: " "$work/stderr")
  if [[ $lines != 1 ]] || ! grep -q "^fleetsim: interrupted (SIG" "$work/stderr"; then
    echo "np $ranks SIG$signal${rank1:+ (rank 1 stopped)}: $lines fleetsim line(s), expected one 'fleetsim: interrupted':"
    cat "$work/stderr"
    exit 1
  fi
  if [[ -n $expected && $rc != "$expected" ]] || [[ $rc == 0 ]]; then
    echo "np $ranks SIG$signal: exit $rc, expected ${expected:-non-zero}"
    exit 1
  fi
  if ls "$work"/out.h5* > /dev/null 2>&1; then
    echo "np $ranks SIG$signal: left $(ls "$work")"
    exit 1
  fi
  echo "np $ranks SIG$signal${rank1:+ (rank 1 stopped)}: exit $rc, $(grep "^fleetsim: " "$work/stderr")"
}

check 1 TERM 143
check 1 INT 130
check 2 TERM ''
check 2 INT ''
check 2 TERM '' stop
