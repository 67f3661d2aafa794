#pragma once
// IEEE 754 binary16 conversions (round to nearest, ties to even), used for float16
// tensors and for the float16 activation-storage option of a session.

#include <rknnxx/core/float16.hpp>

#include <cstddef>
#include <cstdint>

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
