#!/usr/bin/env bash
# Builds the ONNX reader fuzz target with clang++-16 (libFuzzer + ASan + UBSan) and runs it
# for a bounded time over a seed corpus of ONNX backend node-test models and tensors taken
# from the installed libonnx-testdata at run time (nothing binary is committed).
#   tests/fuzz/run.sh [WORK_DIR [SECONDS]]     defaults: build/fuzz 60
# The last line is "fuzz: 1 passed, 0 failed" or "fuzz: 0 passed, 1 failed" after the failure.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/fuzz}
seconds=${2:-60}
mkdir -p "$work/corpus" "$work/artifacts"
fail() { echo "$1"; echo "fuzz: 0 passed, 1 failed"; exit 1; }

command -v clang++-16 >/dev/null || fail "fuzz: clang++-16 not found (apt-get install clang-16 libclang-rt-16-dev)"
bin=$work/onnx_reader_fuzz
clang++-16 -std=c++20 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Wall -Wextra -Werror -I "$root/host" \
  "$root/tests/fuzz/onnx_reader_fuzz.cpp" "$root/host/engine/onnx_reader.cpp" \
  -lfmt -o "$bin" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "fuzz: build failed"; }

# Seeds: models covering the message kinds (attributes of every type, subgraphs, initializers,
# sequence/optional types, symbolic dims) and a few serialized tensors.
data=/usr/share/libonnx-testdata/data/node
for t in test_add test_conv_with_strides_padding test_if test_loop11 test_constant test_reshape_negative_dim \
         test_cast_FLOAT_to_STRING test_sequence_insert_at_back test_optional_has_element_empty \
         test_resize_upsample_scales_linear test_constantofshape_int_zeros test_gather_0 test_split_variable_parts_1d \
         test_scan9_sum test_nonmaxsuppression_center_point_box_format; do
  [ -f "$data/$t/model.onnx" ] && cp "$data/$t/model.onnx" "$work/corpus/$t.onnx"
  for pb in "$data/$t"/test_data_set_0/*.pb; do
    [ -f "$pb" ] && cp "$pb" "$work/corpus/$t.$(basename "$pb")"
  done
done
[ -n "$(ls -A "$work/corpus")" ] || echo "fuzz: no seed corpus found under $data; fuzzing from scratch"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$bin" "$work/corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$work/fuzz.log" 2>&1
rc=$?
grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb|INFO: Running with entropic)' "$work/fuzz.log"
if [ $rc -ne 0 ]; then
  grep -E -A40 'ERROR: |runtime error|deadly signal|uncaught|Test unit written' "$work/fuzz.log" | head -n 80
  fail "fuzz: onnx_reader_fuzz failed (exit $rc), log $work/fuzz.log, crash input in $work/artifacts"
fi
echo "fuzz: 1 passed, 0 failed"
