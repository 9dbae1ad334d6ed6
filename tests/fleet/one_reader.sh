#!/usr/bin/env bash
# Under MPI only rank 0 reads the workload: a trace streamed through a named pipe (which can
# be read once, by one process) gives the same tables at 2 and 3 ranks as the same trace
# in a regular file. Were every rank to open it, they would split or steal the stream.
# A pipe without --format is refused in one line (detection would read it twice).
#   one_reader.sh <fleetsim> <mpiexec>
set -euo pipefail
source "$(dirname "$0")/same_tables.sh"
fleetsim=$1 mpiexec=$2
work=$(mktemp -d)
writer=""
trap '[[ -n $writer ]] && kill "$writer" 2> /dev/null; rm -rf "$work"' EXIT

# 2,000 native requests, 40 per second, with 16-token prefix hashes shared in pairs.
awk 'BEGIN { srand(7); for (i = 0; i < 2000; i++)
  printf "{\"id\": \"q%d\", \"arrival_s\": %.4f, \"input_tokens\": %d, \"output_tokens\": %d, \"block_hashes\": [%d, %d], \"hash_block_size\": 16}\n",
         i, i / 40.0, 64 + int(rand() * 900), 8 + int(rand() * 200), int(i / 2), 100000 + i }' \
  > "$work/trace.jsonl"

run() {  # name, workload, then the launcher words before fleetsim
  local name=$1 workload=$2
  shift 2
  "$@" "$fleetsim" run --quiet --workload "$workload" --format native --output "$work/$name.h5"
  "$fleetsim" export --csv "$work/$name.h5" > /dev/null
}

run file "$work/trace.jsonl"
mkfifo "$work/pipe.jsonl"
for ranks in 2 3; do
  cat "$work/trace.jsonl" > "$work/pipe.jsonl" &
  writer=$!
  run "pipe_np$ranks" "$work/pipe.jsonl" timeout 120 "$mpiexec" -np "$ranks" --oversubscribe
  wait "$writer"
  writer=""
  same_tables "$work" file "pipe_np$ranks" "between the file and the pipe at $ranks ranks"
  echo "a pipe at $ranks ranks: $(($(wc -l < "$work/pipe_np$ranks.requests.csv") - 1)) requests, identical to the file"
done

# A pipe whose format must be detected: exit 2 and one line naming --format.
status=0
"$fleetsim" run --quiet --workload "$work/pipe.jsonl" --output "$work/auto.h5" \
  2> "$work/auto.err" || status=$?
[[ $status -eq 2 ]] || { echo "expected exit 2 for a pipe without --format, got $status"; exit 1; }
grep -q -- "--format: .*pipe.jsonl' is not a regular file" "$work/auto.err" ||
  { echo "unexpected message:"; cat "$work/auto.err"; exit 1; }
[[ ! -e $work/auto.h5 ]] || { echo "an output file was left behind"; exit 1; }
echo "a pipe without --format: $(cat "$work/auto.err")"
