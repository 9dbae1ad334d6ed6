#!/usr/bin/env bash
# layering_check refuses the tree forbidden/, naming every violation with its file:line.
#   refuses.sh <layering_check binary> <forbidden/ folder>
set -uo pipefail
check=$1 tree=$2
out=$("$check" "$tree" "$tree/link_graph.txt")
rc=$?
echo "$out"
[[ $rc -eq 1 ]] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
expected=(
  'sim/CMakeLists.txt: fleetsim_low links fleetsim_high: low may not depend on high (docs/DESIGN.md:7)'
  'sim/CMakeLists.txt: fleetsim_low links MPI::MPI_CXX: low may not depend on MPI (docs/DESIGN.md:7)'
  'sim/high/high.h:3: #include "low/low.h": fleetsim_high does not link fleetsim_low'
  'sim/low/low.cc:2: #include "high/internal/detail.h": a header internal to high'
  'sim/low/low.cc:2: #include "high/internal/detail.h": low may not depend on high (docs/DESIGN.md:7)'
  'sim/low/low.h:4: #include "high/high.h": low may not depend on high (docs/DESIGN.md:7)'
  'sim/low/low.h:5: #include <tbb/parallel_for.h>: low may not depend on TBB (docs/DESIGN.md:7)'
  'sim/stray/stray.h: in no part of docs/DESIGN.md'"'"'s table (add a row or a folder)'
  'tests/low/low_test.cc:1: #include "high/high.h": low may not depend on high (docs/DESIGN.md:7)'
  'layering_check: 9 violation(s) of the table of parts in docs/DESIGN.md'
)
for line in "${expected[@]}"; do
  grep -qxF -- "$line" <<<"$out" || { echo "FAIL: missing: $line"; exit 1; }
done
echo "PASS: every violation named"
