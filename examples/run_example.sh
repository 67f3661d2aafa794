#!/usr/bin/env bash
# Converts the dynamic-shape model (three input shapes) with the rknnxx tool, then runs an
# example on it. Exit 77 (skipped) when tests/models/fetch.sh has not made the ONNX model.
#   run_example.sh RKNNXX_TOOL EXAMPLE CONFIG WORKDIR
set -eu
tool=$1 example=$2 config=$3 work=$4
# In a cross build meson runs this script natively and names its exe_wrapper (qemu) here.
read -r -a wrap <<<"${MESON_EXE_WRAPPER:-}"
models=${RKNNXX_MODELS:-$(cd "$(dirname "$0")/.." && pwd)/build/models}
onnx=$models/dyn/dyncnn.onnx
if [ ! -f "$onnx" ]; then
  echo "skipped: $onnx is missing; run tests/models/fetch.sh"
  exit 77
fi
mkdir -p "$work"
model=$work/$(basename "$example").hrknn
if ! ${wrap[@]+"${wrap[@]}"} "$tool" convert "$onnx" -c "$config" -o "$model" >"$model.log" 2>&1; then
  echo "rknnxx convert $onnx failed:"
  tail -n 30 "$model.log"
  exit 1
fi
exec ${wrap[@]+"${wrap[@]}"} "$example" "$model"
