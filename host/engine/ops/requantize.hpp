#pragma once
// The integer operators' quantization parameters (MatMulInteger, QLinearMatMul, ConvInteger,
// QLinearConv), and requantization of an exact int32 accumulator as the ONNX reference computes
// it: the multiplier (input scale x weight scale / output scale) in float32, the product in
// double, rounded half to even, offset by the output zero point and saturated.

#include "../op_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace rknnxx::host {

// A per-tensor or per-row/column parameter: one value, or `length` values (1-D).
inline void expect_parameter(const OpContext& ctx, std::size_t i, int64_t length, std::string_view what) {
  const auto& shape = ctx.input(i).shape;
  const int64_t n = ctx.input(i).elements();
  if (!(n == 1 && shape.size() <= 1) && !(shape.size() == 1 && n == length)) {
    ctx.fail("{} '{}' has shape {}, expected one value or [{}]", what, ctx.input_name(i), shape_string(shape), length);
  }
}

// Value j of a per-tensor or per-row/column parameter tensor, as int32 (zero points) or float (scales).
template <class R> R parameter(const Tensor* t, int64_t j) {
  if (t == nullptr) {
    return R{0};
  }
  const int64_t at = t->elements() == 1 ? 0 : j;
  R value{};
  visit_dtype(t->dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, float>) {
      value = static_cast<R>(t->data<T>()[at]);
    }
  });
  return value;
}

// Calls f.template operator()<A, B>() with the C++ types of two int8/uint8 element types.
template <class F> void visit_int8_pair(DataType a, DataType b, F&& f) {
  auto with_b = [&]<class A>() {
    if (b == DataType::int8) {
      f.template operator()<A, int8_t>();
    } else {
      f.template operator()<A, uint8_t>();
    }
  };
  if (a == DataType::int8) {
    with_b.template operator()<int8_t>();
  } else {
    with_b.template operator()<uint8_t>();
  }
}

inline float requantize_multiplier(float input_scale, float weight_scale, float output_scale) {
  return input_scale * weight_scale / output_scale;
}

template <class Y> Y requantize(int32_t acc, float multiplier, int32_t zero_point) {
  const double v =
      std::nearbyint(static_cast<double>(acc) * static_cast<double>(multiplier)) + static_cast<double>(zero_point);
  return static_cast<Y>(std::clamp(v, static_cast<double>(std::numeric_limits<Y>::lowest()),
                                   static_cast<double>(std::numeric_limits<Y>::max())));
}

}  // namespace rknnxx::host
