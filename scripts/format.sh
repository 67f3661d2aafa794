#!/usr/bin/env bash
# Every C and C++ file of the project follows .clang-format (clang-format 16).
#   scripts/format.sh          reformats the tree in place
#   scripts/format.sh --check  changes nothing; names the files that differ and fails if any does
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
command -v clang-format-16 >/dev/null || { echo "format: clang-format-16 is missing (apt-get install clang-format-16)"; exit 2; }
mapfile -t files < <(git ls-files '*.hpp' '*.cpp' '*.h' '*.c' | grep -v '^subprojects/')
if [ "${1:-}" = --check ]; then
  # One clang-format per file, on every core: the check is the first step of every test run.
  # shellcheck disable=SC2016
  mapfile -t differing < <(printf '%s\0' "${files[@]}" | xargs -0 -n 16 -P "$(nproc)" sh -c \
    'for f; do clang-format-16 --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done' sh | sort)
  if [ ${#differing[@]} -gt 0 ]; then
    printf 'format: %s differs from .clang-format (run scripts/format.sh)\n' "${differing[@]}"
    echo "format: ${#differing[@]} of ${#files[@]} files differ"
    exit 1
  fi
  echo "format: ${#files[@]} files follow .clang-format"
else
  clang-format-16 -i "${files[@]}"
fi
