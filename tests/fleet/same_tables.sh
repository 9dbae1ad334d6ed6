# Sourced by the fleet's shell tests: `same_tables DIR A B WHAT` compares the CSV exports
# of runs A and B in DIR (/requests, /instances, /summary, /timeseries), and on the first
# difference prints which table differs (WHAT says between what) and its first lines.
same_tables() {
  local dir=$1 a=$2 b=$3 what=$4 table
  for table in requests instances summary timeseries; do
    if ! cmp -s "$dir/$a.$table.csv" "$dir/$b.$table.csv"; then
      echo "/$table differs $what:"
      diff "$dir/$a.$table.csv" "$dir/$b.$table.csv" | head -5
      return 1
    fi
  done
}

# `same_at_layouts DIR RANKS:THREADS...` reruns the caller's `run NAME LAUNCHER...` under
# "$mpiexec" at each layout (the thread count passed in `extra`) and compares each with
# the caller's run named `single`.
same_at_layouts() {
  local dir=$1 spec ranks threads
  shift
  for spec in "$@"; do
    ranks=${spec%%:*} threads=${spec##*:}
    extra="--threads $threads"
    run "np${ranks}t${threads}" "$mpiexec" -np "$ranks" --oversubscribe
    same_tables "$dir" single "np${ranks}t${threads}" \
      "at $ranks rank(s) x $threads thread(s) from the single process"
    echo "  $ranks rank(s) x $threads thread(s): identical"
  done
}
