#!/usr/bin/env bash
# A failure one MPI rank meets alone -- here its N-th C++ allocation throws std::bad_alloc
# (tests/support/fail_one_allocation.cc, preloaded into rank 1 only), as a failed
# FLEETSIM_CHECK would throw std::logic_error -- never leaves the other rank waiting: at
# points spread over a 2-rank run (setup, the window loop, the output), the run ends within
# the time limit, non-zero, with a "fleetsim:" line saying so, and leaves neither the
# output file nor its .tmp.
#   one_rank_fails.sh <fleetsim> <mpiexec> <project root> <fail_one_allocation.so>
set -uo pipefail
fleetsim=$1 mpiexec=$2 root=$3 shim=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Under AddressSanitizer (scripts/sanitize.sh) the shim's operator new must still come
# before the sanitizer runtime's, which the runtime refuses unless told not to check; the
# shim allocates with malloc and frees with free, which ASan still watches.
cat > "$work/rank1.sh" <<WRAP
#!/usr/bin/env bash
if [[ \$OMPI_COMM_WORLD_RANK == 1 ]]; then
  export LD_PRELOAD=$shim
  [[ -n \${ASAN_OPTIONS:-} ]] && export ASAN_OPTIONS=\$ASAN_OPTIONS:verify_asan_link_order=0
fi
exec "\$@"
WRAP
chmod +x "$work/rank1.sh"

run() {  # the run, rank 1 under the shim; its stderr in $work/stderr
  rm -f "$work"/out.h5*
  timeout 180 "$mpiexec" -np 2 --oversubscribe "$work/rank1.sh" "$fleetsim" run --quiet \
    --seed 5 --workload "$root/tests/fleet/determinism_traffic.yaml" \
    --output "$work/out.h5" > /dev/null 2> "$work/stderr"
}

# How many allocations rank 1 makes in the whole run.
FLEETSIM_COUNT_ALLOCATIONS=1 run || { echo "the run without a failure failed:"; cat "$work/stderr"; exit 1; }
[[ -f $work/out.h5 ]] || { echo "the run without a failure wrote no file"; exit 1; }
total=$(awk '/^allocations: / {print $2}' "$work/stderr")
[[ -n $total && $total -gt 1000 ]] || { echo "no allocation count: $(cat "$work/stderr")"; exit 1; }
echo "rank 1 makes $total allocations"

failed=0
for percent in 5 20 40 60 80 95 99; do
  n=$((total * percent / 100))
  FLEETSIM_FAIL_ALLOCATION=$n run
  rc=$?
  lines=$(grep -c '^fleetsim: ' "$work/stderr")
  what=$(grep -m1 '^fleetsim: ' "$work/stderr" | cut -c1-160)
  problem=""
  [[ $rc == 124 ]] && problem="hung (killed after 180 s)"
  [[ -z $problem && $rc == 0 ]] && problem="exit 0"
  [[ -z $problem && $lines == 0 ]] && problem="no fleetsim line"
  [[ -z $problem ]] && ls "$work"/out.h5* > /dev/null 2>&1 && problem="left $(ls "$work" | grep out.h5)"
  if [[ -n $problem ]]; then
    echo "allocation $n ($percent %): $problem; exit $rc; stderr:"
    sed 's/^/    /' "$work/stderr" | head -20
    failed=1
  else
    echo "allocation $n ($percent %): exit $rc, $what"
  fi
done
exit $failed
