#include "affine.hpp"
#include "four_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

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

// params.fake_quantize(v) for every value, the same bits (the per-value form rounds with
// round_half_even; a test compares the two on every tie): every activation of a quantized model
// passes here. Clamping x / scale to [min - zp, max - zp] (integers) before rounding gives what
// clamping after it gives and keeps |t| far below 2^51, where adding and subtracting 1.5 * 2^52 rounds
// t to an integer, ties to even (the sum's unit in the last place is 1), so the loop needs no
// rounding call and no branch; four values at a time with the compilers' vector extensions (SSE2,
// NEON), about four times the speed of the scalar loop (benchmarks/README.md, int8).
namespace {
constexpr double round_magic = 0x1.8p52;

struct FakeQuantize {
  double scale, lo, hi;
  [[nodiscard]] float operator()(float v) const noexcept {
    double t = static_cast<double>(v) / scale;
    t = t < lo ? lo : t;
    t = t > hi ? hi : t;
    t = t == t ? t : 0.0;  // NaN quantizes to the zero point
    return static_cast<float>(((t + round_magic) - round_magic) * scale);
  }
};

// The same operations as FakeQuantize's, lane by lane.
[[gnu::always_inline]] inline std::size_t quantize_lanes(float* values, std::size_t count,
                                                         const FakeQuantize& q) noexcept {
  const f64x4 scale = f64x4{} + q.scale, lo = f64x4{} + q.lo, hi = f64x4{} + q.hi;
  const f64x4 magic = f64x4{} + round_magic, zero = f64x4{};
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    f64x4 t = __builtin_convertvector(load4(values + i), f64x4) / scale;
    t = t < lo ? lo : t;
    t = t > hi ? hi : t;
    t = t == t ? t : zero;
    store4(values + i, __builtin_convertvector(((t + magic) - magic) * scale, f32x4));
  }
  return i;
}

#if defined(__x86_64__)
// The division dominates: AVX divides four doubles at once where SSE2 divides two. Chosen at run
// time, so that the library still runs on any x86-64.
__attribute__((target("avx"))) std::size_t quantize_lanes_avx(float* values, std::size_t count,
                                                              const FakeQuantize& q) noexcept {
  return quantize_lanes(values, count, q);
}
#endif

std::size_t fake_quantize_lanes(float* values, std::size_t count, const FakeQuantize& q) noexcept {
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) return quantize_lanes_avx(values, count, q);
#endif
  return quantize_lanes(values, count, q);
}
}  // namespace

void fake_quantize(std::span<float> values, const AffineParams& params) noexcept {
  const FakeQuantize q{params.scale, static_cast<double>(params.range.min) - params.zero_point,
                       static_cast<double>(params.range.max) - params.zero_point};
  if (q.lo < -(1 << 30) || q.hi > (1 << 30)) {  // wider than any tensor type here: the per-value form
    for (float& v : values) v = params.fake_quantize(v);
    return;
  }
  for (std::size_t i = fake_quantize_lanes(values.data(), values.size(), q); i < values.size(); ++i)
    values[i] = q(values[i]);
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
