#!/usr/bin/env bash
# Runs the libFuzzer harnesses of fuzz/ (docs/FUZZING.md), each for SECONDS (default 60),
# after building them into build-fuzz/ with clang when needed:
#
#   scripts/fuzz.sh                      # every harness, 60 s each
#   scripts/fuzz.sh 600 bundle csv_reader
#   scripts/fuzz.sh --replay             # the saved findings (fuzz/findings/<harness>/): which still fail
#   scripts/fuzz.sh --strict 60          # known findings (fuzz/known_findings.*) fail too
#   scripts/fuzz.sh --list
#
# Prints one line per harness (executions, new corpus entries, crashes); exits 1 when any
# harness crashed, timed out, ran out of memory or leaked, naming the reproducer (a copy is
# kept under build-fuzz/fuzz/artifacts/<harness>/). Seeds are cut at run time from the
# shipped examples and a few lines of the traces in ../shared/data (never copied into the
# repository) into build-fuzz/fuzz/seeds/; what the fuzzer learns stays in
# build-fuzz/fuzz/corpus/ between runs. FLEETSIM_FUZZ_JOBS=N runs N harnesses at a time
# (default 1); FLEETSIM_FUZZ_NICE=N their niceness (default 10); FLEETSIM_FUZZ_DIR=DIR
# builds and works in DIR instead of build-fuzz/ (a long campaign keeps its own binaries
# while build-fuzz/ is rebuilt); CC/CXX pick the compiler (default: the newest clang-NN
# installed, 16 or later). Each harness line gives its edge coverage (cov) and features
# (ft) at the end, as libFuzzer counts them.
set -euo pipefail
# The whole script is one block, which bash reads before running any of it: a campaign of
# hours is not broken by an edit to this file while it runs.
{
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(realpath -m "${FLEETSIM_FUZZ_DIR:-$root/build-fuzz}")
out="$build/fuzz"

all_harnesses=(json_object json_lines csv_reader trace_native trace_vllm_bench trace_azure
               trace_vidur trace_mooncake generator_spec cluster_config model_card bundle
               nccl_tests)

replay=0
strict=0
if [[ "${1:-}" == --strict ]]; then strict=1; shift; fi
case "${1:-}" in
  --list) printf '%s\n' "${all_harnesses[@]}"; exit 0 ;;
  --replay) replay=1; strict=1; shift ;;
  -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
seconds=60
if [[ $replay -eq 0 && "${1:-}" =~ ^[0-9]+$ ]]; then seconds=$1; shift; fi
harnesses=("$@")
[[ ${#harnesses[@]} -gt 0 ]] || harnesses=("${all_harnesses[@]}")
for h in "${harnesses[@]}"; do
  [[ " ${all_harnesses[*]} " == *" $h "* ]] || { echo "fuzz.sh: unknown harness '$h' (--list)" >&2; exit 2; }
done

# --- build ------------------------------------------------------------------------------
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  # clang 14 (Debian 12's default) cannot compile C++20 lambdas capturing structured
  # bindings, which sim/ uses; 16 is the oldest that builds.
  if [[ -z "${CXX:-}" ]]; then
    for v in 22 19 18 17 16; do
      if command -v "clang++-$v" >/dev/null; then export CC="clang-$v" CXX="clang++-$v"; break; fi
    done
  fi
  if [[ -z "${CXX:-}" ]]; then
    echo "fuzz.sh: needs clang 16 or later (scripts/install-deps.sh installs clang-16)" >&2
    # As the suite's test (fuzz_short) it skips, with this message -- except under CI.
    [[ "${FLEETSIM_FUZZ_IN_CTEST:-}" == 1 && "${CI:-}" != true ]] && exit 77
    exit 2
  fi
  mkdir -p "$build/fuzz"
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLEETSIM_FUZZ=ON \
    -DFLEETSIM_BUILD_TESTS=OFF "${launcher[@]}" >"$out.configure.log" 2>&1 ||
    { cat "$out.configure.log" >&2; exit 2; }
fi
cmake --build "$build" --target fleetsim_fuzzers --parallel "${FLEETSIM_FUZZ_BUILD_JOBS:-$(nproc)}" \
  >"$out.build.log" 2>&1 || { tail -40 "$out.build.log" >&2; exit 2; }

# UBSan's checks are built recoverable so that fuzz/known_findings.supp can silence the
# findings already reported; halt_on_error makes every other one fatal.
suppressions="suppressions=$root/fuzz/known_findings.supp:"
[[ $strict -eq 0 ]] || suppressions=""
symbolizer=$(command -v llvm-symbolizer "${CXX:-none}" 2>/dev/null | head -1 || true)
[[ "$symbolizer" == *llvm-symbolizer* ]] || symbolizer=""
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1${symbolizer:+:external_symbolizer_path=$symbolizer}}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-${suppressions}print_stacktrace=1:halt_on_error=1${symbolizer:+:external_symbolizer_path=$symbolizer}}"

# --- replay -----------------------------------------------------------------------------
if [[ $replay -eq 1 ]]; then
  failed=0
  for h in "${harnesses[@]}"; do
    for f in fuzz/findings/"$h"/*; do
      [[ -f "$f" && "$f" != *.md ]] || continue
      if timeout 60 "$out/fuzz_$h" -timeout=20 -rss_limit_mb=2048 "$f" >"$out/replay.log" 2>&1; then
        echo "$h: $f: passes (fixed?)"
      else
        failed=1
        echo "$h: $f: FAILS: $(grep -m1 -E 'ERROR: |runtime error|terminate called|what\(\)|SUMMARY' "$out/replay.log" || echo '?')"
      fi
    done
  done
  exit $failed
fi

# --- seeds ------------------------------------------------------------------------------
seeds="$out/seeds"
rm -rf "$seeds"
for h in "${all_harnesses[@]}"; do mkdir -p "$seeds/$h"; done
traces="$root/../shared/data/traces"
[[ -d "$traces" ]] || echo "fuzz.sh: no $traces; trace seeds come from runs/examples only" >&2
seed() { cat >"$seeds/$1/$2"; }                           # seed HARNESS NAME < text
slice() { [[ -f "$1" ]] && awk -v n="$2" 'length($0) < 600 && c++ < n' "$1"; }  # short lines

native=runs/examples/shared_prefix_sessions.jsonl
head -8 "$native" | seed trace_native examples_head
sed -n '20,30p' "$native" | seed trace_native examples_mid
for f in "$traces"/llmservingsim_vllm_bench/*/*/requests.jsonl; do
  [[ -f "$f" ]] || continue
  name=$(echo "$f" | awk -F/ '{print $(NF-2) "_" $(NF-1)}')
  slice "$f" 4 | seed trace_vllm_bench "$name"
  head -2 "$(dirname "$f")/timeseries.csv" | seed csv_reader "vllm_timeseries_$name"
done
for f in "$traces"/azure_llm_2023/*.csv; do
  [[ -f "$f" ]] && head -8 "$f" | seed trace_azure "$(basename "$f" .csv)"
done
for f in "$traces"/vidur_processed/*.csv; do
  [[ -f "$f" ]] && head -8 "$f" | seed trace_vidur "$(basename "$f" .csv)"
done
for f in "$traces"/mooncake_fast25/*.jsonl; do
  [[ -f "$f" ]] && slice "$f" 6 | seed trace_mooncake "$(basename "$f" .jsonl)"
done
# The JSON readers get every JSON-lines seed, the scanner one line of each.
for h in trace_native trace_vllm_bench trace_mooncake; do
  for f in "$seeds/$h"/*; do
    [[ -s "$f" ]] || continue
    cp "$f" "$seeds/json_lines/${h}_$(basename "$f")"
    head -1 "$f" >"$seeds/json_object/${h}_$(basename "$f")"
  done
done
for f in "$seeds"/trace_azure/* "$seeds"/trace_vidur/*; do
  [[ -f "$f" ]] && cp "$f" "$seeds/csv_reader/$(basename "$f")"
done
for f in runs/examples/*.yaml; do
  grep -q '^generator:' "$f" && cp "$f" "$seeds/generator_spec/"
done
cp cluster_configs/*.yaml "$seeds/cluster_config/"
for f in models/*/config.json; do cp "$f" "$seeds/model_card/$(basename "$(dirname "$f")").json"; done
for f in "$root"/../shared/data/model_configs/*.json; do
  [[ -f "$f" ]] && cp "$f" "$seeds/model_card/"
done
# Bundles: one small complete bundle written here, and the head of each published one.
{
  printf 'model: llama-3.1-8b\nhardware: H100-SXM\nsource: {kind: analytic}\n'
  printf '#@ tp1/dense.csv\nlayer,tokens,time_us\n'
  for k in embedding layernorm qkv_proj o_proj gate_up_proj act_fn down_proj; do
    printf '%s,1,1.01\n%s,1024,11.24\n' "$k" "$k"
  done
  printf '#@ tp1/per_sequence.csv\nlayer,sequences,time_us\n'
  printf 'lm_head,1,5.5\nlm_head,256,133\nsampler,1,5.5\nsampler,256,133\n'
  printf '#@ tp1/attention.csv\nprefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n'
  for c in 0 16; do for kp in 0 16; do for n in 0 1; do for kd in 0 16; do
    if [[ ($c == 0 && $kp != 0) || ($n == 0 && $kd != 0) || ($c == 0 && $n == 0) ||
          ($n != 0 && $kd == 0) ]]; then continue; fi
    echo "$c,$kp,$n,$kd,$((1 + c + n))"
  done; done; done; done
  printf '#@ tp1/moe.csv\ntokens,activated_experts,time_us\n1,1,3\n1,8,9\n64,1,4\n64,8,12\n'
} | seed bundle synthetic_dense
# nccl-tests: an output as all_reduce_perf prints it (2 GPUs), and the older layout
# without the root column.
{
  printf '# nccl-tests version 2.13.11 nccl-headers=22304 nccl-library=22304\n'
  printf '# nThread 1 nGpus 2 minBytes 1024 maxBytes 1048576 step: 4(factor)\n'
  printf '#  Rank  0 Group  0 Pid 42 on node0 device  0 [0x18] NVIDIA H100 80GB HBM3\n'
  printf '#  Rank  1 Group  0 Pid 42 on node0 device  1 [0x2a] NVIDIA H100 80GB HBM3\n'
  printf '#       size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n'
  printf '        1024    256  float   sum    -1  10.2   0.10   0.10      0  10.1   0.10   0.10      0\n'
  printf '     1048576 262144  float   sum    -1  21.7  48.32  48.32      0  21.5  48.77  48.77      0\n'
  printf '# Avg bus bandwidth    : 24.21\n'
} | seed nccl_tests all_reduce
{
  printf '#  Rank  0 Group  0 Pid 42 on node0 device  0 [0x18] NVIDIA A100-SXM4-80GB\n'
  printf '#  Rank  1 Group  0 Pid 42 on node0 device  1 [0x2a] NVIDIA A100-SXM4-80GB\n'
  printf '     4194304 1048576  half  none  55.3  75.85  37.92    N/A  54.9  76.40  38.20    N/A\n'
} | seed nccl_tests all_gather_old_layout
for meta in "$root"/../shared/data/profiles/*/perf/*/*/*/*/meta.yaml; do
  [[ -f "$meta" ]] || continue
  dir=$(dirname "$meta")
  name=$(echo "$dir" | awk -F/ '{print $(NF-3) "_" $(NF-1)}')
  {
    cat "$meta"
    for csv in "$dir"/tp1/*.csv; do
      [[ "$csv" == */skew_fit.csv ]] && continue
      echo "#@ tp1/$(basename "$csv")"
      head -12 "$csv"
    done
  } | seed bundle "$name"
  for csv in "$dir"/tp1/*.csv; do head -6 "$csv" | seed csv_reader "bundle_${name}_$(basename "$csv" .csv)"; done
done

# --- fuzz -------------------------------------------------------------------------------
run_one() {
  local h=$1 log="$out/logs/$1.log" art="$out/artifacts/$1/"
  mkdir -p "$out/corpus/$h" "$art" "$out/logs"
  local start=$SECONDS rc=0
  nice -n "${FLEETSIM_FUZZ_NICE:-10}" timeout $((seconds + 120)) "$out/fuzz_$h" \
    -max_total_time="$seconds" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art" "$out/corpus/$h" "$seeds/$h" >"$log" 2>&1 || rc=$?
  local execs new cov reproducer=""
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  new=$(awk '/stat::new_units_added/ {print $2}' "$log" | tail -1)
  # The last status line's "cov: N ft: M": edges and features reached.
  cov=$(grep -ao 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | awk '{print "cov " $2 ", ft " $4}')
  if [[ $rc -ne 0 && $strict -eq 0 ]]; then
    local known
    known=$(awk -v h="$h" '$1 == h { sub(/^[^ ]+ /, ""); print }' fuzz/known_findings.txt)
    while IFS= read -r pattern; do
      if [[ -n "$pattern" ]] && grep -qF -- "$pattern" "$log"; then
        printf '%-17s %4ss  %9s execs  %5s new  %s  0 crashes (stopped at a known finding: %s)\n' \
          "$h" $((SECONDS - start)) "${execs:-?}" "${new:-?}" "${cov:-cov ?}" "$pattern"
        return 0
      fi
    done <<<"$known"
  fi
  if [[ $rc -ne 0 ]]; then
    reproducer=$(grep -o -E "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //')
    printf '%-17s %4ss  %9s execs  %5s new  %s  CRASH rc=%s  reproducer: %s  log: %s\n' "$h" \
      $((SECONDS - start)) "${execs:-?}" "${new:-?}" "${cov:-cov ?}" "$rc" "${reproducer:-none}" "$log"
    grep -m3 -E '^==[0-9]+==ERROR|runtime error|terminate called|what\(\)|ERROR: libFuzzer' "$log" |
      sed 's/^/    /'
    return 1
  fi
  printf '%-17s %4ss  %9s execs  %5s new  %s  0 crashes\n' "$h" $((SECONDS - start)) "${execs:-?}" \
    "${new:-?}" "${cov:-cov ?}"
}

failed=0
jobs=${FLEETSIM_FUZZ_JOBS:-1}
mkdir -p "$out/logs"  # before a background run_one's output is sent there
if [[ $jobs -le 1 ]]; then
  for h in "${harnesses[@]}"; do run_one "$h" || failed=1; done
else
  pids=()
  for h in "${harnesses[@]}"; do
    run_one "$h" >"$out/logs/$h.line" &
    pids+=($!)
    while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do sleep 1; done
  done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  for h in "${harnesses[@]}"; do cat "$out/logs/$h.line"; done
fi
exit $failed
}
