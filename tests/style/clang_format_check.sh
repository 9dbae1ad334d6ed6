#!/usr/bin/env bash
# Every C++ file of the repository is as clang-format (with the repository's .clang-format)
# writes it; a file that is not fails the test, naming the file and the lines that differ.
# One clang-format process checks every file (one process per file took minutes of wall
# time on a loaded machine). Fix with: clang-format -i FILE (scripts/install-deps.sh
# installs clang-format).
#   clang_format_check.sh <source dir>
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format is not installed (scripts/install-deps.sh)"; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t listed < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h')
else
  mapfile -t listed < <(find sim comm tests -name '*.cc' -o -name '*.h' | sort)
fi
files=()
for f in "${listed[@]}"; do [[ -f $f ]] && files+=("$f"); done
# clang-format exits non-zero on a file it would change, and on a file it cannot read or a
# bad .clang-format; the first are listed by name below, anything else is printed whole.
if report=$(clang-format --style=file --dry-run --Werror "${files[@]}" 2>&1); then
  echo "clang-format: ${#files[@]} files, 0 not formatted"
  exit 0
fi
mapfile -t bad < <(grep -oE '^[^:]+\.(cc|h):[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u)
if [[ ${#bad[@]} -eq 0 ]]; then
  echo "$report" | head -20
  exit 1
fi
for f in "${bad[@]}"; do
  echo "not clang-formatted: $f"
  diff <(clang-format --style=file "$f") "$f" | head -6 || true
done
echo "clang-format: ${#files[@]} files, ${#bad[@]} not formatted"
exit 1
