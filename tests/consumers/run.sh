#!/usr/bin/env bash
# The README's install commands as a packager runs them, and the consumer projects built against
# each installed tree. Prints its own "N passed, N failed".
#   tests/consumers/run.sh WORKDIR [RELEASE_BUILD]
# Installs three ways: with the default options, with --buildtype=plain, and from RELEASE_BUILD
# (a --buildtype=release tree that scripts/test.sh has already built, so -O3 is not compiled twice;
# without it, a release tree is configured here). Each installed tree must serve the CMake package,
# pkg-config and a Meson subproject consumer.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mkdir -p "$1" && cd "$1" && pwd)
release_build=${2:-}
passed=0 failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@" >"$work/$name.log" 2>&1; then passed=$((passed + 1)); echo "ok: $name"
  else failed=$((failed + 1)); echo "FAILED: $name"; tail -n 30 "$work/$name.log"; fi
}
prefix=/usr/local

# install VARIANT [meson setup args]: the README's "meson setup build && meson install -C build",
# staged under $work/stage-VARIANT (DESTDIR) instead of the real prefix.
install_package() {
  local variant=$1; shift
  rm -rf "$work/build-$variant" "$work/stage-$variant"
  meson setup "$work/build-$variant" "$root" --prefix="$prefix" "$@" &&
    meson install -C "$work/build-$variant" --destdir "$work/stage-$variant"
}
install_prebuilt() {  # install_prebuilt VARIANT BUILD_DIR
  rm -rf "$work/stage-$1"
  meson install -C "$2" --destdir "$work/stage-$1"
}
cmake_consumer() {  # cmake_consumer VARIANT
  rm -rf "$work/cmake-$1"
  cmake -S "$root/tests/consumers/cmake" -B "$work/cmake-$1" -DCMAKE_PREFIX_PATH="$work/stage-$1$prefix" &&
    cmake --build "$work/cmake-$1" && "$work/cmake-$1/consumer" | grep -q '^rknnxx '
}
pkgconfig_consumer() {  # pkgconfig_consumer VARIANT
  local stage=$work/stage-$1 pcdir
  pcdir=$(dirname "$(find "$stage" -name rknnxx.pc | head -n 1)")
  # shellcheck disable=SC2046
  g++ -std=c++20 "$root/tests/consumers/consumer.cpp" -o "$work/pc-consumer-$1" \
      $(PKG_CONFIG_PATH=$pcdir PKG_CONFIG_SYSROOT_DIR=$stage pkg-config --cflags --libs rknnxx) &&
    "$work/pc-consumer-$1" | grep -q '^rknnxx '
}
meson_consumer() {
  rm -rf "$work/meson-build"
  meson setup "$work/meson-build" "$root/tests/consumers/meson" && ninja -C "$work/meson-build" &&
    "$work/meson-build/consumer" | grep -q '^rknnxx '
}

check install-defaults install_package defaults
check install-plain install_package plain --buildtype=plain
if [ -n "$release_build" ]; then
  check install-release install_prebuilt release "$release_build"
else
  check install-release install_package release --buildtype=release
fi
for variant in defaults plain release; do
  if [ -d "$work/stage-$variant" ]; then
    check "cmake-find-package-$variant" cmake_consumer "$variant"
    check "pkg-config-$variant" pkgconfig_consumer "$variant"
  fi
done
check meson-subproject meson_consumer
echo "consumers: $passed passed, $failed failed"
# Recorded like a meson test log so that count_tests.py adds these up with the rest.
/usr/bin/python3 "$root/scripts/record_result.py" "$work" consumers "$failed" "consumers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
