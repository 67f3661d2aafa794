#pragma once
// IEEE 754 binary16 conversions (round to nearest, ties to even), used for float16
// tensors and for the float16 activation-storage option of a session; and bfloat16 (the top
// 16 bits of a float32), rounded the same way (docs/conformance.md "bfloat16").

#include <rknnxx/core/bfloat16.hpp>
#include <rknnxx/core/float16.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace rknnxx::host {

// A float16 value stored as its bits; arithmetic happens in float32.
struct half {
  uint16_t bits = 0;
};

// The library's one float16 rounding (include/rknnxx/core/packed_float.hpp: to nearest, ties to
// even, overflow to infinity, NaN kept quiet with its payload's top bits), as bit patterns.
constexpr uint16_t float_to_half_bits(float value) noexcept { return Float16(value).bits(); }
constexpr float half_bits_to_float(uint16_t h) noexcept { return static_cast<float>(Float16::from_bits(h)); }

// The float32 value nearest to `value` that float16 can represent (what storing the value
// as float16 and reading it back gives).
constexpr float round_to_half(float value) noexcept { return static_cast<float>(Float16(value)); }

// A bfloat16 value stored as its bits; arithmetic happens in float32.
struct bfloat16 {
  uint16_t bits = 0;
};

// The library's one bfloat16 rounding (include/rknnxx/core/bfloat16.hpp: to nearest, ties to even,
// as ONNX Runtime and the ONNX reference from 1.13 on; NaN stays a quiet NaN), as bit patterns.
// bfloat16 is the top half of a float32, so the rounding is one integer addition (a carry into
// the exponent is the right rounding, up to infinity) and widening is a shift: written branch-free
// here so that element-wise loops vectorize; tests/engine/engine_bfloat16_test.cpp checks these
// give the bits of rknnxx::BFloat16 for every float32 sign, exponent and rounding case.
constexpr uint16_t float_to_bfloat16_bits(float value) noexcept {
  const auto u = std::bit_cast<uint32_t>(value);
  const auto rounded = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  const auto quiet_nan = static_cast<uint16_t>((u >> 16) | 0x0040u);
  return (u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded;
}
constexpr float bfloat16_bits_to_float(uint16_t b) noexcept { return std::bit_cast<float>(uint32_t{b} << 16); }

// float16 and bfloat16 alike, for kernels written once for both: stored as bits, computed in float32.
template <class T> inline constexpr bool is_float_bits_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
constexpr float widen(half value) noexcept { return half_bits_to_float(value.bits); }
constexpr float widen(bfloat16 value) noexcept { return bfloat16_bits_to_float(value.bits); }
template <class T> constexpr T narrow(float value) noexcept {
  if constexpr (std::is_same_v<T, half>) {
    return half{float_to_half_bits(value)};
  } else {
    return bfloat16{float_to_bfloat16_bits(value)};
  }
}

// round_to_half on an array, in place: what storing float16 activations costs (engine/float16.cpp).
// The same bits as the scalar form above for every input, by the CPU's own conversion instructions
// where it has them (F16C on x86-64, chosen at run time; NEON on aarch64), else by portable vector code.
void round_to_half(float* data, std::size_t count) noexcept;

namespace detail {
using HalfRounder = void (*)(float* data, std::size_t count) noexcept;
// The portable form (GCC's and clang's vector extensions: SSE2 on x86-64, 4 lanes, branch-free).
void round_to_half_portable(float* data, std::size_t count) noexcept;
// The hardware forms this CPU has, the widest first (AVX-512, then F16C on x86-64; NEON on aarch64), for tests.
std::vector<HalfRounder> hardware_half_rounders();
// The widest of them, or nullptr when it has none; round_to_half uses it when present.
HalfRounder hardware_round_to_half() noexcept;
}  // namespace detail

}  // namespace rknnxx::host
