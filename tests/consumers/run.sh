#!/usr/bin/env bash
# Builds and runs the consumer projects: CMake and pkg-config against the installed package,
# Meson with rknnxx as a subproject; then installs everything (tool and host runtime) into a real
# prefix and runs the installed `rknnxx`, an installed-package C++ application and C programs
# linked with the installed host runtime, all without any environment variable (RKNNXX_RUNTIME,
# LD_LIBRARY_PATH). Prints its own "N passed, N failed".
#   tests/consumers/run.sh WORKDIR
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mkdir -p "$1" && cd "$1" && pwd)
passed=0 failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@" >"$work/$name.log" 2>&1; then passed=$((passed + 1)); echo "ok: $name"
  else failed=$((failed + 1)); echo "FAILED: $name"; tail -n 30 "$work/$name.log"; return 1; fi
}
stage=$work/stage
install_package() {
  rm -rf "$work/lib-build" "$stage"
  meson setup "$work/lib-build" "$root" -Dtests=false -Dexamples=false -Dbenchmarks=false -Dhost_runtime=false --prefix=/usr/local &&
    meson install -C "$work/lib-build" --destdir "$stage"
}
cmake_consumer() {
  rm -rf "$work/cmake-build"
  cmake -S "$root/tests/consumers/cmake" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$stage/usr/local" &&
    cmake --build "$work/cmake-build" && "$work/cmake-build/consumer" | grep -q '^rknnxx '
}
pkgconfig_consumer() {
  local pcdir
  pcdir=$(dirname "$(find "$stage" -name rknnxx.pc | head -n 1)")
  # shellcheck disable=SC2046
  g++ -std=c++20 "$root/tests/consumers/consumer.cpp" -o "$work/pc-consumer" \
      $(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --cflags --libs rknnxx) &&
    "$work/pc-consumer" | grep -q '^rknnxx '
}
pkgconfig_define_prefix() {  # relocated: the include path follows the .pc file
  local pcfile cflags
  pcfile=$(find "$stage" -name rknnxx.pc | head -n 1)
  cflags=$(PKG_CONFIG_PATH=$(dirname "$pcfile") pkg-config --define-prefix --cflags rknnxx) || return 1
  echo "cflags: $cflags"
  [[ " $cflags " == *" -I$stage/usr/local/include "* ]] && [ -f "$stage/usr/local/include/rknnxx/rknn.hpp" ]
}
meson_consumer() {
  rm -rf "$work/meson-build"
  meson setup "$work/meson-build" "$root/tests/consumers/meson" && ninja -C "$work/meson-build" &&
    "$work/meson-build/consumer" | grep -q '^rknnxx '
}
# Everything, into a real prefix (the compiled-in install libdir must be the real one).
prefix=$work/prefix
env_free() { env -u RKNNXX_RUNTIME -u LD_LIBRARY_PATH -u RKNNXX_HOST_RUNTIME_PATH "$@"; }
install_full() {
  rm -rf "$work/full-build" "$prefix"
  meson setup "$work/full-build" "$root" -Dtests=false -Dexamples=false -Dbenchmarks=false -Dwerror=false \
      --buildtype=release --prefix="$prefix" &&
    ninja -C "$work/full-build" && meson install -C "$work/full-build" --quiet
}
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
  cmake -S "$root/tests/consumers/cmake" -B "$work/cmake-aarch64" -DCMAKE_PREFIX_PATH="$stage/usr/local" \
      -DCMAKE_TOOLCHAIN_FILE="$root/cross/aarch64-linux-gnu.cmake" &&
    cmake --build "$work/cmake-aarch64" && file "$work/cmake-aarch64/consumer" | grep -q aarch64 &&
    "${qemu_aarch64[@]}" "$work/cmake-aarch64/consumer" | grep -q '^rknnxx '
}
aarch64_runtime_consumer() {
  local runtime=${RKNNXX_AARCH64_HOST_RUNTIME:-$root/build/aarch64/host/runtime/librknnxx_host.so} out
  [ -f "$runtime" ] || { echo "skipped: no aarch64 host runtime at $runtime (configure build/aarch64)"; return 0; }
  # shellcheck disable=SC2046
  aarch64-linux-gnu-g++ -std=c++20 "$root/tests/consumers/runtime_consumer.cpp" -o "$work/runtime-consumer-aarch64" \
      -I"$stage/usr/local/include" $(PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config --cflags --libs fmt) \
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

check install install_package
check cmake-find-package cmake_consumer
check pkg-config pkgconfig_consumer
check meson-subproject meson_consumer
check pkg-config-define-prefix pkgconfig_define_prefix
if command -v aarch64-linux-gnu-g++ >/dev/null && command -v qemu-aarch64 >/dev/null; then
  check aarch64-cmake-consumer-qemu aarch64_consumer
  check aarch64-runtime-consumer-qemu aarch64_runtime_consumer
fi
if check install-full install_full; then
  check installed-rknnxx-version installed_version
  check installed-rknnxx-inspect installed_inspect
  check installed-rknnxx-convert-inspect installed_inspect_model
  check installed-cpp-consumer installed_cpp_consumer
  check installed-c-consumer-pkgconfig installed_c_consumer_pkgconfig
  check installed-c-consumer-cmake installed_c_consumer_cmake
fi
echo "consumers: $passed passed, $failed failed"
# Recorded like a meson test log so that count_tests.py adds these up with the rest.
/usr/bin/python3 "$root/scripts/record_result.py" "$work" consumers "$failed" "consumers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
