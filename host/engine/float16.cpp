// round_to_half on arrays (float16.hpp): the rounding of every float16 activation after the step
// that writes it, so it must cost about a memcpy. A float16 conversion instruction rounds to
// nearest, ties to even, keeps infinities, turns overflow into infinity and NaN into a quiet NaN
// with the payload's top bits, exactly as float_to_half_bits; converting back is exact. So one
// conversion there and back gives the scalar form's bits (tests/engine/engine_tensor_test.cpp checks
// every float16 boundary and a sweep over all float bit patterns).

#include "float16.hpp"
#include "four_lanes.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace rknnxx::host {
namespace detail {
namespace {

// Four values without branches: every case is computed and the right one selected.
u32x4 round_to_half_bits(u32x4 x) noexcept {
  const u32x4 abs = x & 0x7FFFFFFFu;
  const u32x4 sign = x & 0x80000000u;
  // Normal half range: drop 13 mantissa bits, ties to even (as the scalar form).
  const u32x4 normal = (x + 0xFFFu + ((x >> 13) & 1u)) & 0xFFFFE000u;
  // Below 2^-14 float16 steps by 2^-24: adding 0.5 (whose float32 ulp is 2^-24) rounds |x| to that step,
  // ties to even, in the default rounding mode; the subtraction is exact.
  const u32x4 subnormal = reinterpret_cast<u32x4>((reinterpret_cast<f32x4>(abs) + 0.5f) - 0.5f) | sign;
  // Overflow to infinity; NaN stays a quiet NaN with the payload float16 keeps.
  const u32x4 special = abs > 0x7F800000u ? ((x & 0xFFFFE000u) | 0x7FC00000u) : (sign | 0x7F800000u);
  return abs < 0x38800000u ? subnormal : (abs < 0x477FF000u ? normal : special);
}

#if defined(__x86_64__)
// F16C: eight values per conversion; the immediate selects round to nearest even whatever MXCSR says.
__attribute__((target("avx,f16c"))) void round_to_half_f16c(float* data, std::size_t count) noexcept {
  constexpr int nearest_even = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(data + i), nearest_even);
    _mm256_storeu_ps(data + i, _mm256_cvtph_ps(half));
  }
  if (i < count) {  // the last 1 to 7 values, through a padded vector
    float tail[8] = {};
    std::memcpy(tail, data + i, (count - i) * sizeof(float));
    _mm256_storeu_ps(tail, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(tail), nearest_even)));
    std::memcpy(data + i, tail, (count - i) * sizeof(float));
  }
}

// g++ 12's AVX-512 headers start each result from a deliberately undefined register and warn about it (GCC bug
// 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// AVX-512: sixteen values per conversion, half the instructions of F16C's eight, and a masked tail. It calls
// nothing, so the compiler's vzeroupper at its return leaves the SSE code after it at full speed.
__attribute__((target("avx512f"))) void round_to_half_avx512(float* data, std::size_t count) noexcept {
  constexpr int nearest_even = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (std::size_t i = 0; i < count; i += 16) {
    const auto mask = static_cast<__mmask16>(count - i >= 16 ? 0xffff : (1u << (count - i)) - 1);
    const __m256i half = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(mask, data + i), nearest_even);
    _mm512_mask_storeu_ps(data + i, mask, _mm512_cvtph_ps(half));
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// F16C instructions are VEX-encoded: they need the CPU's F16C bit and an OS that saves the AVX state
// (which __builtin_cpu_supports("avx") checks). clang 16's __builtin_cpu_supports has no "f16c".
bool cpu_has_f16c() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}
#elif defined(__aarch64__)
// NEON (every aarch64 CPU): four values per conversion, rounded as FPCR says (Linux: nearest even,
// no flush to zero, NaN propagated).
void round_to_half_neon(float* data, std::size_t count) noexcept {
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    vst1q_f32(data + i, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(data + i))));
  }
  if (i < count) {
    float tail[4] = {};
    std::memcpy(tail, data + i, (count - i) * sizeof(float));
    vst1q_f32(tail, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(tail))));
    std::memcpy(data + i, tail, (count - i) * sizeof(float));
  }
}
#endif

}  // namespace

void round_to_half_portable(float* data, std::size_t count) noexcept {
  constexpr std::size_t lanes = 4;
  std::size_t i = 0;
  for (; i + lanes <= count; i += lanes) store4(data + i, round_to_half_bits(load4<u32x4>(data + i)));
  if (i < count) {  // the last 1 to 3 values, through a padded vector
    store4_partial(data + i, round_to_half_bits(load4_partial<u32x4>(data + i, count - i)), count - i);
  }
}

std::vector<HalfRounder> hardware_half_rounders() {
  std::vector<HalfRounder> rounders;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) rounders.push_back(&round_to_half_avx512);
  if (cpu_has_f16c()) rounders.push_back(&round_to_half_f16c);
#elif defined(__aarch64__)
  rounders.push_back(&round_to_half_neon);
#endif
  return rounders;
}

HalfRounder hardware_round_to_half() noexcept {
  static const HalfRounder widest = [] {
    const std::vector<HalfRounder> rounders = hardware_half_rounders();
    return rounders.empty() ? nullptr : rounders.front();
  }();
  return widest;
}

}  // namespace detail

void round_to_half(float* data, std::size_t count) noexcept {
  static const detail::HalfRounder chosen = [] {
    const detail::HalfRounder hardware = detail::hardware_round_to_half();
    return hardware != nullptr ? hardware : &detail::round_to_half_portable;
  }();
  chosen(data, count);
}

}  // namespace rknnxx::host
