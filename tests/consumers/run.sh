#!/usr/bin/env bash
# The README's install command as a packager runs it, and what users build against the result.
# Prints its own "N passed, N failed".
#   tests/consumers/run.sh WORKDIR [RELEASE_BUILD]
# 1. Installs two ways into prefixes under WORKDIR: the full package and --buildtype=plain (headers only:
#    -Dhost_runtime=false). The full package is RELEASE_BUILD when given (a --buildtype=release tree that
#    scripts/test.sh has already built: a third full build with the default options would add six minutes
#    of CI for compiler flags alone), else one built here with the default options. Against each installed
#    tree it builds a CMake project (find_package) and a pkg-config one.
# 2. In the full install: runs the installed `rknnxx`, an installed-package C++ application, C
#    programs linked with the installed host runtime and the installed Python package, all without any environment variable
#    (RKNNXX_RUNTIME, LD_LIBRARY_PATH); pkg-config --define-prefix on a relocated (DESTDIR) copy.
# 3. A Meson project with rknnxx as a subproject; for aarch64, the installed package's consumer
#    cross-built with the shipped CMake toolchain file and run under qemu.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mkdir -p "$1" && cd "$1" && pwd)
release_build=${2:-}
passed=0 failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@" >"$work/$name.log" 2>&1; then passed=$((passed + 1)); echo "ok: $name"
  else failed=$((failed + 1)); echo "FAILED: $name"; tail -n 30 "$work/$name.log"; return 1; fi
}
prefix_of() { echo "$work/prefix-$1"; }  # where variant $1 is installed

install_package() {  # install_package VARIANT [meson setup args]: "meson setup build && meson install -C build"
  local variant=$1; shift
  rm -rf "$work/build-$variant" "$(prefix_of "$variant")"
  meson setup "$work/build-$variant" "$root" --prefix="$(prefix_of "$variant")" "$@" &&
    meson install -C "$work/build-$variant" --quiet
}
install_prebuilt() {  # install_prebuilt VARIANT BUILD_DIR: into the prefix BUILD_DIR was configured with (test.sh: under build/)
  local prefix
  prefix=$(meson introspect "$2" --buildoptions |
    /usr/bin/python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))') &&
    meson install -C "$2" --quiet && ln -sfn "$prefix" "$(prefix_of "$1")"
}
cmake_consumer() {  # cmake_consumer VARIANT
  rm -rf "$work/cmake-$1"
  cmake -S "$root/tests/consumers/cmake" -B "$work/cmake-$1" -DCMAKE_PREFIX_PATH="$(prefix_of "$1")" &&
    cmake --build "$work/cmake-$1" && "$work/cmake-$1/consumer" | grep -q '^rknnxx '
}
pkgconfig_consumer() {  # pkgconfig_consumer VARIANT
  local pcdir
  pcdir=$(dirname "$(find -L "$(prefix_of "$1")" -name rknnxx.pc | head -n 1)")
  # shellcheck disable=SC2046
  g++ -std=c++20 "$root/tests/consumers/consumer.cpp" -o "$work/pc-consumer-$1" \
      $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs rknnxx) &&
    "$work/pc-consumer-$1" | grep -q '^rknnxx '
}
if [ -n "$release_build" ]; then full=release full_build=$release_build install_full=(install_prebuilt release "$release_build")
else full=defaults full_build=$work/build-defaults install_full=(install_package defaults); fi
stage=$work/stage  # a DESTDIR copy of the full install, as a package build stages it
stage_package() {
  rm -rf "$stage"
  meson install -C "$full_build" --destdir "$stage" --quiet
}
pkgconfig_define_prefix() {  # relocated: the include path follows the .pc file
  local pcfile cflags
  pcfile=$(find "$stage" -name rknnxx.pc | head -n 1)
  cflags=$(PKG_CONFIG_PATH=$(dirname "$pcfile") pkg-config --define-prefix --cflags rknnxx) || return 1
  echo "cflags: $cflags"
  [[ " $cflags " == *" -I$stage$prefix/include "* ]] && [ -f "$stage$prefix/include/rknnxx/rknn.hpp" ]
}
meson_consumer() {
  rm -rf "$work/meson-build"
  meson setup "$work/meson-build" "$root/tests/consumers/meson" && ninja -C "$work/meson-build" &&
    "$work/meson-build/consumer" | grep -q '^rknnxx '
}
prefix=  # the full install's prefix, resolved once it is installed (install_prebuilt links to it)
env_free() { env -u RKNNXX_RUNTIME -u LD_LIBRARY_PATH -u RKNNXX_HOST_RUNTIME_PATH "$@"; }
installed_version() {
  env_free "$prefix/bin/rknnxx" --version | tee /dev/stderr | grep -q '^rknnxx [0-9]'
}
not_a_model=$work/not_a_model.onnx
printf '\x08\x07not a model' >"$not_a_model"
installed_inspect() {  # the runtime was found and loaded: it explains why the file is refused
  local out
  out=$(env_free "$prefix/bin/rknnxx" inspect "$not_a_model" 2>&1)
  echo "$out"
  [[ $out == *"on runtime $prefix/"*"librknnxx_host.so"* && $out == *"looks like an ONNX model; convert it"* ]]
}
installed_inspect_model() {  # convert and inspect a real model with the installed tool, when one was made
  local onnx=$root/build/models/dyn/dyncnn.onnx out
  [ -f "$onnx" ] || { echo "skipped: $onnx is missing (tests/models/fetch.sh)"; return 0; }
  echo '{"target_platform": "rk3588", "dynamic_input": [[[1, 3, 64, 64]]]}' >"$work/dyncnn.json"
  env_free "$prefix/bin/rknnxx" convert "$onnx" -c "$work/dyncnn.json" -o "$work/dyncnn.hrknn" &&
    out=$(env_free "$prefix/bin/rknnxx" inspect "$work/dyncnn.hrknn") && echo "$out" &&
    [[ $out == *"runtime:  host ($prefix/"* && $out == *"target:   rk3588"* ]]
}
# aarch64: the installed package's consumer, cross-built with the shipped CMake toolchain file and run
# under qemu; with the aarch64 host runtime of the aarch64 build configuration (build/aarch64, when
# it was built), an application that loads it and gets its explanation of a refused file.
qemu_aarch64=(qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
aarch64_consumer() {
  rm -rf "$work/cmake-aarch64"
  cmake -S "$root/tests/consumers/cmake" -B "$work/cmake-aarch64" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_TOOLCHAIN_FILE="$root/cross/aarch64-linux-gnu.cmake" &&
    cmake --build "$work/cmake-aarch64" && file "$work/cmake-aarch64/consumer" | grep -q aarch64 &&
    "${qemu_aarch64[@]}" "$work/cmake-aarch64/consumer" | grep -q '^rknnxx '
}
aarch64_runtime_consumer() {
  local runtime=${RKNNXX_AARCH64_HOST_RUNTIME:-$root/build/aarch64/host/runtime/librknnxx_host.so} out
  [ -f "$runtime" ] || { echo "skipped: no aarch64 host runtime at $runtime (configure build/aarch64)"; return 0; }
  # shellcheck disable=SC2046
  aarch64-linux-gnu-g++ -std=c++20 "$root/tests/consumers/runtime_consumer.cpp" -o "$work/runtime-consumer-aarch64" \
      -I"$prefix/include" $(PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config --cflags --libs fmt) \
      -ldl -pthread &&
    out=$(RKNNXX_RUNTIME=$runtime RKNN_LOG_LEVEL=0 "${qemu_aarch64[@]}" "$work/runtime-consumer-aarch64" "$not_a_model") &&
    echo "$out" && [[ $out == *"runtime: $runtime"* && $out == *"the runtime says: "*"ONNX"* ]]
}
installed_pcdir() { dirname "$(find "$prefix" -name "$1.pc" | head -n 1)"; }
installed_cpp_consumer() {  # header-only rknnxx from the installed package; its loader finds the runtime
  local out
  # shellcheck disable=SC2046
  g++ -std=c++20 "$root/tests/consumers/runtime_consumer.cpp" -o "$work/runtime-consumer" \
      $(PKG_CONFIG_PATH=$(installed_pcdir rknnxx) pkg-config --cflags --libs rknnxx) &&
    out=$(env_free "$work/runtime-consumer" "$not_a_model") && echo "$out" &&
    [[ $out == *"runtime: $prefix/"* && $out == *"the runtime says: "*"ONNX"* ]]
}
installed_c_consumer_pkgconfig() {  # a C program linked with the installed host runtime
  local pc libdir
  pc=$(installed_pcdir rknnxx-host)
  libdir=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir rknnxx-host) &&
    # shellcheck disable=SC2046
    gcc -std=c11 -Wall -Werror "$root/tests/consumers/host_runtime_consumer.c" -o "$work/c-consumer" \
        $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs rknnxx-host) -Wl,-rpath,"$libdir" &&
    RKNN_LOG_LEVEL=0 env_free "$work/c-consumer"
}
installed_c_consumer_cmake() {
  rm -rf "$work/cmake-host-build"
  cmake -S "$root/tests/consumers/cmake_host" -B "$work/cmake-host-build" -DCMAKE_PREFIX_PATH="$prefix" &&
    cmake --build "$work/cmake-host-build" && RKNN_LOG_LEVEL=0 env_free "$work/cmake-host-build/host_consumer"
}
installed_python() {  # the Python package in the install's site-packages: it loads the installed host runtime
  local native site
  native=$(find "$prefix" -name '_native*.so' -path '*/rknnxx/*' | head -n 1)
  [ -n "$native" ] || { echo "skipped: no Python package installed (-Dpython, docs/python.md)"; return 0; }
  site=$(dirname "$(dirname "$native")")
  env_free PYTHONPATH="$site" /usr/bin/python3 - "$prefix" "$not_a_model" <<'PY'
import sys
import rknnxx
from rknnlite.api import RKNNLite
prefix, not_a_model = sys.argv[1], sys.argv[2]
runtime = rknnxx.load_runtime()
print(runtime)
assert runtime.kind == "host" and runtime.path.startswith(prefix + "/"), runtime
try:
    rknnxx.Context(not_a_model)
    sys.exit("a file that is not a model was accepted")
except rknnxx.Error as e:
    print(e)
    assert e.call == "rknn_init" and "the runtime says" in str(e) and "ONNX" in str(e)
assert RKNNLite().load_rknn(not_a_model) == 0
PY
}

if check "install-$full" "${install_full[@]}"; then
  prefix=$(readlink -f "$(prefix_of "$full")")
  check installed-rknnxx-version installed_version
  check installed-rknnxx-inspect installed_inspect
  check installed-rknnxx-convert-inspect installed_inspect_model
  check installed-cpp-consumer installed_cpp_consumer
  check installed-c-consumer-pkgconfig installed_c_consumer_pkgconfig
  check installed-c-consumer-cmake installed_c_consumer_cmake
  check installed-python installed_python
  check stage-package stage_package && check pkg-config-define-prefix pkgconfig_define_prefix
  if command -v aarch64-linux-gnu-g++ >/dev/null && command -v qemu-aarch64 >/dev/null; then
    check aarch64-cmake-consumer-qemu aarch64_consumer
    check aarch64-runtime-consumer-qemu aarch64_runtime_consumer
  fi
fi
# A distribution's headers-only package: the header-only library without the host runtime, the tool or
# the examples (the full install above already builds and runs those).
check install-plain install_package plain --buildtype=plain -Dhost_runtime=false -Dexamples=false
for variant in "$full" plain; do
  if [ -d "$(prefix_of "$variant")" ]; then
    check "cmake-find-package-$variant" cmake_consumer "$variant"
    check "pkg-config-$variant" pkgconfig_consumer "$variant"
  fi
done
check meson-subproject meson_consumer
echo "consumers: $passed passed, $failed failed"
# Recorded like a meson test log so that count_tests.py adds these up with the rest.
/usr/bin/python3 "$root/scripts/record_result.py" "$work" consumers "$failed" "consumers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
