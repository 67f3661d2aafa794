#!/usr/bin/env bash
# Times the host engine against ONNX Runtime on the same models, inputs and thread counts, and
# prints the ratio engine / ONNX Runtime per case (below 1: the engine is faster).
#
#   benchmarks/compare.sh [--engine PATH] [--threads "1 2"] [--warmup W] [--runs R] [CASE ...]
#
# CASE: reference cases of tests/models (default: the seven real models). The models and inputs
# come from $RKNNXX_MODELS (default <repo>/build/models), made by tests/models/fetch.sh.
# --engine: the engine's benchmark program (default build/release/benchmarks/engine_bench, the
# optimised build: sanitizer builds are not for timing). Until it exists this prints the ONNX
# Runtime times alone, says so, and exits 0. Its contract is in benchmarks/README.md.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
engine=$root/build/release/benchmarks/engine_bench
threads="1 2"
warmup=3
runs=20
cases=()
while [ $# -gt 0 ]; do
  case $1 in
    --engine) engine=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: error: unknown option $1" >&2; exit 2 ;;
    *) cases+=("$1"); shift ;;
  esac
done
[ ${#cases[@]} -gt 0 ] || cases=(resnet18 mobilenet_v2 mobilenet_v3_small squeezenet1_1 ocr_det ocr_rec ocr_cls)

have_engine=1
if [ ! -x "$engine" ]; then
  have_engine=0
  echo "compare.sh: engine benchmark not built yet ($engine): timing ONNX Runtime alone."
  echo "compare.sh: build it with: meson setup build/release --buildtype=release && ninja -C build/release benchmarks/engine_bench"
fi

median_of() { node -e 'process.stdout.write(String(JSON.parse(process.argv[1]).median_ms))' "$1"; }

printf '%-20s %7s %10s %10s %8s\n' case threads ort_ms engine_ms ratio
status=0
for c in "${cases[@]}"; do
  for t in $threads; do
    common=(--case "$c" --threads "$t" --warmup "$warmup" --runs "$runs")
    if ! ort_json=$(node "$root/benchmarks/ort_bench.mjs" "${common[@]}"); then
      printf '%-20s %7s %10s\n' "$c" "$t" "failed"; status=1; continue
    fi
    ort_ms=$(median_of "$ort_json")
    engine_ms=- ratio=-
    if [ $have_engine = 1 ]; then
      if engine_json=$("$engine" "${common[@]}") && engine_ms=$(median_of "$engine_json"); then
        ratio=$(node -e 'process.stdout.write((process.argv[1] / process.argv[2]).toFixed(2))' "$engine_ms" "$ort_ms")
      else
        engine_ms=failed; status=1
      fi
    fi
    printf '%-20s %7s %10s %10s %8s\n' "$c" "$t" "$ort_ms" "$engine_ms" "$ratio"
  done
done
exit $status
