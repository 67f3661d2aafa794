#!/usr/bin/env bash
# Builds the model-file / CONFIG.json fuzz target with clang++-16 (libFuzzer + ASan + UBSan) and runs it
# for a bounded time over seeds that the target itself writes (a minimal and a full model file, three
# configs), so nothing binary is committed.
#   tests/fuzz/run_model_file.sh [WORK_DIR [SECONDS]]     defaults: build/fuzz-model-file 45
# The last line is "fuzz-model-file: 1 passed, 0 failed", or "fuzz-model-file: 0 passed, 1 failed" after
# the failure (the crashing input is kept under WORK_DIR/artifacts).
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-$root/build/fuzz-model-file}
seconds=${2:-45}
mkdir -p "$work/corpus" "$work/artifacts"
fail() { echo "$1"; echo "fuzz-model-file: 0 passed, 1 failed"; exit 1; }

command -v clang++-16 >/dev/null || fail "fuzz-model-file: clang++-16 not found (apt-get install clang-16 libclang-rt-16-dev)"
sources=("$root/host/convert/model_file.cpp" "$root/host/convert/config_json.cpp")
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -I "$root/include" -I "$root/host")
bin=$work/model_file_fuzz
clang++-16 "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "$root/tests/fuzz/model_file_fuzz.cpp" "${sources[@]}" -lfmt -o "$bin" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "fuzz-model-file: build failed"; }
clang++-16 "${flags[@]}" -DMODEL_FILE_FUZZ_SEEDS \
  "$root/tests/fuzz/model_file_fuzz.cpp" "${sources[@]}" -lfmt -o "$work/write_seeds" >>"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "fuzz-model-file: seed writer build failed"; }
"$work/write_seeds" "$work/corpus" || fail "fuzz-model-file: writing the seeds failed"

# A JSON dictionary helps the config half past the key names.
dict=$work/config.dict
{
  for k in mean_values std_values quant_img_RGB2BGR quantized_dtype quantized_algorithm quantized_method \
           float_dtype optimization_level target_platform custom_string remove_weight compress_weight \
           single_core_mode model_pruning op_target dynamic_input quantize_weight remove_reshape sparse_infer \
           enable_flash_attention auto_hybrid_cos_thresh auto_hybrid_euc_thresh memory_plan_strategy compute_order \
           rk3588 rk3576 rv1106 rk2118 w8a8 w4a16 w8a16 w16a16i_dfp normal mmse kl_divergence gdq layer channel group32 group48 \
           BestFit DepthFirst; do
    echo "\"\\\"$k\\\"\""
  done
  printf '%s\n' '"true"' '"false"' '"null"' '"[["' '"]]"' '"info"' '"conf"' '"prep"' '"dyns"' '"qnt8"' '"onnx"' '"RKNNXXHM"'
} >"$dict"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
start=$(date +%s)
"$bin" "$work/corpus" -dict="$dict" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$work/artifacts/" -print_final_stats=1 >"$work/fuzz.log" 2>&1
rc=$?
grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log"
echo "fuzz-model-file: ran $(( $(date +%s) - start ))s"
if [ $rc -ne 0 ]; then
  grep -E -A40 'ERROR: |runtime error|deadly signal|uncaught|property failed|Test unit written' "$work/fuzz.log" | head -n 80
  fail "fuzz-model-file: model_file_fuzz failed (exit $rc), log $work/fuzz.log, crash input in $work/artifacts"
fi
echo "fuzz-model-file: 1 passed, 0 failed"
