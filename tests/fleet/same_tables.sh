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
