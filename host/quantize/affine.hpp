#pragma once
// Affine (asymmetric) integer quantization as the NPU stores w8a8 tensors (docs/quantization.md):
//   q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax),   x' = scale * (q - zero_point).
// The rounding is the library's one rule (rknnxx::detail::round_half_even, tensor/attr.hpp).
// w16a16i_dfp's dynamic fixed point is the special case scale = 2^-fl, zero_point = 0, q in int16
// (an IntRange with dynamic_fixed_point set): every function here applies to it unchanged, and
// affine_from_range chooses fl by the rule of dfp_from_range.

#include <rknnxx/tensor/attr.hpp>

#include <cstdint>
#include <optional>
#include <span>

namespace rknnxx::host::quantize {

// The integers a quantized value may take: int8 by default. With dynamic_fixed_point the scale is a
// power of two 2^-fl and the zero point 0 (w16a16i_dfp).
struct IntRange {
  std::int32_t min = -128;
  std::int32_t max = 127;
  bool dynamic_fixed_point = false;
  [[nodiscard]] constexpr std::int32_t levels() const noexcept { return max - min; }  // steps, 255 for int8
  friend constexpr bool operator==(const IntRange&, const IntRange&) = default;
};
inline constexpr IntRange int8_range{};
inline constexpr IntRange int4_range{-8, 7};                     // w4a16's weights
inline constexpr IntRange int16_dfp_range{-32768, 32767, true};  // w16a16i_dfp's weights and activations

// The fractional lengths a dynamic fixed-point tensor may have (docs/quantization.md#w16a16i_dfp-int16-dynamic-fixed-point-rv1103rv1106):
// scales 2^64 down to 2^-64, normal floats whose int16 multiples are exact in float32.
inline constexpr int dfp_min_fraction_length = -64;
inline constexpr int dfp_max_fraction_length = 64;

struct AffineParams {
  float scale = 1.0f;
  std::int32_t zero_point = 0;
  IntRange range = int8_range;

  // The quantized integer of x (saturated; NaN gives the zero point).
  [[nodiscard]] std::int32_t quantize(float x) const noexcept;
  [[nodiscard]] float dequantize(std::int32_t q) const noexcept {
    return static_cast<float>(static_cast<double>(scale) * (q - zero_point));
  }
  // dequantize(quantize(x)): the value an NPU tensor holds for x.
  [[nodiscard]] float fake_quantize(float x) const noexcept { return dequantize(quantize(x)); }
  // The smallest and largest representable values.
  [[nodiscard]] float lowest() const noexcept { return dequantize(range.min); }
  [[nodiscard]] float highest() const noexcept { return dequantize(range.max); }
  // The library's attribute vocabulary (rknn_tensor_attr's AFFINE scale and zp).
  [[nodiscard]] Quantization attribute() const noexcept { return Quantization::affine_asymmetric(scale, zero_point); }
  friend bool operator==(const AffineParams&, const AffineParams&) = default;
};

// fl when `scale` is exactly 2^-fl with fl within the dfp bounds above; nullopt otherwise.
[[nodiscard]] inline std::optional<int> dfp_fraction_length(float scale) noexcept {
  const std::optional<int> fl = Quantization::affine_asymmetric(scale, 0).fraction_length();
  if (!fl || *fl < dfp_min_fraction_length || *fl > dfp_max_fraction_length) return std::nullopt;
  return fl;
}

// Parameters covering [lo, hi] widened to contain 0, so that 0 is exact (zero padding, ReLU):
// scale = (hi - lo) / levels, zero_point = round(qmin - lo / scale) clamped into the range. A range
// of one point (all zeros) gives scale 1 (any scale represents it). Non-finite bounds are refused
// by the caller; here they give scale 1.
[[nodiscard]] AffineParams affine_from_range(double lo, double hi, IntRange range = int8_range) noexcept;

// Dynamic fixed point covering [lo, hi] widened to contain 0 (what affine_from_range gives for a
// dynamic_fixed_point range): the largest fl, within the dfp bounds, such that hi * 2^fl <= qmax and
// lo * 2^fl >= qmin, i.e. the finest power-of-two step at which no value of the range saturates.
// A range of one point, or non-finite bounds, gives fl = 0.
[[nodiscard]] AffineParams dfp_from_range(double lo, double hi, IntRange range = int16_dfp_range) noexcept;

// Replaces every value by its quantize-dequantize image, in place.
void fake_quantize(std::span<float> values, const AffineParams& params) noexcept;

// fake_quantize(values, params) and, in the same pass, out[i] = out_scale * (bytes[q_i - params.range.min] -
// out_zero) for each value's integer q_i: a byte table on an int8 output grid looked up by the rounded values (an
// element-wise chain run by the values' producer, docs/runtime-extensions.md "Steps run by their producer"), the
// same bits as the rounding and the lookup one after the other. `bytes` holds 256 entries. Returns false, having
// changed nothing, unless the range is int8's and the CPU has AVX512-VBMI.
bool fake_quantize_and_look_up(std::span<float> values, const AffineParams& params, const std::int8_t* bytes,
                               float out_scale, std::int32_t out_zero, float* out) noexcept;

// The vector loops fake_quantize chooses among by CPU (the widest it has), each to be forced by tests: every loop
// gives the same bits. A loop the CPU lacks (quantize_loop_available false) leaves the work to the scalar form.
enum class QuantizeLoop { chosen, portable, avx2, avx512 };
void fake_quantize(std::span<float> values, const AffineParams& params, QuantizeLoop loop) noexcept;
[[nodiscard]] bool quantize_loop_available(QuantizeLoop loop) noexcept;

// The mean squared error fake quantization makes on `values` (for tests and analysis).
[[nodiscard]] double quantization_mse(std::span<const float> values, const AffineParams& params) noexcept;

}  // namespace rknnxx::host::quantize
