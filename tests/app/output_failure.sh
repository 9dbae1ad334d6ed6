#!/usr/bin/env bash
# The output file system failing under `fleetsim run`, at 1 and 2 ranks: a full disk (a
# small tmpfs), a read-only folder (a tmpfs remounted read-only) and a folder without write
# permission (chmod 555, run as nobody). Each gives exit 2, one "fleetsim: " line naming the
# output file and what failed, no crash (HDF5 is closed before MPI_Finalize), and no file
# left (neither the .tmp nor a partial final file). A full disk of every size from "the
# tables do not fit" to "everything fits" gives either that or a complete file. A cluster
# config over 64 KiB (long comments) is stored in /provenance (a dataset, not an attribute).
# Mounting needs root with CAP_SYS_ADMIN: without it the test skips (77), or fails under
# CI=true.
#   output_failure.sh <fleetsim> <mpiexec> <project root>
set -uo pipefail
fleetsim=$1 mpiexec=$2 root=$3
work=$(mktemp -d)
# One analytic-bundle cache for every run here, built by the first (root) runs, so that the
# run as nobody below only reads it.
export FLEETSIM_CACHE=$work/cache
disk=$work/disk
mkdir -p "$disk"
cleanup() {
  mountpoint -q "$disk" && umount "$disk"
  rm -rf "$work"
}
trap cleanup EXIT
skip() {
  echo "skipped: $1"
  [[ ${CI:-} == true ]] && exit 1
  exit 77
}
mount -t tmpfs -o size=100k tmpfs "$disk" 2> /dev/null || skip "cannot mount a tmpfs (not root?)"
umount "$disk"

cluster=$root/cluster_configs/single_node_hybrid_instance.yaml
workload=$root/runs/examples/shared_prefix_sessions.jsonl
run() {  # ranks, output, extra arguments...: exit code in $rc, stderr in $work/stderr
  local ranks=$1 output=$2
  shift 2
  local launch=()
  [[ $ranks != 1 ]] && launch=("$mpiexec" -np "$ranks" --oversubscribe)
  "${launch[@]}" "$fleetsim" run --quiet --output "$output" --cluster "${config:-$cluster}" \
    --workload "$workload" --trace-steps "$@" > "$work/stdout" 2> "$work/stderr"
  rc=$?
}
fail() {
  echo "$1:"
  cat "$work/stderr"
  exit 1
}
expect_refusal() {  # label, folder, expected text
  local label=$1 folder=$2 expected=$3 lines
  lines=$(grep -c "^fleetsim: " "$work/stderr")
  [[ $rc == 2 && $lines == 1 ]] || fail "$label: exit $rc, $lines fleetsim line(s), expected exit 2 and one"
  grep -q "^fleetsim: error: .*$folder/run.h5: .*$expected" "$work/stderr" ||
    fail "$label: no line naming $folder/run.h5 and '$expected'"
  ! grep -qi "segmentation\|signal\|internal error" "$work/stderr" || fail "$label: a crash"
  [[ -z $(ls -A "$folder") ]] || fail "$label: left $(ls -A "$folder")"
  echo "$label: $(grep "^fleetsim: " "$work/stderr")"
}

# A full disk: the file does not fit. Compressed, the tables themselves may fit in 100 KiB;
# then the room reserved for the final metadata flush does not.
mount -t tmpfs -o size=100k tmpfs "$disk"
for ranks in 1 2; do
  run "$ranks" "$disk/run.h5"
  expect_refusal "full disk, np $ranks" "$disk" "\(writing /.*\|reserving room for the metadata\) failed: .*; [0-9]\+ bytes free on its file system; no file written"
done
umount "$disk"

# Every size around the file's own (~150 KB, and 256 KiB reserved for its final metadata
# flush): a complete file or a clean refusal, never a crash -- also where the data fits and
# only the final flush would not. The largest gives a complete file.
for kib in 132 140 144 148 156 200 300 400 420 440 480; do
  mount -t tmpfs -o size=${kib}k tmpfs "$disk"
  run 1 "$disk/run.h5"
  if [[ $rc == 0 ]]; then
    [[ $(ls -A "$disk") == run.h5 ]] || fail "${kib} KiB: exit 0 but $(ls -A "$disk")"
    "$fleetsim" export --csv --dir "$work" "$disk/run.h5" > /dev/null || fail "${kib} KiB: unreadable"
    echo "${kib} KiB: complete"
  else
    expect_refusal "${kib} KiB" "$disk" "failed: "
  fi
  umount "$disk"
done
[[ $rc == 0 ]] || fail "480 KiB: no complete file"

# A read-only file system (EROFS, even for root).
mount -t tmpfs -o size=1m tmpfs "$disk"
mount -o remount,ro "$disk"
for ranks in 1 2; do
  run "$ranks" "$disk/run.h5"
  expect_refusal "read-only folder, np $ranks" "$disk" "Read-only file system"
done
umount "$disk"

# No write permission (EACCES): root ignores permission bits, so run as nobody.
mkdir -p "$work/locked"
chmod 555 "$work/locked"
chmod 755 "$work"
if [[ $(id -u) == 0 ]] && command -v setpriv > /dev/null; then
  as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
  as_nobody=()
fi
HOME=$work "${as_nobody[@]}" "$fleetsim" run --quiet --output "$work/locked/run.h5" \
  --cluster "$cluster" --workload "$workload" > "$work/stdout" 2> "$work/stderr"
rc=$?
expect_refusal "no write permission" "$work/locked" "Permission denied"

# A valid cluster config over 64 KiB: the run completes and /provenance holds all of it.
big=$work/big_cluster.yaml
cp "$cluster" "$big"
for i in $(seq 1 2000); do echo "# a long comment, line $i, to make the config larger than 64 KiB"; done >> "$big"
(($(stat -c %s "$big") > 65536)) || fail "the config is not over 64 KiB"
for ranks in 1 2; do
  config=$big run "$ranks" "$work/big.h5"
  [[ $rc == 0 && -f $work/big.h5 ]] || fail "config over 64 KiB, np $ranks: exit $rc"
  stored=$(h5dump -H -d /provenance/cluster_config "$work/big.h5" | sed -n 's/.*STRSIZE \([0-9]*\);.*/\1/p')
  [[ $stored == "$(stat -c %s "$big")" ]] ||
    fail "config over 64 KiB, np $ranks: /provenance/cluster_config holds $stored bytes, not $(stat -c %s "$big")"
  echo "config of $(stat -c %s "$big") bytes, np $ranks: stored whole"
  rm -f "$work/big.h5"
done
