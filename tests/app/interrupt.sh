#!/usr/bin/env bash
# SIGTERM and SIGINT during a long `fleetsim run` in one process: one "fleetsim: interrupted" line, exit 143 /
# 130 (128 + the signal) from fleetsim itself -- mpirun reports its own non-zero code --,
# and neither the .tmp nor a final file left.
#   interrupt.sh <fleetsim> <mpiexec> <project root>
set -uo pipefail
fleetsim=$1 mpiexec=$2 root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {  # ranks, signal, expected exit code ('' for any non-zero)
  local ranks=$1 signal=$2 expected=$3 launch=() pid rc lines
  # mpirun SIGKILLs its ranks odls_base_sigkill_timeout (1 s) after passing a signal on;
  # ranks act at the next window boundary, which on a loaded machine can be later.
  [[ $ranks != 1 ]] && launch=("$mpiexec" -np "$ranks" --oversubscribe --mca odls_base_sigkill_timeout 30)
  rm -f "$work"/out.h5*
  "${launch[@]}" "$fleetsim" run --quiet --output "$work/out.h5" --no-request-rows \
    --num-reqs 200000 --cluster "$root/bench/fleet_1024.yaml" \
    --workload "$root/bench/traffic_1m.yaml" > "$work/stdout" 2> "$work/stderr" &
  pid=$!
  # Signal once the run is simulating: its output file is open.
  for _ in $(seq 1 600); do
    [[ -e $work/out.h5.tmp ]] && break
    sleep 0.1
  done
  [[ -e $work/out.h5.tmp ]] || { echo "np $ranks: the run never opened its file"; kill -KILL $pid; exit 1; }
  sleep 1
  kill -"$signal" $pid
  wait $pid
  rc=$?
  lines=$(grep -c "^fleetsim: " "$work/stderr")
  if [[ $lines != 1 ]] || ! grep -q "^fleetsim: interrupted (SIG" "$work/stderr"; then
    echo "np $ranks SIG$signal: $lines fleetsim line(s), expected one 'fleetsim: interrupted':"
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
  echo "np $ranks SIG$signal: exit $rc, $(grep "^fleetsim: " "$work/stderr")"
}

check 1 TERM 143
check 1 INT 130
# Under mpirun the line is not reliable yet: on a loaded machine a forwarded SIGTERM has
# ended a 2-rank run with no line at all even with 30 s before mpirun's SIGKILL (see the
# README's --output row); `check 2 TERM ''` belongs here once that is understood.
