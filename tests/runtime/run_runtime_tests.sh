#!/usr/bin/env bash
# Converts the models the runtime tests need into WORKDIR, then runs the tests on the host
# runtime. Exit 77 (skipped) when tests/models/fetch.sh has not made the ONNX models; the
# tests that need no model still run first.
#   run_runtime_tests.sh RKNNXX_TOOL TEST_PROGRAM WORKDIR [doctest args...]
set -u
tool=$1 program=$2 work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
models=${RKNNXX_MODELS:-$here/../../build/models}
mkdir -p "$work"
missing=0
if [ -f "$models/dyn/dyncnn.onnx" ] && [ -f "$models/dyn/two_inputs.onnx" ]; then
  "$tool" convert "$models/dyn/dyncnn.onnx" -c "$here/dyncnn_dynamic.json" -o "$work/dyncnn.hrknn" >/dev/null || exit 1
  "$tool" convert "$models/dyn/two_inputs.onnx" -c "$here/two_inputs.json" -o "$work/two_inputs.hrknn" >/dev/null || exit 1
  export RKNNXX_TEST_MODEL_DIR=$work
else
  echo "the ONNX test models are missing ($models/dyn): model tests skipped; run tests/models/fetch.sh"
  missing=1
  export RKNNXX_TEST_MODEL_DIR=
fi
export RKNNXX_RUNTIME=host
"$program" "$@"
rc=$?
if [ $rc -eq 0 ] && [ $missing -eq 1 ]; then exit 77; fi
exit $rc
