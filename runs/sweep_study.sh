# shellcheck shell=bash
# Shared by the sweep studies (runs/pcie_pro6000/study.sh, runs/pd_study/study.sh); sourced
# after `here` (the study's folder), `fleetsim` and `out` are set.
# shellcheck disable=SC2154 # here, fleetsim and out are the sourcing script's

# run_sweeps MODE NAME...: runs $here/sweep_NAME.yaml into $out/NAME when MODE is empty;
# with MODE --table-only it runs nothing (the tables are rebuilt from an earlier run's
# output, which must be there). Any other MODE is refused, exit 2.
run_sweeps() {
  local mode=$1 name
  shift
  case $mode in
    --table-only)
      for name in "$@"; do
        if [[ ! -f $out/$name/sweep.csv ]]; then
          echo "$0: --table-only: no earlier run in $out/$name (run once without it)" >&2
          exit 2
        fi
      done
      return
      ;;
    '') ;;
    *) echo "$0: unknown option '$mode' (the only one is --table-only)" >&2; exit 2 ;;
  esac
  for name in "$@"; do
    "$fleetsim" sweep "$here/sweep_$name.yaml" --output-dir "$out/$name" --quiet
  done
}

# point_layouts NAME: writes $out/NAME.layouts, one "point<TAB>layout" line per point of
# $here/sweep_NAME.yaml (as `sweep --list` names them), for the tables' layout column.
point_layouts() {
  "$fleetsim" sweep "$here/sweep_$1.yaml" --list | awk '/^point /' |
    sed -e 's/^point \([0-9]*\): /\1\t/' > "$out/$1.layouts"
}
