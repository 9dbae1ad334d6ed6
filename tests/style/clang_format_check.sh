#!/usr/bin/env bash
# Every C++ file of the repository is as clang-format (with the repository's .clang-format)
# writes it; a file that is not fails the test, naming the file and the first lines that
# differ. Fix with: clang-format -i FILE (scripts/install-deps.sh installs clang-format).
#   clang_format_check.sh <source dir>
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format is not installed (scripts/install-deps.sh)"; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h')
else
  mapfile -t files < <(find sim comm tests -name '*.cc' -o -name '*.h' | sort)
fi
bad=0
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then
    echo "not clang-formatted: $f"
    diff <(clang-format --style=file "$f") "$f" | head -6 || true
    bad=$((bad + 1))
  fi
done
echo "clang-format: ${#files[@]} files, $bad not formatted"
[[ $bad -eq 0 ]]
