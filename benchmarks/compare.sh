#!/usr/bin/env bash
# Times one model on three runtimes in one command, with the same inputs and thread counts, and
# prints each one's median against ONNX Runtime's (below 1: faster than ONNX Runtime):
#   engine  the host engine alone, float32 activations (engine_bench);
#   host    the path users take: the model converted by `rknnxx convert` and timed through the C
#           interface with float16 activations, as on a board (`rknnxx bench`: inputs_set + run +
#           outputs_get, the general flow's total).
#
#   benchmarks/compare.sh [--threads "1 2"] [--warmup W] [--runs R] [--build DIR] [--json] [CASE ...]
#   benchmarks/compare.sh --model FILE.onnx [--input NAME=FILE.npy ...] [same options]
#
# CASE: reference cases of tests/models (default: the seven real models), from $RKNNXX_MODELS
# (default <repo>/build/models); missing references are made with tests/models/reference.mjs.
# --model: any ONNX model; inputs without --input get seeded random values of their declared shape
# (benchmarks/bench_inputs.mjs). --build: the optimised build to time (default build/bench,
# configured and built here on first use). --json: one JSON line per case and thread count.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/bench
models=${RKNNXX_MODELS:-$root/build/models}
threads="1 2"
warmup=3
runs=20
json=0
model=
inputs=()
cases=()
usage() { echo "compare.sh: error: $1" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --model) model=$(realpath -m "$2"); shift 2 ;;
    --input) inputs+=(--input "$2"); shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage "unknown option $1" ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ $# -eq 0 ] || usage "unexpected argument $1"
[ -n "$model" ] && [ ${#cases[@]} -gt 0 ] && usage "give cases or --model, not both"
[ -z "$model" ] && [ ${#inputs[@]} -gt 0 ] && usage "--input goes with --model"
[ -n "$model" ] && [ ! -f "$model" ] && usage "no model file $model"
[ -z "$model" ] && [ ${#cases[@]} -eq 0 ] &&
  cases=(resnet18 mobilenet_v2 mobilenet_v3_small squeezenet1_1 ocr_det ocr_rec ocr_cls)
say() { echo "compare.sh: $*" >&2; }

# The optimised build with the two benchmark programs and the host runtime.
engine_bench=$build/benchmarks/engine_bench
tool=$build/tools/rknnxx
if [ ! -x "$engine_bench" ] || [ ! -x "$tool" ] || [ ! -f "$build/host/runtime/librknnxx_host.so" ]; then
  say "building the benchmarks in $build (the first time takes several minutes)"
  if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" -Doptimization=2 -Ddebug=false -Db_ndebug=true -Dtests=false -Dbenchmarks=true \
      -Dexamples=false -Dpython=disabled >"$build.setup.log" 2>&1 ||
      { echo "compare.sh: error: could not configure $build (log: $build.setup.log)" >&2; exit 1; }
  fi
  meson compile -C "$build" engine_bench rknnxx rknnxx_host >"$build.build.log" 2>&1 ||
    { echo "compare.sh: error: could not build in $build (log: $build.build.log)" >&2; exit 1; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { node -e 'let v = JSON.parse(process.argv[1]); for (const k of process.argv[2].split(".")) v = v[k];
                   process.stdout.write(String(v))' "$1" "$2"; }
ratio() { node -e 'process.stdout.write((process.argv[1] / process.argv[2]).toFixed(2))' "$1" "$2"; }

# prepare NAME MODEL [--input NAME=FILE ...]: inputs and config of a model, converted for the host
# runtime; sets model_file, input_args (NAME=FILE ...), input_files (in the model's order), hrknn.
prepare() {
  local name=$1 onnx=$2 dir=$work/$1
  shift 2
  local info
  info=$(node "$root/benchmarks/bench_inputs.mjs" --model "$onnx" --out "$dir" --models "$models" "$@") || return 1
  model_file=$onnx
  mapfile -t input_args < <(node -e 'for (const i of JSON.parse(process.argv[1]).inputs) console.log(`${i.name}=${i.file}`)' "$info")
  mapfile -t input_files < <(node -e 'for (const i of JSON.parse(process.argv[1]).inputs) console.log(i.file)' "$info")
  hrknn=$dir/model.hrknn
  "$tool" convert "$onnx" -c "$(field "$info" config)" -o "$hrknn" >"$dir/convert.log" 2>&1 ||
    { echo "compare.sh: $name: rknnxx convert failed: $(tail -n 1 "$dir/convert.log")" >&2; hrknn=; }
}

# The inputs of a reference case, made if fetch.sh ran with --no-references.
case_inputs() {
  local c=$1 manifest=$models/ref/$1/manifest.json
  if [ ! -f "$manifest" ]; then
    say "making the reference case $c (tests/models/reference.mjs)"
    node "$root/tests/models/reference.mjs" "$models" --case "$c" >"$work/ref-$c.log" 2>&1 ||
      { echo "compare.sh: error: no reference case $c: $(tail -n 1 "$work/ref-$c.log") (run tests/models/fetch.sh)" >&2
        return 1; }
  fi
  node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1]));
           console.log(require("path").join(process.argv[2], m.model));
           for (const i of m.inputs) console.log(`--input\n${i.name}=${require("path").join(process.argv[3], i.file)}`)' \
    "$manifest" "$models" "$models/ref/$c"
}

[ $json = 1 ] || printf '%-20s %7s %9s %9s %9s %12s %10s\n' case threads ort_ms engine_ms host_ms engine/ort host/ort
status=0
report() {  # case threads ort engine host
  local e_ratio=- h_ratio=-
  [[ $3 =~ ^[0-9.]+$ && $4 =~ ^[0-9.]+$ ]] && e_ratio=$(ratio "$4" "$3")
  [[ $3 =~ ^[0-9.]+$ && $5 =~ ^[0-9.]+$ ]] && h_ratio=$(ratio "$5" "$3")
  if [ $json = 1 ]; then
    node -e 'const [c, t, o, e, h, er, hr] = process.argv.slice(1); const num = (x) => (x === "-" || x === "failed" ? null : Number(x));
             console.log(JSON.stringify({case: c, threads: Number(t), ort_ms: num(o), engine_ms: num(e), host_ms: num(h),
                                         engine_vs_ort: num(er), host_vs_ort: num(hr)}))' "$1" "$2" "$3" "$4" "$5" "$e_ratio" "$h_ratio"
  else
    printf '%-20s %7s %9s %9s %9s %12s %10s\n' "$1" "$2" "$3" "$4" "$5" "$e_ratio" "$h_ratio"
  fi
}

run_model() {  # NAME: times model_file / input_args / hrknn at every thread count
  local name=$1 t ort_json ort_ms engine_json engine_ms host_json host_ms
  local feed=()
  for a in "${input_args[@]}"; do feed+=(--input "$a"); done
  for t in $threads; do
    local common=(--threads "$t" --warmup "$warmup" --runs "$runs")
    ort_ms=failed engine_ms=failed host_ms=failed
    if ort_json=$(node "$root/benchmarks/ort_bench.mjs" --model "$model_file" "${feed[@]}" --models "$models" "${common[@]}"); then
      ort_ms=$(field "$ort_json" median_ms)
    else status=1; fi
    if engine_json=$("$engine_bench" --model "$model_file" "${feed[@]}" "${common[@]}"); then
      engine_ms=$(field "$engine_json" median_ms)
    else status=1; fi
    if [ -n "$hrknn" ] && host_json=$(RKNNXX_HOST_THREADS=$t "$tool" bench "$hrknn" -i "${input_files[@]}" \
                                      -w "$warmup" -n "$runs" --no-zero-copy --json); then
      host_ms=$(field "$host_json" general.total.median_ms)
      host_ms=$(node -e 'process.stdout.write(Number(process.argv[1]).toFixed(3))' "$host_ms")
    else status=1; fi
    report "$name" "$t" "$ort_ms" "$engine_ms" "$host_ms"
  done
}

if [ -n "$model" ]; then
  name=$(basename "$model" .onnx)
  prepare "$name" "$model" "${inputs[@]}" || exit 1
  run_model "$name"
else
  for c in "${cases[@]}"; do
    if ! mapfile -t spec < <(case_inputs "$c") || [ ${#spec[@]} -eq 0 ]; then status=1; continue; fi
    prepare "$c" "${spec[0]}" "${spec[@]:1}" || { status=1; continue; }
    run_model "$c"
  done
fi
exit $status
