#pragma once
// The quantization keys of the toolkit's config() as the host quantizer honours them
// (docs/quantization.md): quantized_dtype, quantized_algorithm and quantized_method, checked with
// the config's own rules (platforms, gdq, group sizes) and then against what the host implements.

#include "affine.hpp"
#include "statistics.hpp"
#include "weights.hpp"

#include <rknnxx/toolkit/config.hpp>

namespace rknnxx::host::quantize {

using Dtype = rknnxx::toolkit::QuantizedDtype;

// w8a16 and w4a16: integer weights, float16 activations (no activation parameters).
[[nodiscard]] constexpr bool weight_only(Dtype dtype) noexcept {
  return dtype == Dtype::w8a16 || dtype == Dtype::w4a16;
}

// The integers a weight of this type takes: int4 for w4a16, int16 dynamic fixed point for
// w16a16i_dfp, int8 otherwise.
[[nodiscard]] constexpr IntRange weight_range(Dtype dtype) noexcept {
  if (dtype == Dtype::w16a16i_dfp) return int16_dfp_range;
  return dtype == Dtype::w4a16 ? int4_range : int8_range;
}

// The integers an activation of this type takes (calibrated types: w8a8 and w16a16i_dfp).
[[nodiscard]] constexpr IntRange activation_range(Dtype dtype) noexcept {
  return dtype == Dtype::w16a16i_dfp ? int16_dfp_range : int8_range;
}

struct Settings {
  Dtype dtype = Dtype::w8a8;
  Algorithm algorithm = Algorithm::normal;
  Method method = Method::channel();
};

// For build(do_quantization=True). Throws rknnxx::toolkit::ConfigError naming the key, with the
// toolkit's names in the message, for a problem Config::check() reports on a quantization key
// (a type on a platform without it, gdq with w8a8, a group method without w4a16); for the default
// w8a8 on rk2118 (which has no w8a8); and for kl_divergence or mmse with w16a16i_dfp
// (docs/quantization.md#w16a16i_dfp-int16-dynamic-fixed-point-rv1103rv1106 says why).
Settings settings_for(const rknnxx::toolkit::Config& config);

}  // namespace rknnxx::host::quantize
