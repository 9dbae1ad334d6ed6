#!/usr/bin/env bash
# `fleetsim report` and `fleetsim export --trace` as a user runs them: two runs of the
# default fleet (one with /steps) and the small example sweep, reported on one page; the
# page opened offline in headless Chromium (page_check.cjs: no console or page error,
# nothing fetched, every chart drawn with marks, a screenshot); one SVG and one PNG per
# chart beside it; and the first run's Chrome trace checked against the Trace Event
# Format and the run's own row counts (check_trace.py).
#   tests/report/report_test.sh build/sim/fleetsim SOURCE_DIR
set -euo pipefail
fleetsim=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMPI_MCA_btl_vader_single_copy_mechanism=none

"$fleetsim" run --num-reqs 400 --trace-steps --output a.h5 --quiet
"$fleetsim" run --num-reqs 400 --rate-scale 3 --output b.h5 --quiet
"$fleetsim" sweep "$source_dir/runs/examples/sweep_small.yaml" --output-dir sweep --quiet
"$fleetsim" report a.h5 b.h5 sweep/sweep.h5 --out report | tee report.log

# Every chart the page lists has its SVG and PNG; PNGs are real images.
charts=$(ls report/*.svg | wc -l)
pngs=$(ls report/*.png | wc -l)
grep -q "wrote report/report.html ($charts charts)" report.log ||
  { echo "FAIL: $charts SVGs, but: $(cat report.log)"; exit 1; }
[[ $pngs -eq $charts ]] || { echo "FAIL: $charts SVGs but $pngs PNGs"; exit 1; }
for png in report/*.png; do
  [[ $(head -c 8 "$png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    { echo "FAIL: $png is not a PNG"; exit 1; }
done
# The sweep's ranking and one chart per swept column (tp, policy) are there.
for id in sweep-ranking sweep-axis-tp sweep-axis-policy latency-ttft time-kv_usage \
          instances-busy_fraction groups-goodput_rps; do
  [[ -s report/$id.svg ]] || { echo "FAIL: no $id.svg"; exit 1; }
done
# Self-contained: no script or stylesheet comes from anywhere else.
if grep -Eo '<(script|link)[^>]*(src|href)=' report/report.html; then
  echo "FAIL: the page loads something from outside"; exit 1
fi

node "$source_dir/tests/report/page_check.cjs" report/report.html report/screenshot.png
[[ -n ${FLEETSIM_KEEP_SCREENSHOT:-} ]] && cp report/screenshot.png "$FLEETSIM_KEEP_SCREENSHOT"

# The trace of run a: one slice per /steps row, one span per /requests row.
"$fleetsim" export --trace a.h5 --dir trace
"$fleetsim" export --csv a.h5 --dir csv >/dev/null
steps=$(($(wc -l <csv/a.steps.csv) - 1))
requests=$(($(wc -l <csv/a.requests.csv) - 1))
/usr/bin/python3 "$source_dir/tests/report/check_trace.py" trace/a.trace.json "$steps" "$requests"
# Without /steps: requests only, and a warning that says why.
"$fleetsim" export --trace b.h5 --dir trace 2>warn.txt
grep -q "has no /steps (run with --trace-steps)" warn.txt || { echo "FAIL: no warning"; exit 1; }
/usr/bin/python3 "$source_dir/tests/report/check_trace.py" trace/b.trace.json 0 400
echo "report test passed"
