#pragma once
// IEEE 754 binary16 conversions (round to nearest, ties to even), used for float16
// tensors and for the float16 activation-storage option of a session.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rknnxx::host {

// A float16 value stored as its bits; arithmetic happens in float32.
struct half {
  uint16_t bits = 0;
};

constexpr uint16_t float_to_half_bits(float value) noexcept {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN (NaN stays quiet NaN)
    return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u | ((abs >> 13) & 0x3FFu) : 0u));
  }
  if (abs >= 0x477FF000u) {  // rounds to 65520 or more: overflow
    return static_cast<uint16_t>(sign | 0x7C00u);
  }
  if (abs < 0x38800000u) {     // below the smallest normal half, 2^-14
    if (abs <= 0x33000000u) {  // at most 2^-25: rounds to zero (the tie goes to even zero)
      return sign;
    }
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // value = mantissa * 2^(exponent-150) = q * 2^-24
    uint32_t q = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (q & 1u) != 0u)) {
      ++q;
    }
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t result = ((abs >> 23) - 112u) << 10 | ((abs >> 13) & 0x3FFu);
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u) != 0u)) {
    ++result;  // a carry into the exponent is the correct rounding
  }
  return static_cast<uint16_t>(sign | result);
}

constexpr float half_bits_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2^-24
    return sign != 0 ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// The float32 value nearest to `value` that float16 can represent (what storing the value
// as float16 and reading it back gives).
constexpr float round_to_half(float value) noexcept {
  uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x38800000u && abs < 0x477FF000u) {  // normal half range: drop 13 mantissa bits
    x += 0xFFFu + ((x >> 13) & 1u);
    return std::bit_cast<float>(x & 0xFFFFE000u);
  }
  return half_bits_to_float(float_to_half_bits(value));
}

// round_to_half on an array, in place: what storing float16 activations costs (engine/float16.cpp).
// The same bits as the scalar form above for every input, by the CPU's own conversion instructions
// where it has them (F16C on x86-64, chosen at run time; NEON on aarch64), else by portable vector code.
void round_to_half(float* data, std::size_t count) noexcept;

namespace detail {
using HalfRounder = void (*)(float* data, std::size_t count) noexcept;
// The portable form (GCC's and clang's vector extensions: SSE2 on x86-64, 4 lanes, branch-free).
void round_to_half_portable(float* data, std::size_t count) noexcept;
// The hardware form this CPU runs, or nullptr when it has none; round_to_half uses it when present.
HalfRounder hardware_round_to_half() noexcept;
}  // namespace detail

}  // namespace rknnxx::host
