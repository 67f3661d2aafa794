#include "affine.hpp"

#include "byte_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rknnxx::host::quantize {

std::int32_t AffineParams::quantize(float x) const noexcept {
  if (std::isnan(x)) return zero_point;
  const double q = rknnxx::detail::round_half_even(static_cast<double>(x) / static_cast<double>(scale)) + zero_point;
  return static_cast<std::int32_t>(std::clamp(q, static_cast<double>(range.min), static_cast<double>(range.max)));
}

AffineParams dfp_from_range(double lo, double hi, IntRange range) noexcept {
  range.dynamic_fixed_point = true;
  AffineParams p;
  p.range = range;
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi - lo <= 0.0) return p;
  // Exact tests (ldexp only moves the exponent): start near the answer and step to it.
  const auto fits = [&](int fl) { return std::ldexp(hi, fl) <= range.max && std::ldexp(lo, fl) >= range.min; };
  const double widest = std::max(hi / range.max, lo / range.min);
  int fl = std::clamp(-std::ilogb(widest), dfp_min_fraction_length, dfp_max_fraction_length);
  while (fl > dfp_min_fraction_length && !fits(fl)) --fl;
  while (fl < dfp_max_fraction_length && fits(fl + 1)) ++fl;
  p.scale = std::ldexp(1.0f, -fl);
  return p;
}

AffineParams affine_from_range(double lo, double hi, IntRange range) noexcept {
  if (range.dynamic_fixed_point) return dfp_from_range(lo, hi, range);
  AffineParams p;
  p.range = range;
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  if (!std::isfinite(lo) || !std::isfinite(hi) || hi - lo <= 0.0) return p;
  p.scale = static_cast<float>((hi - lo) / range.levels());
  if (!(p.scale > 0.0f) || !std::isfinite(p.scale)) {  // below float's smallest step, or beyond its range
    p.scale = p.scale > 0.0f ? p.scale : 1.0f;
    return p;
  }
  const double zp = rknnxx::detail::round_half_even(range.min - lo / static_cast<double>(p.scale));
  p.zero_point =
      static_cast<std::int32_t>(std::clamp(zp, static_cast<double>(range.min), static_cast<double>(range.max)));
  return p;
}

// params.fake_quantize(v) for every value, the same bits (the per-value form divides in double; a test compares
// the two on every tie and for scales across float's range, in each loop): every activation of a quantized model
// passes here, a quarter of a w8a8 mobilenet_v2's run when it divided (benchmarks/README.md, int8).
//
// The loops multiply by 1 / scale instead: t = x * (1 / scale) is within |t| * 2^-22.9 of the quotient x / scale
// (two float roundings), so rounding t gives the quotient's integer unless the quotient lies within that distance
// of a tie k + 0.5. Clamping t to [lo, hi] = [min - zp, max - zp] (integers) before rounding gives what clamping
// after it gives and keeps |t| at most T = max(|lo|, |hi|), at most 2^16; so the loops take the one distance
// T * 2^-21 for every lane, a constant, where one per lane cost three more instructions a vector. A block of lanes
// with a value that near a tie (about 2^-12 of int8 values, whatever the data), or with a NaN, goes through the
// exact form. The integer times the scale is the same float as the double product rounded once (an integer below
// 2^17 times a float is exact in double).
namespace {

// The exact form, one value: the quotient in double (exact enough to decide every tie of two floats), rounded by
// adding and subtracting 1.5 * 2^52 (ties to even: the sum's unit in the last place is 1).
struct FakeQuantize {
  double scale, lo, hi;
  [[nodiscard]] float operator()(float v) const noexcept {
    constexpr double round_magic = 0x1.8p52;
    double t = static_cast<double>(v) / scale;
    t = t < lo ? lo : t;
    t = t > hi ? hi : t;
    t = t == t ? t : 0.0;  // NaN quantizes to the zero point
    return static_cast<float>(((t + round_magic) - round_magic) * scale);
  }
};

// What the lanes need beside the exact form. Taken only where |t| stays within 2^16 and 1 / scale is a normal
// float (every int8 and int16 grid with a scale between about 2^-126 and 2^126).
struct Reciprocal {
  float inverse, scale, lo, hi;
  // |n - t| below this (0.5 less a bound of t's distance from the quotient; 0.5 when t is exact, scale 2^k): the
  // quotient is no tie's, and n is its integer. Exact: a multiple of 2^-21 below 1.
  float tie_limit;
};

// The exact form of a grid: t clamped to [lo, hi] = [min - zp, max - zp].
FakeQuantize exact_form(const AffineParams& params) noexcept {
  return {params.scale, static_cast<double>(params.range.min) - params.zero_point,
          static_cast<double>(params.range.max) - params.zero_point};
}

// The lanes' form beside it, or nullopt where they cannot take the grid: a scale whose reciprocal float cannot
// hold, or a grid beyond 2^16.
std::optional<Reciprocal> lanes_form(const AffineParams& params, const FakeQuantize& exact) noexcept {
  const float inverse = 1.0f / params.scale;
  constexpr double lanes_limit = 65536.0;
  if (exact.lo < -lanes_limit || exact.hi > lanes_limit || !std::isnormal(params.scale) || !std::isnormal(inverse))
    return std::nullopt;
  int exponent = 0;
  const bool power_of_two = std::frexp(params.scale, &exponent) == 0.5f;
  const double widest = std::max(-exact.lo, exact.hi);  // T: an integer, at most 2^16
  return Reciprocal{inverse, params.scale, static_cast<float>(exact.lo), static_cast<float>(exact.hi),
                    static_cast<float>(power_of_two ? 0.5 : 0.5 - std::ldexp(widest, -21))};
}

// Lanes with the compilers' vector extensions: four (one SSE2 or NEON register; wider vectors there are split into
// scalar compares) or eight (one AVX2 register, x86-64 where the CPU has it).
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));
using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = std::int32_t __attribute__((vector_size(32)));

template <class F, class I> [[gnu::always_inline]] inline std::size_t
portable_lanes(float* values, std::size_t count, const FakeQuantize& exact, const Reciprocal& r) noexcept {
  constexpr std::size_t lanes = sizeof(F) / sizeof(float);
  const F inverse = F{} + r.inverse, scale = F{} + r.scale, lo = F{} + r.lo, hi = F{} + r.hi;
  const F magic = F{} + 0x1.8p23f, tie_limit = F{} + r.tie_limit;
  const I magnitude = I{} + 0x7fffffff;  // |v|: v's bits without the sign's
  std::size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    F t;
    std::memcpy(&t, values + i, sizeof t);
    t *= inverse;
    t = t < lo ? lo : t;  // NaN stays NaN
    t = t > hi ? hi : t;
    const F n = (t + magic) - magic;                                                  // ties to even below 2^22
    I all = reinterpret_cast<F>(reinterpret_cast<I>(n - t) & magnitude) < tie_limit;  // exact (Sterbenz); NaN: false
    if constexpr (lanes == 8) {                                                       // the AND of the lanes, in steps
      all &= __builtin_shufflevector(all, all, 4, 5, 6, 7, 0, 1, 2, 3);
      all &= __builtin_shufflevector(all, all, 2, 3, 0, 1, 6, 7, 4, 5);
      all &= __builtin_shufflevector(all, all, 1, 0, 3, 2, 5, 4, 7, 6);
    } else {
      all &= __builtin_shufflevector(all, all, 2, 3, 0, 1);
      all &= __builtin_shufflevector(all, all, 1, 0, 3, 2);
    }
    if (all[0] == 0) [[unlikely]] {
      for (std::size_t j = i; j < i + lanes; ++j) values[j] = exact(values[j]);
      continue;
    }
    const F y = n * scale;
    std::memcpy(values + i, &y, sizeof y);
  }
  return i;
}

std::size_t portable_loop(float* values, std::size_t count, const FakeQuantize& exact, const Reciprocal& r) noexcept {
  return portable_lanes<f32x4, i32x4>(values, count, exact, r);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) std::size_t avx2_loop(float* values, std::size_t count, const FakeQuantize& exact,
                                                      const Reciprocal& r) noexcept {
  return portable_lanes<f32x8, i32x8>(values, count, exact, r);
}

// g++ 12's AVX-512 headers start each result from a deliberately undefined register and warn about it (GCC bug
// 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// Sixteen lanes, with AVX-512's rounding instruction, fused multiply-add and mask registers: about half the
// instructions a value of the eight-lane loop.
__attribute__((target("avx512f"))) std::size_t avx512_loop(float* values, std::size_t count, const FakeQuantize& exact,
                                                           const Reciprocal& r) noexcept {
  const __m512 inverse = _mm512_set1_ps(r.inverse), scale = _mm512_set1_ps(r.scale);
  const __m512 lo = _mm512_set1_ps(r.lo), hi = _mm512_set1_ps(r.hi), magic = _mm512_set1_ps(0x1.8p23f);
  const __m512 tie_limit = _mm512_set1_ps(r.tie_limit);
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    __m512 t = _mm512_mul_ps(_mm512_loadu_ps(values + i), inverse);
    t = _mm512_min_ps(hi, _mm512_max_ps(lo, t));  // the second operand when either is NaN: NaN stays NaN
    // Ties to even below 2^22, and +0 for a small negative t, as the exact form gives
    const __m512 n = _mm512_sub_ps(_mm512_add_ps(t, magic), magic);
    const __m512 distance = _mm512_abs_ps(_mm512_sub_ps(n, t));                        // exact (Sterbenz)
    if (_mm512_cmp_ps_mask(distance, tie_limit, _CMP_LT_OQ) != 0xffff) [[unlikely]] {  // near a tie, or a NaN
      for (std::size_t j = i; j < i + 16; ++j) values[j] = exact(values[j]);
      continue;
    }
    _mm512_storeu_ps(values + i, _mm512_mul_ps(n, scale));
  }
  return i;
}

// Sixty-four values a step: avx512_loop's rounding, then the integers looked up in the table of bytes
// (byte_table.hpp, as the engine's chains look them up). Sixteen values with one near a tie, or a NaN, are rounded by
// the exact form and their integers read back from the rounded values (exact: grid values).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) std::size_t
fused_lookup_loop(float* values, std::size_t count, const FakeQuantize& exact, const Reciprocal& r,
                  const std::int8_t* bytes, std::int32_t offset, float out_scale, std::int32_t out_zero,
                  float* out) noexcept {
  const ByteTable table(bytes, out_scale, out_zero);
  const __m512 inverse = _mm512_set1_ps(r.inverse), scale = _mm512_set1_ps(r.scale);
  const __m512 lo = _mm512_set1_ps(r.lo), hi = _mm512_set1_ps(r.hi), magic = _mm512_set1_ps(0x1.8p23f);
  const __m512 tie_limit = _mm512_set1_ps(r.tie_limit);
  const __m512i index_offset = _mm512_set1_epi32(offset - 128);
  std::size_t i = 0;
  for (; i + 64 <= count; i += 64) {
    __m512i integer[4];
    for (std::size_t k = 0; k < 4; ++k) {
      float* part = values + i + 16 * k;
      __m512 t = _mm512_mul_ps(_mm512_loadu_ps(part), inverse);
      t = _mm512_min_ps(hi, _mm512_max_ps(lo, t));
      __m512 n = _mm512_sub_ps(_mm512_add_ps(t, magic), magic);
      if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(n, t)), tie_limit, _CMP_LT_OQ) != 0xffff) [[unlikely]] {
        for (std::size_t j = 0; j < 16; ++j) part[j] = exact(part[j]);
        n = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(part), inverse),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      } else {
        _mm512_storeu_ps(part, _mm512_mul_ps(n, scale));
      }
      integer[k] = _mm512_add_epi32(_mm512_cvtps_epi32(n), index_offset);
    }
    table.look_up(integer, out + i);
  }
  return i;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

using Loop = std::size_t (*)(float*, std::size_t, const FakeQuantize&, const Reciprocal&) noexcept;

Loop loop_of(QuantizeLoop loop) noexcept {
  switch (loop) {
    case QuantizeLoop::portable: return portable_loop;
#if defined(__x86_64__)
    case QuantizeLoop::avx2: return __builtin_cpu_supports("avx2") ? avx2_loop : nullptr;
    case QuantizeLoop::avx512: return __builtin_cpu_supports("avx512f") ? avx512_loop : nullptr;
#else
    case QuantizeLoop::avx2:
    case QuantizeLoop::avx512: return nullptr;
#endif
    case QuantizeLoop::chosen: break;
  }
  static const Loop chosen = [] {
    for (QuantizeLoop widest : {QuantizeLoop::avx512, QuantizeLoop::avx2})
      if (Loop found = loop_of(widest)) return found;
    return loop_of(QuantizeLoop::portable);
  }();
  return chosen;
}

}  // namespace

bool quantize_loop_available(QuantizeLoop loop) noexcept { return loop_of(loop) != nullptr; }

void fake_quantize(std::span<float> values, const AffineParams& params, QuantizeLoop loop) noexcept {
  const FakeQuantize exact = exact_form(params);
  if (exact.lo < -(1 << 30) || exact.hi > (1 << 30)) {  // wider than any tensor type here: the per-value form
    for (float& v : values) v = params.fake_quantize(v);
    return;
  }
  const Loop lanes = loop_of(loop);
  const std::optional<Reciprocal> r = lanes_form(params, exact);
  std::size_t i = lanes != nullptr && r ? lanes(values.data(), values.size(), exact, *r) : 0;
  for (; i < values.size(); ++i) values[i] = exact(values[i]);
}

void fake_quantize(std::span<float> values, const AffineParams& params) noexcept {
  fake_quantize(values, params, QuantizeLoop::chosen);
}

bool fake_quantize_and_look_up(std::span<float> values, const AffineParams& params, const std::int8_t* bytes,
                               float out_scale, std::int32_t out_zero, float* out) noexcept {
#if defined(__x86_64__)
  if (!cpu_has_byte_permutes() || params.range != int8_range) return false;
  const FakeQuantize exact = exact_form(params);
  const std::optional<Reciprocal> r = lanes_form(params, exact);
  if (!r) return false;
  // The index of integer q is q - min; from n = q - zero_point: n + zero_point - min.
  const std::int32_t offset = params.zero_point - params.range.min;
  std::size_t i = fused_lookup_loop(values.data(), values.size(), exact, *r, bytes, offset, out_scale, out_zero, out);
  for (; i < values.size(); ++i) {
    const std::int32_t q = params.quantize(values[i]);
    values[i] = params.dequantize(q);
    out[i] = static_cast<float>(bytes[q - params.range.min] - out_zero) * out_scale;
  }
  return true;
#else
  (void)values, (void)params, (void)bytes, (void)out_scale, (void)out_zero, (void)out;
  return false;
#endif
}

double quantization_mse(std::span<const float> values, const AffineParams& params) noexcept {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (float v : values) {
    const double e = static_cast<double>(v) - params.fake_quantize(v);
    sum += e * e;
  }
  return sum / static_cast<double>(values.size());
}

}  // namespace rknnxx::host::quantize
