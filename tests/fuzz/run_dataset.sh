#!/usr/bin/env bash
# Builds the calibration dataset parser's fuzz target with clang++-16 (libFuzzer + ASan + UBSan) and
# runs it for a bounded time over a few seeds written here (nothing binary is committed).
#   tests/fuzz/run_dataset.sh [WORK_DIR [SECONDS]]     defaults: build/fuzz-dataset 30
# The last line is "fuzz-dataset: 1 passed, 0 failed" or "fuzz-dataset: 0 passed, 1 failed".
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/fuzz-dataset}
seconds=${2:-30}
mkdir -p "$work/corpus" "$work/artifacts"
fail() { echo "$1"; echo "fuzz-dataset: 0 passed, 1 failed"; exit 1; }

command -v clang++-16 >/dev/null || fail "fuzz-dataset: clang++-16 not found (apt-get install clang-16 libclang-rt-16-dev)"
bin=$work/dataset_fuzz
clang++-16 -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined -Wall -Wextra -Werror -I "$root/include" -I "$root/host" -I "$root/host/engine" \
  "$root/tests/fuzz/dataset_fuzz.cpp" "$root/host/quantize/dataset_text.cpp" -lfmt -o "$bin" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "fuzz-dataset: build failed"; }
printf '\x00a.jpg\nb.npy\n' >"$work/corpus/one_input"
printf '\x01a.jpg b.npy\n\n /x/c.png\td.npy \r\n' >"$work/corpus/two_inputs"
printf '\x02a b\nc d e\n' >"$work/corpus/wrong_count"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$bin" "$work/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$work/fuzz.log" 2>&1
rc=$?
grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log"
if [ $rc -ne 0 ]; then
  grep -E -A40 'ERROR: |runtime error|deadly signal|uncaught|Test unit written' "$work/fuzz.log" | head -n 80
  fail "fuzz-dataset: dataset_fuzz failed (exit $rc), log $work/fuzz.log, crash input in $work/artifacts"
fi
echo "fuzz-dataset: 1 passed, 0 failed"
