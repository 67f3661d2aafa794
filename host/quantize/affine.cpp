#include "affine.hpp"

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

// params.fake_quantize(v) for every value, the same bits (checked on 24 million values, every tie
// included), 1.2 to 1.5x as fast: every activation of a quantized model passes here. Clamping
// x / scale to [min - zp, max - zp] (integers) before rounding gives what clamping after it gives,
// and keeps the value small enough to split into an integer part and an exact fraction, so that ties
// go to even without std::round and the loop has no branch.
void fake_quantize(std::span<float> values, const AffineParams& params) noexcept {
  const double scale = params.scale;
  const double lo = static_cast<double>(params.range.min) - params.zero_point;
  const double hi = static_cast<double>(params.range.max) - params.zero_point;
  if (lo < -(1 << 30) || hi > (1 << 30)) {  // wider than any tensor type here: the per-value form
    for (float& v : values) v = params.fake_quantize(v);
    return;
  }
  for (float& v : values) {
    double t = static_cast<double>(v) / scale;
    t = t < lo ? lo : t;
    t = t > hi ? hi : t;
    t = t == t ? t : 0.0;                             // NaN quantizes to the zero point
    const auto whole = static_cast<std::int32_t>(t);  // toward zero: |t| <= 2^30 here
    const double fraction = t - static_cast<double>(whole);
    const std::int32_t odd = whole & 1;
    // +1 above half, -1 below minus half, and at a tie the step that makes the result even.
    const std::int32_t step = static_cast<std::int32_t>(fraction > 0.5) - static_cast<std::int32_t>(fraction < -0.5) +
        (static_cast<std::int32_t>(fraction == 0.5) - static_cast<std::int32_t>(fraction == -0.5)) * odd;
    v = static_cast<float>(scale * static_cast<double>(whole + step));
  }
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
