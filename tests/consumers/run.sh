#!/usr/bin/env bash
# Builds and runs the two consumer projects: CMake against the installed package,
# Meson with rknnxx as a subproject. Prints its own "N passed, N failed".
#   tests/consumers/run.sh WORKDIR
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mkdir -p "$1" && cd "$1" && pwd)
passed=0 failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@" >"$work/$name.log" 2>&1; then passed=$((passed + 1)); echo "ok: $name"
  else failed=$((failed + 1)); echo "FAILED: $name"; tail -n 30 "$work/$name.log"; fi
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
meson_consumer() {
  rm -rf "$work/meson-build"
  meson setup "$work/meson-build" "$root/tests/consumers/meson" && ninja -C "$work/meson-build" &&
    "$work/meson-build/consumer" | grep -q '^rknnxx '
}
check install install_package
check cmake-find-package cmake_consumer
check pkg-config pkgconfig_consumer
check meson-subproject meson_consumer
echo "consumers: $passed passed, $failed failed"
# Recorded like a meson test log so that count_tests.py adds these up with the rest.
/usr/bin/python3 "$root/scripts/record_result.py" "$work" consumers "$failed" "consumers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
