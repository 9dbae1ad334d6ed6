#!/usr/bin/env bash
# The fleet's request-level results do not depend on how the run is spread: /requests and
# /instances (and /summary, /timeseries) are identical without mpirun and at (ranks,
# threads) = (1,1), (2,1), (2,2), (3,1), (4,2). Two fleets:
#   default      the 64-instance heterogeneous default fleet, generated chat sessions;
#   multi_model  cluster_configs/multi_model_fleet.yaml (Llama-3.1-70B on 4 instances,
#                Llama-3.1-8B on 16), a trace whose ids say the model each request asks
#                for: a<i> llama-3.1-8b, b<i> llama-3.1-70b, n<i> none, x<i> qwen3-32b
#                (which no group serves). Each must land on its model's groups (none: any;
#                qwen3-32b: rejected, no_model) before the layouts are compared.
#   pd           cluster_configs/pd_llama8b.yaml (4 prefill, 6 decode instances), long
#                prompts sharing prefixes: every request goes from a prefill instance to
#                a decode instance with its times in order before the layouts are compared.
#   pd_node      the same P/D fleet with `placement: spread` (both nodes hold prefill and
#                decode instances) and `decode_scope: node`: each request's decode instance
#                is on its prefill instance's node, checked before the layouts are compared.
#   independent  the default fleet on a generator of independent requests (half behind a
#                shared prompt), which every rank reads, making its own gateways' share.
#   moe_dp       cluster_configs/moe_dp_ep.yaml (Qwen3-30B-A3B: two TP 2 instances, two
#                DP 2 expert-parallel ones): every request on a DP instance names the DP
#                rank that served it (both ranks of each serve), the others -1.
#   determinism.sh <fleetsim> <mpiexec> <source dir> <policy> <capacity_weighted: true|false>
#                  [default|independent|multi_model|pd|pd_node|moe_dp]
set -euo pipefail
source "$(dirname "$0")/same_tables.sh"
fleetsim=$1 mpiexec=$2 source=$3 policy=$4 weighted=$5 fleet=${6:-default}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case $fleet in
  default)
    cluster=$source/cluster_configs/default_fleet.yaml
    workload=$source/tests/fleet/determinism_traffic.yaml
    expected_rows=1500 expected_instances=64
    ;;
  independent)
    cluster=$source/cluster_configs/default_fleet.yaml
    workload=$source/tests/fleet/determinism_independent.yaml
    expected_rows=1500 expected_instances=64
    ;;
  multi_model)
    cluster=$source/cluster_configs/multi_model_fleet.yaml
    workload=$work/multi_model.jsonl
    expected_rows=1500 expected_instances=20
    # 100 requests/s for 15 s; of every 20: 12 for the 8B, 4 for the 70B, 3 naming no model,
    # 1 for a model no group serves. 40 conversations share prefixes (prefix_affinity keys).
    awk 'BEGIN {
      for (i = 0; i < 1500; i++) {
        k = (i * 7) % 20
        if (k < 12) { kind = "a"; model = ", \"model\": \"llama-3.1-8b\"" }
        else if (k < 16) { kind = "b"; model = ", \"model\": \"llama-3.1-70b\"" }
        else if (k < 19) { kind = "n"; model = "" }
        else { kind = "x"; model = ", \"model\": \"qwen3-32b\"" }
        s = i % 40
        printf "{\"id\": \"%s%d\", \"arrival_s\": %.2f, \"input_tokens\": %d, \"output_tokens\": %d, \"block_hashes\": [%d, %d], \"hash_block_size\": 16%s}\n",
          kind, i, i * 0.01, 200 + (i * 37) % 1800, 20 + (i * 53) % 400, s + 1, 1000 + s * 3 + int(i / 40) % 3, model
      }
    }' > "$workload"
    ;;
  pd | pd_node)
    cluster=$source/cluster_configs/pd_llama8b.yaml
    if [[ $fleet == pd_node ]]; then
      sed -e 's/^    nodes: 2 .*/    nodes: 2\n    placement: spread/' \
        -e 's/^  decode_policy: \(.*\)/  decode_policy: \1\n  decode_scope: node/' \
        "$cluster" > "$work/pd_node.yaml"
      grep -q '^    placement: spread$' "$work/pd_node.yaml"
      grep -q '^  decode_scope: node$' "$work/pd_node.yaml"
      cluster=$work/pd_node.yaml
    fi
    workload=$work/pd.jsonl
    expected_rows=1000 expected_instances=10
    # 50 requests/s for 20 s of long prompts; 30 conversations share prefixes.
    awk 'BEGIN {
      for (i = 0; i < 1000; i++) {
        s = i % 30
        printf "{\"id\": \"p%d\", \"arrival_s\": %.2f, \"input_tokens\": %d, \"output_tokens\": %d, \"block_hashes\": [%d, %d], \"hash_block_size\": 16}\n",
          i, i * 0.02, 500 + (i * 389) % 3500, 10 + (i * 53) % 300, s + 1, 1000 + s * 3 + int(i / 30) % 3
      }
    }' > "$workload"
    ;;
  moe_dp)
    cluster=$source/cluster_configs/moe_dp_ep.yaml
    workload=$work/moe.jsonl
    expected_rows=800 expected_instances=4
    # 40 requests/s for 20 s; 25 conversations share prefixes.
    awk 'BEGIN {
      for (i = 0; i < 800; i++) {
        s = i % 25
        printf "{\"id\": \"m%d\", \"arrival_s\": %.3f, \"input_tokens\": %d, \"output_tokens\": %d, \"block_hashes\": [%d, %d], \"hash_block_size\": 16}\n",
          i, i * 0.025, 100 + (i * 389) % 2500, 10 + (i * 53) % 300, s + 1, 1000 + s * 3 + int(i / 25) % 3
      }
    }' > "$workload"
    ;;
  *)
    echo "unknown fleet '$fleet' (default, independent, multi_model, pd, pd_node, moe_dp)"
    exit 2
    ;;
esac
sed -e "s/^  policy: .*/  policy: $policy/" -e "s/^  capacity_weighted: .*/  capacity_weighted: $weighted/" \
  "$cluster" > "$work/fleet.yaml"
grep -q "^  policy: $policy$" "$work/fleet.yaml"
grep -q "^  capacity_weighted: $weighted$" "$work/fleet.yaml"

run() {  # name, then the launcher words (if any) before fleetsim
  local name=$1
  shift
  "$@" "$fleetsim" run --quiet --seed 5 --cluster "$work/fleet.yaml" --workload "$workload" \
    --output "$work/$name.h5" $extra
  "$fleetsim" export --csv "$work/$name.h5" > /dev/null
}

extra=""
run single
rows=$(($(wc -l < "$work/single.requests.csv") - 1))
[[ $rows -eq $expected_rows ]] || { echo "expected $expected_rows request rows, got $rows"; exit 1; }
instances=$(($(wc -l < "$work/single.instances.csv") - 1))
[[ $instances -eq $expected_instances ]] ||
  { echo "expected $expected_instances instance rows, got $instances"; exit 1; }
used=$(tail -n +2 "$work/single.requests.csv" | cut -d, -f3 | grep -vx -- -1 | sort -u | wc -l)
echo "$fleet fleet, $policy (capacity_weighted: $weighted): $rows requests on $used instances"

if [[ $fleet == multi_model ]]; then
  # /requests: id,name,instance,...,state,reason; instances 0-3 serve the 70B, 4-19 the 8B.
  misrouted=$(awk -F, 'NR > 1 {
      kind = substr($2, 1, 1); instance = $3; state = $(NF - 1); reason = $NF
      if (kind == "a" && (instance < 4 || instance > 19)) print
      if (kind == "b" && (instance < 0 || instance > 3)) print
      if (kind == "n" && instance < 0) print
      if (kind == "x" && (instance != -1 || state != "rejected" || reason != "no_model")) print
    }' "$work/single.requests.csv" | head -3)
  if [[ -n $misrouted ]]; then
    echo "requests on the wrong groups:"
    echo "$misrouted"
    exit 1
  fi
  unserved=$(grep -c ',x[0-9]*,' "$work/single.requests.csv" || true)
  for row in llama70b-h100 llama8b-h100 llama8b-a100 model:llama-3.1-70b model:llama-3.1-8b fleet; do
    grep -q "^$row," "$work/single.summary.csv" || { echo "/summary has no row '$row'"; exit 1; }
  done
  echo "  every request on its model's groups; $unserved for qwen3-32b rejected (no_model)"
fi

if [[ $fleet == pd || $fleet == pd_node ]]; then
  # /requests: ..., prefill_instance, decode_instance, transfer_start_ns, transfer_end_ns,
  # transfer_bytes, state, reason. Instances 0-3 prefill, 4-9 decode. Every request that
  # reached a decode instance came from a prefill one, and its times are ordered: arrival
  # at the gateway < transfer start < transfer end < first token at the client <= finish.
  broken=$(awk -F, 'NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
      {
        instance = $col["instance"]; p = $col["prefill_instance"]; d = $col["decode_instance"]
        start = $col["transfer_start_ns"]; end = $col["transfer_end_ns"]; state = $col["state"]
        if (d >= 0) {
          if (p < 0 || p > 3 || d < 4 || d > 9 || d != instance || $col["transfer_bytes"] <= 0) print
          if (!($col["arrival_ns"] < start && start < end)) print
          if (state == "finished" && !(end < $col["first_token_ns"] && $col["first_token_ns"] <= $col["finish_ns"])) print
        } else if (instance >= 0 && (p != instance || p > 3 || state == "finished")) print
      }' "$work/single.requests.csv" | head -3)
  if [[ -n $broken ]]; then
    echo "requests that broke the prefill/decode path:"
    echo "$broken"
    exit 1
  fi
  handed=$(awk -F, 'NR == 1 { for (c = 1; c <= NF; ++c) if ($c == "decode_instance") d = c; next }
      $d >= 0' "$work/single.requests.csv" | wc -l)
  [[ $handed -gt 0 ]] || { echo "no request reached a decode instance"; exit 1; }
  echo "  $handed requests went from a prefill to a decode instance, in order"
fi

if [[ $fleet == pd_node ]]; then
  # /instances: id, ..., node; every handed-over request stays on its prefill node, and
  # both nodes hand requests over.
  away=$(awk -F, 'FNR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
      FILENAME ~ /instances/ { node[$col["id"]] = $col["node"]; next }
      $col["decode_instance"] >= 0 {
        p = $col["prefill_instance"]; d = $col["decode_instance"]
        if (node[p] != node[d]) print; else used[node[p]] = 1
      }
      END { if (!(0 in used) || !(1 in used)) print "not both nodes handed requests over" }' \
    "$work/single.instances.csv" "$work/single.requests.csv" | head -3)
  if [[ -n $away ]]; then
    echo "requests decoded off their prefill node:"
    echo "$away"
    exit 1
  fi
  echo "  every hand-off stayed on its node, on both nodes"
fi

if [[ $fleet == moe_dp ]]; then
  # Instances 0-1 are TP 2 (dp_rank -1), 2-3 DP 2 (dp_rank 0 or 1, both used on each).
  bad=$(awk -F, 'NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
      {
        i = $col["instance"]; r = $col["dp_rank"]
        if (i >= 0 && i <= 1 && r != -1) print
        if (i >= 2 && (r < 0 || r > 1)) print
        if (i >= 2) used[i "," r] = 1
      }
      END { for (i = 2; i <= 3; ++i) for (r = 0; r <= 1; ++r) if (!((i "," r) in used)) print "instance " i " rank " r " served nothing" }' \
    "$work/single.requests.csv" | head -3)
  if [[ -n $bad ]]; then
    echo "requests with a wrong dp_rank:"
    echo "$bad"
    exit 1
  fi
  echo "  every request on a DP instance names its DP rank; both ranks of each served"
fi

same_at_layouts "$work" 1:1 2:1 2:2 3:1 4:2
