#!/usr/bin/env bash
# slurm/submit run on a real one-node Slurm: a 2-task job runs one simulation over 2 MPI
# ranks started by srun (the file's /provenance says ranks = 2), and a job whose srun does
# not build that MPI world fails loudly before simulating.
#   run_test.sh <fleetsim> <source dir>
# Exit 77 (skip) where Slurm cannot start here, except under CI=true (then 1).
set -euo pipefail
fleetsim=$(realpath "$1") source=$(realpath "$2")
harness=$source/tests/slurm/slurm_cluster.sh
"$harness" check || exit $?
# Every wait takes what is left of 150 s, so a stuck Slurm fails the test within about
# 150 s plus the cleanup's 30 s, far inside ctest's TIMEOUT (which could not clean up).
left() { local n=$((150 - SECONDS)); echo $((n > 1 ? n : 1)); }

work=$(mktemp -d /tmp/fleetsim-slurm-run.XXXXXX)
chmod 755 "$work"
cleanup() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    "$harness" logs "$work/cluster" || true
    for f in "$work"/*.out; do [[ -f "$f" ]] && { echo "---- $f"; tail -n 30 "$f"; }; done
  fi
  "$harness" stop "$work/cluster" || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

"$harness" start "$work/cluster"
export SLURM_CONF=$work/cluster/slurm.conf
export FLEETSIM=$fleetsim
cd "$work"  # submit works from any folder
workload=(--cluster "$source/cluster_configs/default_fleet.yaml"
          --workload "$source/tests/fleet/determinism_traffic.yaml" --num-reqs 200 --seed 5)

started=$SECONDS
job=$(timeout 60 "$source/slurm/submit" run --ntasks=2 --cpus-per-task=1 --output="$work/run-%j.out" -- \
  "${workload[@]}" --output "$work/run.h5" --quiet | sed -n 's/^run job: //p')
[[ "$job" =~ ^[0-9]+$ ]] || { echo "submit printed no 'run job: ID'"; exit 1; }
"$harness" wait "$job" "$(left)"
[[ -s "$work/run.h5" ]] || { echo "the job wrote no run.h5"; exit 1; }
attr() { h5dump -a "/provenance/$1" "$work/run.h5" | sed -n 's/^ *(0): *//p'; }
[[ "$(attr ranks)" == 2 ]] || { echo "/provenance ranks is '$(attr ranks)', expected 2"; exit 1; }
[[ "$(attr threads)" == 1 ]] || { echo "/provenance threads is '$(attr threads)', expected 1"; exit 1; }
grep -q "run.sbatch: done: $work/run.h5, /provenance ranks = 2" "$work/run-$job.out" ||
  { echo "the job log lacks run.sbatch's closing check"; exit 1; }
timeout 60 "$fleetsim" export --csv "$work/run.h5" > /dev/null
rows=$(($(wc -l < "$work/run.requests.csv") - 1))
[[ $rows -eq 200 ]] || { echo "expected 200 request rows, got $rows"; exit 1; }
echo "2 tasks: one run over 2 MPI ranks (srun), 200 requests, in $((SECONDS - started)) s"

# srun without PMIx starts 2 processes that are no 2-rank MPI world: the job must fail
# before simulating, and say why.
started=$SECONDS
job=$(FLEETSIM_SRUN_MPI=none timeout 60 "$source/slurm/submit" run --ntasks=2 --output="$work/bad-%j.out" -- \
  "${workload[@]}" --output "$work/bad.h5" --quiet | sed -n 's/^run job: //p')
if "$harness" wait "$job" "$(left)" 2>/dev/null; then
  echo "a job whose srun built no 2-rank MPI world succeeded"
  exit 1
fi
grep -q "run.sbatch: error: MPI size mismatch: SLURM_NTASKS=2" "$work/bad-$job.out" ||
  { echo "the failed job's log lacks the mismatch message"; cat "$work/bad-$job.out"; exit 1; }
[[ ! -e "$work/bad.h5" ]] || { echo "the mismatched job still simulated"; exit 1; }
echo "srun --mpi=none: the job failed before simulating: $(grep -o 'MPI size mismatch.*' "$work/bad-$job.out" | head -1)"
echo "slurm run test: passed"
