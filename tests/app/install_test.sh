#!/usr/bin/env bash
# `cmake --install` gives a fleetsim that works from any folder: the install holds the
# binary and share/fleetsim (model cards, hardware catalog, cluster configs, examples, the
# report's libraries); run from an empty folder with FLEETSIM_HOME unset it simulates the
# default fleet, builds its analytic bundles into $XDG_CACHE_HOME/fleetsim (never into the
# install or the source tree) and writes a report.
#   tests/app/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
source_dir=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
share=$work/prefix/share/fleetsim
for path in bin/fleetsim share/fleetsim/models/llama-3.1-8b/config.json \
            share/fleetsim/cluster_configs/default_fleet.yaml \
            share/fleetsim/cluster_configs/hardware/H100-SXM.yaml \
            share/fleetsim/runs/examples/default_fleet_traffic.yaml \
            share/fleetsim/web/render_images.mjs share/fleetsim/web/vendor/vega/vega.min.js \
            share/fleetsim/web/vendor/vega/LICENSE; do
  [[ -e $work/prefix/$path ]] || { echo "FAIL: the install lacks $path"; exit 1; }
done
# Read-only, as a system install would be: nothing may be written into it.
chmod -R a-w "$work/prefix"
mkdir "$work/elsewhere" "$work/cache"
cd "$work/elsewhere"
unset FLEETSIM_HOME FLEETSIM_CACHE
export XDG_CACHE_HOME=$work/cache
"$work/prefix/bin/fleetsim" run --num-reqs 100 --quiet --output run.h5
"$work/prefix/bin/fleetsim" report run.h5 --images svg --quiet
[[ -s run-report/report.html ]] || { echo "FAIL: no report"; exit 1; }
ls "$work/cache/fleetsim/bundles/llama-3.1-8b/" | grep -q H100-SXM ||
  { echo "FAIL: no analytic bundle in \$XDG_CACHE_HOME/fleetsim"; exit 1; }
chmod -R u+w "$work/prefix"
echo "install test passed"
