#!/usr/bin/env bash
# Converts the models the runtime tests need into WORKDIR, then runs the tests on the host
# runtime. Exit 77 (skipped) when tests/models/fetch.sh has not made the ONNX models (the tests
# that need no model still run first). A model that fails to convert is reported, its tests are
# skipped, the others run, and the result is a failure.
#   run_runtime_tests.sh RKNNXX_TOOL TEST_PROGRAM WORKDIR [doctest args...]
set -u
tool=$1 program=$2 work=$3
shift 3
# In a cross build meson runs this script natively and names its exe_wrapper (qemu) here.
read -r -a wrap <<<"${MESON_EXE_WRAPPER:-}"
here=$(cd "$(dirname "$0")" && pwd)
models=${RKNNXX_MODELS:-$here/../../build/models}
mkdir -p "$work"
missing=0
failed=0
convert() {  # convert NAME ONNX CONFIG [--dataset DATASET.txt]: WORKDIR/NAME.hrknn, or a report and failed=1
  local name=$1 onnx=$2 config=$3
  shift 3
  rm -f "$work/$name.hrknn"
  if ! ${wrap[@]+"${wrap[@]}"} "$tool" convert "$onnx" -c "$here/$config.json" "$@" -o "$work/$name.hrknn" >"$work/$name.convert.log" 2>&1; then
    echo "converting $onnx failed (its tests are skipped):"
    tail -n 30 "$work/$name.convert.log"
    rm -f "$work/$name.hrknn"
    failed=1
  fi
}
if [ -f "$models/dyn/dyncnn.onnx" ] && [ -f "$models/dyn/two_inputs.onnx" ] && [ -f "$models/vision/squeezenet1_1.onnx" ]; then
  convert dyncnn "$models/dyn/dyncnn.onnx" dyncnn_dynamic
  convert two_inputs "$models/dyn/two_inputs.onnx" two_inputs
  # A static model, for the paths without a shape set (dup, a refused set_input_shapes).
  convert squeezenet "$models/vision/squeezenet1_1.onnx" static_rk3588
  export RKNNXX_TEST_MODEL_DIR=$work
else
  echo "the ONNX test models are missing ($models/dyn, $models/vision): model tests skipped; run tests/models/fetch.sh"
  missing=1
  export RKNNXX_TEST_MODEL_DIR=
fi
# A quantized model needs no fetched file: a small CNN and its calibration set, made here.
if python3 "$here/../host_runtime/make_int8_model.py" "$work/int8"; then
  convert small_cnn_int8 "$work/int8/small_cnn.onnx" small_cnn_int8 --dataset "$work/int8/dataset.txt"
else
  echo "make_int8_model.py failed: the quantized-model tests are skipped"
  failed=1
fi
export RKNNXX_INT8_MODEL_DIR=$work
export RKNNXX_RUNTIME=host
${wrap[@]+"${wrap[@]}"} "$program" "$@"
rc=$?
if [ $rc -ne 0 ]; then exit $rc; fi
if [ $failed -eq 1 ]; then exit 1; fi
if [ $missing -eq 1 ]; then exit 77; fi
exit 0
