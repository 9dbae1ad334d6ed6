#!/usr/bin/env bash
# A fleet of 27B hybrids with MTP speculation (k = 2, drawn acceptance) gives identical
# /requests, /instances, /summary and /timeseries without mpirun, at 2 threads, and at
# 2 ranks x 1 and 2 threads (each request's draws come from its own stream); every request
# is settled once, and /steps counts drafts and accepted ones with accepted <= drafted.
#   speculative_determinism.sh <fleetsim> <mpiexec>
set -euo pipefail
source "$(dirname "$0")/same_tables.sh"
fleetsim=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/fleet.yaml" <<'YAML'
name: speculative_fleet
node_pools:
  - {name: h200, hardware: H200-SXM, nodes: 1}
instance_groups:
  - name: qwen27b-mtp
    model: qwen3.8-27b
    pool: h200
    bundle: analytic
    tp: 1
    replicas: 4
    engine:
      speculative_config: {method: mtp, num_speculative_tokens: 2, acceptance: [0.8, 0.5]}
gateways: {count: 2, policy: least_outstanding}
YAML
cat > "$work/traffic.yaml" <<'YAML'
generator:
  seed: 11
  num_requests: 400
  arrivals: {process: poisson, rate_per_s: 40.0}
  input_tokens: {distribution: lognormal, median: 400, sigma: 0.8, min: 16, max: 4000}
  output_tokens: {distribution: lognormal, median: 120, sigma: 0.7, min: 4, max: 800}
YAML

run() {  # name, then the launcher words (if any) before fleetsim
  local name=$1
  shift
  "$@" "$fleetsim" run --quiet --seed 3 --cluster "$work/fleet.yaml" --workload "$work/traffic.yaml" \
    --trace-steps --output "$work/$name.h5" $extra
  "$fleetsim" export --csv "$work/$name.h5" > /dev/null
}

extra=""
run single
rows=$(($(wc -l < "$work/single.requests.csv") - 1))
[[ $rows -eq 400 ]] || { echo "expected 400 request rows, got $rows"; exit 1; }
ids=$(tail -n +2 "$work/single.requests.csv" | cut -d, -f1 | sort -u | wc -l)
[[ $ids -eq 400 ]] || { echo "expected 400 distinct requests, got $ids"; exit 1; }
# /steps: the draft_tokens and accepted_tokens columns, by name.
read -r drafted accepted < <(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { d += $col["draft_tokens"]; a += $col["accepted_tokens"]
    if ($col["accepted_tokens"] > $col["draft_tokens"]) bad = 1 }
  END { if (bad) print -1, -1; else print d + 0, a + 0 }' "$work/single.steps.csv")
[[ $drafted -gt 0 ]] || { echo "no drafts in /steps (drafted $drafted)"; exit 1; }
[[ $accepted -gt 0 && $accepted -lt $drafted ]] ||
  { echo "accepted $accepted of $drafted drafts: expected some, not all"; exit 1; }
echo "400 requests, each once; /steps: $accepted of $drafted drafts accepted"

same_at_layouts "$work" 1:2 2:1 2:2
