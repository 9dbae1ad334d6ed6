#!/usr/bin/env bash
# Checkpoint and restart (docs/CHECKPOINT.md): a run killed with SIGKILL after a
# checkpoint and restarted from it writes the same /requests, /instances, /summary,
# /timeseries (and /steps) as the uninterrupted run, and the same /provenance counters --
# restarted at (1 -> 1), (2 -> 2) and (2 -> 1) ranks, and (1 -> 2) for the default case.
# The kill is a real SIGKILL each rank sends itself right after the chosen checkpoint is
# in place (FLEETSIM_TEST_KILL_AFTER_CHECKPOINT), so the test does not race the run.
#   checkpoint_restart.sh <fleetsim> <mpiexec> <source dir> <case>
# Cases:
#   default  the 64-instance default fleet (prefix caching, least_outstanding over load
#            snapshots) on a generator workload (1,500 requests); also across thread
#            counts (1 x 2 -> 1 x 1, 1 x 1 -> 2 x 2 ranks x threads);
#   streams  the same fleet under power_of_two (each gateway's random stream) and weighted
#            round robin (the smooth WRR position);
#   hybrid   two Qwen3.8-27B hybrid (gated DeltaNet) instances with prefix caching (GDN
#            state checkpoints in the block pool) on a trace with shared prefixes, with
#            --trace-steps; one restart checkpoints again, is killed again and restarted.
#   pd       the prefill/decode fleet of cluster_configs/pd_llama8b.yaml (decode routers
#            over load views, and over random streams) on a short run of long prompts,
#            killed at a checkpoint taken while KV transfers are in flight (checked: some
#            request's transfer spans it): prefill-side blocks held until sent, requests in
#            transit to their decode instances (on another rank at 2 ranks); link sharing
#            across a checkpoint is tested in checkpoint_parts_test (here a transfer always
#            ends before its prefill instance's next step does: none shares a link later);
#   mtp      cluster_configs/hybrid27b_mtp.yaml (two instances speculating with k = 2
#            drafts, two not) on a short workload, with --trace-steps (the /steps drafts
#            and accepted columns compared too);
#   moe_dp   cluster_configs/moe_dp_ep.yaml (two TP 2 instances, two data-parallel
#            expert-parallel instances of two lock-stepped ranks) on a short workload, with
#            --trace-steps (every rank's lock-step rows, dummy batches included, compared),
#            requests 0.4 s from gateway to instance (some in a DP engine's queue, not yet
#            given a rank, at the checkpoint);
#            checked: a DP instance's lock-step spans the checkpoint (its wave goes on);
#   bad      bad checkpoints and restarts: one line naming the file and what is wrong,
#            exit 2, no output file -- other inputs, a missing, truncated or corrupt file,
#            a foreign manifest, options alone. (The refusal of features checkpoints do not
#            cover is tested in checkpoint_parts_test: every feature a fleet can use is
#            covered today.)
set -euo pipefail
fleetsim=$1 mpiexec=$2 source=$3 case=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
tables="requests instances summary timeseries"

counters() {  # an HDF5 file: its /provenance counters, one "name value" a line
  local name
  for name in steps events windows load_snapshots out_of_grid_lookups; do
    echo "$name $(h5dump -a "/provenance/$name" "$1" | sed -n 's/^ *(0): //p')"
  done
}
command_line() { h5dump -d /provenance/command_line "$1" | sed -n "s/^ *(0): //p"; }
launch() {  # ranks, then run arguments
  local ranks=$1
  shift
  if [[ $ranks == 1 ]]; then
    "$fleetsim" run --quiet "$@"
  else
    "$mpiexec" -np "$ranks" --oversubscribe "$fleetsim" run --quiet "$@"
  fi
}
same() {  # a finished run's name: the uninterrupted run's tables and counters
  local t
  "$fleetsim" export --csv "$1.h5" > /dev/null
  for t in $tables; do
    if ! cmp -s "base.$t.csv" "$1.$t.csv"; then
      echo "FAIL: /$t of $1 differs from the uninterrupted run's:"
      diff "base.$t.csv" "$1.$t.csv" | head -5
      exit 1
    fi
  done
  counters "$1.h5" > "$1.counters"
  if ! diff base.counters "$1.counters"; then
    echo "FAIL: the /provenance counters of $1 differ from the uninterrupted run's (above)"
    exit 1
  fi
}
killed_after() {  # checkpoint number, ranks, output, then run arguments: dies by SIGKILL
  local n=$1 ranks=$2 output=$3 rc=0
  shift 3
  FLEETSIM_TEST_KILL_AFTER_CHECKPOINT=$n launch "$ranks" --output "$output" "$@" \
    > killed.log 2>&1 || rc=$?
  if [[ $rc == 0 || -e $output ]]; then
    echo "FAIL: the run was to be killed after checkpoint $n (exit $rc, output left: $([[ -e $output ]] && echo yes || echo no))"
    cat killed.log
    exit 1
  fi
}

# label, checkpoint interval (simulated s), then the run's arguments.
run_case() {
  local label=$1 every=$2 t
  shift 2
  # The uninterrupted run; one that checkpoints along the way writes the same.
  "$fleetsim" run --quiet --output base.h5 "$@"
  "$fleetsim" export --csv base.h5 > /dev/null
  counters base.h5 > base.counters
  "$fleetsim" run --quiet --output "$label-plain.h5" "$@" --checkpoint plain-$label \
    --checkpoint-every "$every"
  same "$label-plain"
  if ! grep -q '^sequence [3-9]' plain-$label/manifest && ! grep -q '^sequence [1-9][0-9]' plain-$label/manifest; then
    echo "FAIL: $label: expected three checkpoints or more"
    cat plain-$label/manifest
    exit 1
  fi
  local pair from to name dir
  for pair in ${pairs:-1:1 2:2 2:1}; do
    from=${pair%:*} to=${pair#*:}
    name=$label-${from}to$to dir=ckpt-$name
    killed_after 2 "$from" "$name.h5" "$@" --checkpoint "$dir" --checkpoint-every "$every"
    launch "$to" --output "$name.h5" "$@" --restart "$dir"
    same "$name"
    # /provenance names the command line that began the run.
    if [[ "$(command_line "$name.h5")" != *"--checkpoint $dir"* ]]; then
      echo "FAIL: $name: /provenance's command line is not the first run's: $(command_line "$name.h5")"
      exit 1
    fi
    echo "ok: $label killed after checkpoint 2 at $from rank(s), restarted at $to: same tables and counters"
  done
}

traffic() {  # seed, requests, rate, [more lines]: traffic.yaml, chat-like lengths
  cat > traffic.yaml <<YAML
generator:
  seed: $1
  num_requests: $2
  arrivals: {process: poisson, rate_per_s: $3}
  input_tokens: {distribution: lognormal, median: 600, sigma: 0.8, min: 16, max: 8000}
  output_tokens: {distribution: lognormal, median: 180, sigma: 0.7, min: 8, max: 1500}
${4:-}
YAML
}

case $case in
  default)
    # Independent requests: every rank reads the workload and makes its gateways' share,
    # so a restart at more ranks than the checkpoint's is tried too.
    traffic 11 1500 100.0 "  hash_block_size: 16"
    pairs="1:1 2:2 2:1 1:2" run_case default 3 --cluster "$source/cluster_configs/default_fleet.yaml" \
      --workload traffic.yaml --seed 3
    # Two threads a rank (each instance kept on one, its next event and load noted by its
    # thread): killed at one thread count, restarted at another, the same tables.
    args=(--cluster "$source/cluster_configs/default_fleet.yaml" --workload traffic.yaml --seed 3)
    killed_after 2 1 default-threads.h5 "${args[@]}" --threads 2 --checkpoint ckpt-threads \
      --checkpoint-every 3
    launch 1 --output default-threads.h5 "${args[@]}" --threads 1 --restart ckpt-threads
    same default-threads
    killed_after 2 1 default-threads2.h5 "${args[@]}" --threads 1 --checkpoint ckpt-threads2 \
      --checkpoint-every 3
    launch 2 --output default-threads2.h5 "${args[@]}" --threads 2 --restart ckpt-threads2
    same default-threads2
    echo "ok: default killed at 1 rank x 2 threads and at 1 x 1, restarted at 1 x 1 and 2 x 2: same tables and counters"
    ;;
  streams)
    traffic 5 1000 120.0
    for form in "power_of_two false" "round_robin true"; do
      set -- $form
      sed -e "s/^  policy: .*/  policy: $1/" -e "s/^  capacity_weighted: .*/  capacity_weighted: $2/" \
        "$source/cluster_configs/default_fleet.yaml" > fleet-$1.yaml
      run_case "$1" 2 --cluster fleet-$1.yaml --workload traffic.yaml --seed 7
    done
    ;;
  hybrid)
    cat > hybrid.yaml <<YAML
name: hybrid_pair
slo: {ttft_s: 3.0, tpot_s: 0.1}
instance_groups:
  - name: qwen27b
    model: qwen3.8-27b
    hardware: RTX-PRO-6000
    bundle: analytic
    tp: 1
    replicas: 2
    engine: {enable_prefix_caching: true, gpu_memory_utilization: 0.9}
gateways: {count: 3, policy: prefix_affinity}
YAML
    tables="requests instances summary timeseries steps"
    trace=$source/runs/examples/shared_prefix_sessions.jsonl
    run_case hybrid 15 --cluster hybrid.yaml --workload "$trace" --trace-steps
    # A restarted run that checkpoints again, is killed again, and is restarted again.
    killed_after 2 2 again.h5 --cluster hybrid.yaml --workload "$trace" --trace-steps \
      --checkpoint again --checkpoint-every 15
    killed_after 2 1 again.h5 --cluster hybrid.yaml --workload "$trace" --trace-steps \
      --checkpoint again --checkpoint-every 15 --restart again
    grep -q '^sequence 4$' again/manifest || { echo "FAIL: expected checkpoint 4"; cat again/manifest; exit 1; }
    launch 2 --output again.h5 --cluster hybrid.yaml --workload "$trace" --trace-steps --restart again
    same again
    echo "ok: hybrid killed twice (2 ranks, then 1), restarted at 2: same tables and counters"
    ;;
  pd)
    cat > pd_traffic.yaml <<YAML
generator:
  seed: 23
  num_requests: 300
  arrivals: {process: poisson, rate_per_s: 40.0}
  input_tokens: {distribution: lognormal, median: 3000, sigma: 0.6, min: 64, max: 16000}
  output_tokens: {distribution: lognormal, median: 60, sigma: 0.6, min: 8, max: 400}
  hash_block_size: 16
YAML
    # KV transfers in a run's /requests CSV: "start end", one a line.
    transfers() {
      awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
        $col["transfer_start_ns"] >= 0 { print $col["transfer_start_ns"], $col["transfer_end_ns"] }' \
        "$1.requests.csv"
    }
    for policy in least_kv power_of_two; do  # the decode routers' views; their streams
      sed -e "s/^  decode_policy: .*/  decode_policy: $policy/" \
        "$source/cluster_configs/pd_llama8b.yaml" > pd-$policy.yaml
      args=(--cluster pd-$policy.yaml --workload pd_traffic.yaml)
      # Checkpoint 2 is due in the middle of the longest transfer of the run's first half
      # (from a run without checkpoints): the interval is half that time. It is taken at
      # the first window boundary at or past it, and P/D windows are at most the hand-off
      # lookahead (about 1 ms) long, so that transfer is still moving then.
      "$fleetsim" run --quiet --output probe.h5 "${args[@]}"
      "$fleetsim" export --csv probe.h5 > /dev/null
      every=$(transfers probe | awk '
        { s[NR] = $1; e[NR] = $2; if ($2 > last) last = $2 }
        END {
          for (i = 1; i <= NR; ++i)
            if ((s[i] + e[i]) / 2 < last / 2 && e[i] - s[i] > longest) {
              longest = e[i] - s[i]; half = int((s[i] + e[i]) / 4)
            }
          printf "%d.%09d\n", int(half / 1e9), half % 1e9
        }')
      run_case "pd-$policy" "$every" "${args[@]}"
      # The checkpoint the runs were killed after (number 2) caught KV in flight: requests
      # whose decode instance was reading their KV at its window boundary.
      at=$(sed -n "s/^window_end_ns //p" "ckpt-pd-$policy-1to1/manifest")
      moving=$(transfers base | awk -v at="$at" '$1 <= at && at < $2 { ++n } END { print n + 0 }')
      if [[ -z $at || $moving -lt 1 ]]; then
        echo "FAIL: pd-$policy: no KV transfer in flight at the checkpoint (${at:-?} ns)"
        exit 1
      fi
      echo "ok: pd-$policy: $moving KV transfer(s) in flight at the checkpoint ($at ns, every $every s)"
    done
    ;;
  mtp)
    traffic 13 200 10.0
    tables="requests instances summary timeseries steps"
    run_case mtp 5 --cluster "$source/cluster_configs/hybrid27b_mtp.yaml" \
      --workload traffic.yaml --trace-steps
    # Requests crossed the checkpoint restarted from carrying drafts: the speculating
    # instances' first steps after it verified some (drafted in the step before it).
    at=$(sed -n "s/^window_end_ns //p" ckpt-mtp-1to1/manifest)
    drafts=$(awk -F, -v at="$at" '
      NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
      $col["start_ns"] >= at && !(($col["instance"]) in seen) {
        seen[$col["instance"]] = 1; n += $col["draft_tokens"]
      }
      END { print n + 0 }' base.steps.csv)
    if [[ -z $at || $drafts -lt 1 ]]; then
      echo "FAIL: mtp: no drafts carried across the checkpoint (${at:-?} ns)"
      exit 1
    fi
    echo "ok: mtp: $drafts draft tokens verified in the first steps after the checkpoint ($at ns)"
    ;;
  moe_dp)
    cat > moe_traffic.yaml <<YAML
generator:
  seed: 17
  num_requests: 150
  arrivals: {process: poisson, rate_per_s: 10.0}
  input_tokens: {distribution: lognormal, median: 1200, sigma: 0.7, min: 32, max: 8000}
  output_tokens: {distribution: lognormal, median: 180, sigma: 0.6, min: 8, max: 1200}
YAML
    # Requests take 0.4 s from the gateway to their instance, so that a checkpoint finds
    # some handed to a DP engine and not yet given a rank.
    { cat "$source/cluster_configs/moe_dp_ep.yaml"; echo "latency: {gateway_to_instance_us: 400000}"; } \
      > moe_dp.yaml
    tables="requests instances summary timeseries steps"
    run_case moe_dp 3 --cluster moe_dp.yaml --workload moe_traffic.yaml --trace-steps
    # The checkpoint restarted from caught a data-parallel wave going on: a lock-step of a
    # DP instance (rows with a DP rank) started before it and ended after.
    at=$(sed -n "s/^window_end_ns //p" ckpt-moe_dp-1to1/manifest)
    spanning=$(awk -F, -v at="$at" '
      NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
      $col["dp_rank"] >= 0 && $col["start_ns"] < at && $col["start_ns"] + $col["duration_ns"] > at { ++n }
      END { print n + 0 }' base.steps.csv)
    if [[ -z $at || $spanning -lt 1 ]]; then
      echo "FAIL: moe_dp: no DP lock-step spans the checkpoint (${at:-?} ns)"
      exit 1
    fi
    echo "ok: moe_dp: $spanning DP rank rows span the checkpoint ($at ns)"
    ;;
  bad)
    traffic 3 400 100.0
    cluster=$source/cluster_configs/default_fleet.yaml
    args=(--cluster "$cluster" --workload traffic.yaml)
    killed_after 2 2 bad.h5 "${args[@]}" --checkpoint good --checkpoint-every 1
    refused() {  # expected text, ranks, then run arguments: exit 2, one fleetsim line, no output
      local expected=$1 ranks=$2 rc=0
      shift 2
      launch "$ranks" --output bad.h5 "$@" > refused.out 2> refused.err || rc=$?
      local lines
      lines=$(grep -c '^fleetsim:' refused.err || true)  # mpirun adds its own report
      if [[ $rc != 2 || $lines != 1 || -e bad.h5 ]] || ! grep -qF -- "$expected" refused.err; then
        echo "FAIL: expected exit 2 and one line with '$expected'; got exit $rc, output file: $([[ -e bad.h5 ]] && echo yes || echo no):"
        cat refused.err
        exit 1
      fi
      echo "ok: refused: $(cat refused.err)"
    }
    refused "manifest: inputs: written for other inputs" 1 "${args[@]}" --seed 9 --restart good
    refused "manifest: inputs: written for other inputs" 2 "${args[@]}" --horizon 3 --restart good
    refused "manifest is missing" 1 "${args[@]}" --restart nowhere
    refused "--checkpoint-every: needs --checkpoint DIR" 1 "${args[@]}" --checkpoint-every 5
    refused "--checkpoint: needs --checkpoint-every" 1 "${args[@]}" --checkpoint somewhere
    refused "--checkpoint-every: must be a positive" 1 "${args[@]}" --checkpoint c --checkpoint-every 0
    file1=$(ls good/ckpt-*-rank-1.bin)
    cp -r good damaged
    truncate -s -100 "damaged/$(basename "$file1")"
    refused "$(basename "$file1"): checkpoint:" 1 "${args[@]}" --restart damaged
    grep -q "truncated or replaced" refused.err
    rm -r damaged && cp -r good damaged
    printf 'X' | dd of="damaged/$(basename "$file1")" bs=1 seek=5000 conv=notrunc status=none
    refused "checksum differs from the manifest's (corrupt)" 2 "${args[@]}" --restart damaged
    rm -r damaged && cp -r good damaged
    rm "damaged/$(basename "$file1")"
    refused "missing (the manifest lists it)" 1 "${args[@]}" --restart damaged
    rm -r damaged && cp -r good damaged
    sed -i -E 's/^fleetsim-checkpoint [0-9]+$/fleetsim-checkpoint 99/' damaged/manifest
    refused "manifest:1: format: checkpoint format 99" 1 "${args[@]}" --restart damaged
    rm -r damaged && cp -r good damaged
    head -c 150 good/manifest > damaged/manifest
    refused "(truncated manifest?)" 1 "${args[@]}" --restart damaged
    # The good checkpoint still restarts, at 1 rank, after all that.
    launch 1 --output good.h5 "${args[@]}" --restart good
    [[ -s good.h5 ]]
    echo "ok: the undamaged checkpoint restarts"
    ;;
  *)
    echo "unknown case $case"
    exit 2
    ;;
esac
