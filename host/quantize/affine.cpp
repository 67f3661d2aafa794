#include "affine.hpp"

#include <algorithm>
#include <cmath>

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

void fake_quantize(std::span<float> values, const AffineParams& params) noexcept {
  for (float& v : values) v = params.fake_quantize(v);
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
