#pragma once
// Four values at once with the GCC and Clang vector extensions: one SSE2 register on x86-64, one NEON
// register on aarch64, without the intrinsics of either. Arithmetic works lane by lane, and a comparison
// gives each lane 0 or -1 as the signed integers of the same width (f32x4 compares to an i32x4).

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rknnxx::host {

using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));
using u32x4 = std::uint32_t __attribute__((vector_size(16)));
// Four doubles fill 32 bytes (two SSE2 registers, one AVX register): f32x4 widened by __builtin_convertvector.
using f64x4 = double __attribute__((vector_size(32)));

// Four values at p into lanes and back, at any alignment. memcpy compiles to one unaligned move and, unlike a
// cast pointer, keeps the aliasing rules; the lanes may read the values' bits as another type of their width
// (load4<u32x4> of floats). Always inlined: the kernels that use these were measured with the loads in place.
template <class Lanes = f32x4, class T> [[gnu::always_inline]] inline Lanes load4(const T* p) noexcept {
  static_assert(sizeof(Lanes) == 4 * sizeof(T), "four values fill the lanes");
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class Lanes, class T> [[gnu::always_inline]] inline void store4(T* p, Lanes v) noexcept {
  static_assert(sizeof(Lanes) == 4 * sizeof(T), "the lanes fill four values");
  std::memcpy(p, &v, sizeof v);
}

// The last 1 to 3 values of a loop through padded lanes: the first `count` lanes, the others zero.
template <class Lanes = f32x4, class T>
[[gnu::always_inline]] inline Lanes load4_partial(const T* p, std::size_t count) noexcept {
  static_assert(sizeof(Lanes) == 4 * sizeof(T), "four values fill the lanes");
  Lanes v{};
  std::memcpy(&v, p, count * sizeof(T));
  return v;
}
template <class Lanes, class T>
[[gnu::always_inline]] inline void store4_partial(T* p, Lanes v, std::size_t count) noexcept {
  static_assert(sizeof(Lanes) == 4 * sizeof(T), "the lanes fill four values");
  std::memcpy(p, &v, count * sizeof(T));
}

}  // namespace rknnxx::host
