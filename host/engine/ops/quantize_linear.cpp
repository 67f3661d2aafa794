// QuantizeLinear, DequantizeLinear (per tensor, or per axis with 1-D scales; int8 and uint8, and
// int32 for dequantizing biases) and DynamicQuantizeLinear, exactly as ONNX defines them:
//   quantize:   y = saturate(round_half_to_even(x / scale) + zero_point), computed in float32
//   dequantize: y = (x - zero_point) * scale

#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace rknnxx::host {
namespace {

// How scale and zero point index the input: per tensor (one value) or along `axis`.
struct QuantizationAxis {
  int64_t length = 1;  // values in scale (1 per tensor)
  int64_t inner = 1;   // elements after the axis: the index of element e is e / inner % length

  int64_t index(int64_t e) const noexcept { return length == 1 ? 0 : e / inner % length; }
};

// Checks scale (input 1) and zero point (input 2, optional) against input 0.
QuantizationAxis quantization_axis(const OpContext& ctx) {
  ctx.expect_dtype(1, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  const auto& scale = ctx.input(1).shape;
  QuantizationAxis q;
  if (scale.size() > 1) {
    ctx.fail("scale '{}' has shape {}, expected a scalar or 1-D (per axis)", ctx.input_name(1), shape_string(scale));
  }
  if (scale.size() == 1 && scale[0] != 1) {  // one value in a 1-D scale is per tensor too
    if (ctx.opset() < 13) {
      ctx.fail("per-axis scales need opset 13 or later");
    }
    const auto axis =
        static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 1), static_cast<int64_t>(shape.size())));
    if (axis >= shape.size() || scale[0] != shape[axis]) {
      ctx.fail("scale '{}' has {} values, input {} has {} along axis {}", ctx.input_name(1), scale[0],
               shape_string(shape), axis < shape.size() ? shape[axis] : 0, axis);
    }
    q.length = scale[0];
    q.inner = element_count(std::span(shape).subspan(axis + 1));
  }
  if (ctx.has_input(2) && ctx.input(2).shape != scale) {
    ctx.fail("zero point '{}' has shape {}, scale '{}' has {}; they must agree", ctx.input_name(2),
             shape_string(ctx.input(2).shape), ctx.input_name(1), shape_string(scale));
  }
  return q;
}

template <class Q> Q quantize(float x, float scale, int32_t zero_point) {
  const float q = std::nearbyint(x / scale) + static_cast<float>(zero_point);
  const float lo = std::numeric_limits<Q>::lowest();
  const float hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::isnan(q) ? 0.0f : std::clamp(q, lo, hi));
}

PreparedOp prepare_quantize_linear(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DataType::float32, DataType::int32});
  const QuantizationAxis q = quantization_axis(ctx);
  DataType out_type = DataType::uint8;
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DataType::uint8, DataType::int8});
    out_type = ctx.input(2).dtype;
  }
  PreparedOp op;
  op.outputs = {TensorInfo{out_type, ctx.input(0).shape}};
  op.kernel = [q, out_type](KernelContext& k) {
    const float* scale = k.input(1).data<float>();
    const Tensor* zero = k.optional_input(2);
    const int64_t n = k.input(0).elements();
    const auto run = [&]<class Q, class X>() {
      const X* x = k.input(0).data<X>();
      const Q* zp = zero != nullptr ? zero->data<Q>() : nullptr;
      Q* y = k.output(0).data<Q>();
      if (q.length == 1) {
        const float s = scale[0];
        const int32_t z = zp != nullptr ? zp[0] : 0;
        parallel_map(k.pool, x, y, n, [s, z](X v) { return quantize<Q>(static_cast<float>(v), s, z); });
      } else {
        k.pool.parallel_for(n, elementwise_grain, [&](int64_t begin, int64_t end) {
          for (int64_t e = begin; e < end; ++e) {
            const int64_t c = q.index(e);
            y[e] = quantize<Q>(static_cast<float>(x[e]), scale[c], zp != nullptr ? zp[c] : 0);
          }
        });
      }
    };
    const bool int_input = k.input(0).dtype() == DataType::int32;
    if (out_type == DataType::int8) {
      int_input ? run.template operator()<int8_t, int32_t>() : run.template operator()<int8_t, float>();
    } else {
      int_input ? run.template operator()<uint8_t, int32_t>() : run.template operator()<uint8_t, float>();
    }
  };
  return op;
}

PreparedOp prepare_dequantize_linear(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DataType::int8, DataType::uint8, DataType::int32});
  const QuantizationAxis q = quantization_axis(ctx);
  const DataType in_type = ctx.input(0).dtype;
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {in_type});
  }
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, ctx.input(0).shape}};
  op.kernel = [q, in_type](KernelContext& k) {
    visit_dtype(in_type, [&]<class Q>() {
      if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int32_t>) {
        const float* scale = k.input(1).data<float>();
        const Tensor* zero = k.optional_input(2);
        const Q* zp = zero != nullptr ? zero->data<Q>() : nullptr;
        const Q* x = k.input(0).data<Q>();
        float* y = k.output(0).data<float>();
        const int64_t n = k.input(0).elements();
        if (q.length == 1) {
          const float s = scale[0];
          const auto z = static_cast<int64_t>(zp != nullptr ? zp[0] : 0);
          parallel_map(k.pool, x, y, n, [s, z](Q v) { return static_cast<float>(static_cast<int64_t>(v) - z) * s; });
        } else {
          k.pool.parallel_for(n, elementwise_grain, [&](int64_t begin, int64_t end) {
            for (int64_t e = begin; e < end; ++e) {
              const int64_t c = q.index(e);
              const auto z = static_cast<int64_t>(zp != nullptr ? zp[c] : 0);
              y[e] = static_cast<float>(static_cast<int64_t>(x[e]) - z) * scale[c];
            }
          });
        }
      }
    });
  };
  return op;
}

// uint8 quantization of x with the scale and zero point that map [min(0, x), max(0, x)] onto
// [0, 255].
PreparedOp prepare_dynamic_quantize_linear(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::uint8, ctx.input(0).shape}, TensorInfo{DataType::float32, {}},
                TensorInfo{DataType::uint8, {}}};
  op.kernel = [](KernelContext& k) {
    const auto x = k.input(0).values<float>();
    float lo = 0.0f;
    float hi = 0.0f;
    for (float v : x) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const float scale = (hi - lo) / 255.0f;
    const float zero_float = scale == 0.0f ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
    const auto zero_point = static_cast<uint8_t>(zero_float);
    *k.output(1).data<float>() = scale;
    *k.output(2).data<uint8_t>() = zero_point;
    const float divisor = scale == 0.0f ? 1.0f : scale;
    parallel_map(k.pool, x.data(), k.output(0).data<uint8_t>(), k.input(0).elements(),
                 [divisor, zero_point](float v) { return quantize<uint8_t>(v, divisor, zero_point); });
  };
  return op;
}

const OpRegistrar quantize_linear_op{"QuantizeLinear", prepare_quantize_linear};
const OpRegistrar dequantize_linear_op{"DequantizeLinear", prepare_dequantize_linear};
const OpRegistrar dynamic_quantize_linear_op{"DynamicQuantizeLinear", prepare_dynamic_quantize_linear};

}  // namespace
}  // namespace rknnxx::host
