#!/usr/bin/env bash
# fleetsim's benchmarks (bench/README.md). Prints one Markdown table row per case: wall
# time, simulated requests per wall second, events per second, and peak RSS per process.
#   bench/run.sh fleet      # 1,024 instances x 1M and 4M requests at 1 and 2 ranks; 100,000 instances
#   bench/run.sh 1m         # only the 1M-request cases
#   bench/run.sh np2        # only the 2-rank 1M and 100,000-instance cases
#   bench/run.sh instances  # only the 100,000-instance cases
#   bench/run.sh scaling    # 1 and 2 ranks: the 1M-request and the 100,000-instance cases
#   bench/run.sh memory     # 1M vs 20M requests, --no-request-rows, on the default fleet
#   bench/run.sh trace      # a 1M- and a 4M-line JSON-lines trace read on the default fleet
#   bench/run.sh vidur      # the Vidur-like case: 4 A100 replicas of Llama-3.1-8B, 1M requests
#   bench/run.sh hybrid     # the 27B hybrid on 64 H200s, 200,000 session requests
#   bench/run.sh threads    # the 1M-request case in one process at --threads 1 and 2
#   bench/run.sh day        # a day of 10,000 instances, 50M requests, at 2 ranks (an hour or more)
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"

# case name, launcher ("single" or a rank count), cluster, workload[, threads (default 1)]
measure() {
  local name=$1 launch=$2 cluster=$3 workload=$4 threads=${5:-1}
  [[ $workload == /* ]] || workload=$root/$workload
  local cmd=("$fleetsim" run --cluster "$root/$cluster" --workload "$workload"
             --no-request-rows --threads "$threads" --output "$out/$name.h5")
  [[ $launch == single ]] || cmd=(mpirun -np "$launch" "${cmd[@]}")
  /usr/bin/time -f "%e %M" -o "$out/$name.time" "${cmd[@]}" > "$out/$name.log"
  read -r wall rss_kb < "$out/$name.time"
  local line
  line=$(grep "requests on" "$out/$name.log")
  local requests events
  requests=$(awk '{print $1}' <<< "$line")
  events=$(sed -E 's/.* ([0-9]+) events.*/\1/' <<< "$line")
  awk -v n="$name" -v l="$launch" -v w="$wall" -v r="$requests" -v e="$events" -v m="$rss_kb" \
    'BEGIN { printf "| %s | %s | %.1f | %.0f | %.3g | %.0f |\n", n, l, w, r / w, e / w, m / 1024 }'
}

echo "| case | ranks | wall (s) | requests/s | events/s | peak RSS per process (MiB) |"
echo "|---|---|---|---|---|---|"
case ${1:-fleet} in
  fleet)
    measure 1m-single single bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 1m-np1 1 bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 1m-np2 2 bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 4m-np1 1 bench/fleet_1024.yaml bench/traffic_4m.yaml
    measure 4m-np2 2 bench/fleet_1024.yaml bench/traffic_4m.yaml
    measure 100k-instances-np1 1 bench/fleet_100k.yaml bench/traffic_100k.yaml
    measure 100k-instances-np2 2 bench/fleet_100k.yaml bench/traffic_100k.yaml
    ;;
  1m)
    measure 1m-single single bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 1m-np1 1 bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 1m-np2 2 bench/fleet_1024.yaml bench/traffic_1m.yaml
    ;;
  np2)
    measure 1m-np2 2 bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 100k-instances-np2 2 bench/fleet_100k.yaml bench/traffic_100k.yaml
    ;;
  scaling)
    measure 1m-np1 1 bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 1m-np2 2 bench/fleet_1024.yaml bench/traffic_1m.yaml
    measure 100k-instances-np1 1 bench/fleet_100k.yaml bench/traffic_100k.yaml
    measure 100k-instances-np2 2 bench/fleet_100k.yaml bench/traffic_100k.yaml
    ;;
  instances)
    measure 100k-instances-np1 1 bench/fleet_100k.yaml bench/traffic_100k.yaml
    measure 100k-instances-np2 2 bench/fleet_100k.yaml bench/traffic_100k.yaml
    ;;
  memory)
    measure memory-1m single cluster_configs/default_fleet.yaml bench/traffic_memory_1m.yaml
    measure memory-20m single cluster_configs/default_fleet.yaml bench/traffic_memory_20m.yaml
    ;;
  trace)
    # A JSON-lines trace read line by line: 1M and 4M short requests at 3,000/s with prefix
    # hashes, written here by a deterministic awk (%.0f: mawk's %d stops at 2^31), so the
    # reader's speed and memory are measured without ../shared. Memory must not grow with
    # the trace.
    for n in 1000000 4000000; do
      file="$out/trace_$n.jsonl"
      [[ -f $file ]] || awk -v n="$n" 'BEGIN {
        srand(2029)
        for (i = 0; i < n; ++i) {
          input = 64 + int(rand() * 193); blocks = int(input / 16)
          printf "{\"arrival_ns\": %.0f, \"input_tokens\": %d, \"output_tokens\": %d, \"hash_block_size\": 16, \"block_hashes\": [", i * 333333, input, 1 + int(rand() * 4)
          for (b = 0; b < blocks; ++b) printf "%s%d", (b ? ", " : ""), (b < 2 ? b : int(rand() * 1e9))
          print "]}"
        }
      }' > "$file"
      measure "trace-$((n / 1000000))m" single cluster_configs/default_fleet.yaml "$file"
    done
    ;;
  threads)
    measure 1m-threads1 single bench/fleet_1024.yaml bench/traffic_1m.yaml 1
    measure 1m-threads2 single bench/fleet_1024.yaml bench/traffic_1m.yaml 2
    ;;
  vidur)
    measure vidur-like single bench/fleet_vidur_like.yaml bench/traffic_vidur_like.yaml
    ;;
  hybrid)
    measure hybrid-64 single bench/fleet_hybrid_64.yaml bench/traffic_hybrid_sessions.yaml
    ;;
  day)
    measure day-10k-np2 2 bench/fleet_10k.yaml bench/traffic_day.yaml
    ;;
  *)
    echo "usage: bench/run.sh fleet|1m|np2|scaling|instances|memory|trace|threads|vidur|hybrid|day" >&2
    exit 2
    ;;
esac
