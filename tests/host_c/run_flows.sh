#!/usr/bin/env bash
# Converts the dynamic-shape test model with three input shapes, then runs the C program
# on it. Exit 77 (skipped) when the test models have not been made (tests/models/fetch.sh).
#   run_flows.sh RKNNXX_TOOL C_PROGRAM CONFIG WORKDIR
set -eu
tool=$1 program=$2 config=$3 work=$4
models=${RKNNXX_MODELS:-$(cd "$(dirname "$0")/../.." && pwd)/build/models}
onnx=$models/dyn/dyncnn.onnx
if [ ! -f "$onnx" ]; then
  echo "skipped: $onnx is missing; run tests/models/fetch.sh"
  exit 77
fi
mkdir -p "$work"
"$tool" convert "$onnx" -c "$config" -o "$work/dyncnn.hrknn"
exec "$program" "$work/dyncnn.hrknn"
