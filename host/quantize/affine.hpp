#pragma once
// Affine (asymmetric) integer quantization as the NPU stores w8a8 tensors (docs/quantization.md):
//   q = clamp(round_half_even(x / scale) + zero_point, qmin, qmax),   x' = scale * (q - zero_point).
// The rounding is the library's one rule (rknnxx::detail::round_half_even, tensor/attr.hpp).

#include <rknnxx/tensor/attr.hpp>

#include <cstdint>
#include <span>

namespace rknnxx::host::quantize {

// The integers a quantized value may take: int8 by default.
struct IntRange {
  std::int32_t min = -128;
  std::int32_t max = 127;
  [[nodiscard]] constexpr std::int32_t levels() const noexcept { return max - min; }  // steps, 255 for int8
  friend constexpr bool operator==(const IntRange&, const IntRange&) = default;
};
inline constexpr IntRange int8_range{};
inline constexpr IntRange int4_range{-8, 7};  // w4a16's weights

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

// Parameters covering [lo, hi] widened to contain 0, so that 0 is exact (zero padding, ReLU):
// scale = (hi - lo) / levels, zero_point = round(qmin - lo / scale) clamped into the range. A range
// of one point (all zeros) gives scale 1 (any scale represents it). Non-finite bounds are refused
// by the caller; here they give scale 1.
[[nodiscard]] AffineParams affine_from_range(double lo, double hi, IntRange range = int8_range) noexcept;

// Replaces every value by its quantize-dequantize image, in place.
void fake_quantize(std::span<float> values, const AffineParams& params) noexcept;

// The mean squared error fake quantization makes on `values` (for tests and analysis).
[[nodiscard]] double quantization_mse(std::span<const float> values, const AffineParams& params) noexcept;

}  // namespace rknnxx::host::quantize
