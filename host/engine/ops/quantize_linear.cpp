// QuantizeLinear, DequantizeLinear (per tensor, per axis with 1-D scales, or per block along one
// axis from opset 21 on; int8 and uint8, int16 and uint16 from opset 21 on, and int32 for
// dequantizing biases) and DynamicQuantizeLinear, exactly as ONNX defines them:
//   quantize:   y = saturate(round_half_to_even(x / scale) + zero_point), computed in float32
//   dequantize: y = (x - zero_point) * scale
// Blocked quantization (docs/conformance.md, "Opsets 18 to 21"): scale has the input's rank, the
// input's size along `axis` split into blocks of block_size elements (the last may be shorter)
// and one scale per block; every other axis as the input's.

#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace rknnxx::host {
namespace {

// How scale and zero point index the input: per tensor (one value), along `axis`, or per block.
struct QuantizationAxis {
  int64_t length = 1;       // values in scale along the axis (1 per tensor)
  int64_t inner = 1;        // elements after the axis
  int64_t block = 0;        // blocked: elements per block along the axis (0: per axis)
  int64_t axis_length = 1;  // blocked: the input's size along the axis

  int64_t index(int64_t e) const noexcept {
    if (length == 1 && block == 0) {
      return 0;
    }
    if (block == 0) {
      return e / inner % length;
    }
    const int64_t row = e / inner;  // the input's index over the axis and the axes before it
    return ((row / axis_length) * length + row % axis_length / block) * inner + e % inner;
  }
};

// Checks scale (input 1) and zero point (input 2, optional) against input 0.
QuantizationAxis quantization_axis(const OpContext& ctx) {
  ctx.expect_dtype(1, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  const auto& scale = ctx.input(1).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  QuantizationAxis q;
  const int64_t block_size = ctx.opset() >= 21 ? ctx.attr_int("block_size", 0) : 0;
  if (block_size < 0) {
    ctx.fail("attribute 'block_size' is {}, expected a positive block size (or 0: not blocked)", block_size);
  }
  if (block_size > 0) {
    const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 1), rank));
    const int64_t blocks = shape[axis] / block_size + (shape[axis] % block_size != 0 ? 1 : 0);
    std::vector<int64_t> expected = shape;
    expected[axis] = blocks;
    if (scale != expected) {
      ctx.fail("scale '{}' has shape {}, expected {} for blocks of {} along axis {} of input {}", ctx.input_name(1),
               shape_string(scale), shape_string(expected), block_size, axis, shape_string(shape));
    }
    q.length = blocks;
    q.block = block_size;
    q.axis_length = shape[axis];
    q.inner = element_count(std::span(shape).subspan(axis + 1));
  } else if (scale.size() > 1) {
    ctx.fail("scale '{}' has shape {}, expected a scalar or 1-D (per axis){}", ctx.input_name(1), shape_string(scale),
             ctx.opset() >= 21 ? ", or attribute 'block_size' for blocked quantization" : "");
  } else if (scale.size() == 1 && scale[0] != 1) {  // one value in a 1-D scale is per tensor too
    if (ctx.opset() < 13) {
      ctx.fail("per-axis scales need opset 13 or later");
    }
    const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 1), rank));
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

// Quantized input or zero point i: int8 or uint8, also int16 or uint16 from opset 21 on (and
// int32 where DequantizeLinear takes a bias).
void expect_quantized_type(const OpContext& ctx, std::size_t i, bool int32_too) {
  if (ctx.opset() >= 21) {
    int32_too
        ? ctx.expect_dtype(i, {DataType::uint8, DataType::int8, DataType::uint16, DataType::int16, DataType::int32})
        : ctx.expect_dtype(i, {DataType::uint8, DataType::int8, DataType::uint16, DataType::int16});
  } else {
    if (const DataType t = ctx.input(i).dtype; t == DataType::int16 || t == DataType::uint16) {
      ctx.fail("{} quantization needs opset 21 or later (the model's opset is {})", dtype_name(t), ctx.opset());
    }
    int32_too ? ctx.expect_dtype(i, {DataType::uint8, DataType::int8, DataType::int32})
              : ctx.expect_dtype(i, {DataType::uint8, DataType::int8});
  }
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
    expect_quantized_type(ctx, 2, false);
    out_type = ctx.input(2).dtype;
  }
  // QuantizeLinear-21's output_dtype names the type when there is no zero point (a narrow type
  // is refused when the model loads, legacy_opsets.cpp).
  if (const int64_t given = ctx.opset() >= 21 ? ctx.attr_int("output_dtype", 0) : 0; given != 0) {
    const auto type = static_cast<DataType>(given);
    if (ctx.has_input(2) && type != out_type) {
      ctx.fail("attribute 'output_dtype' is {}, the zero point is {}; they must agree", dtype_name(type),
               dtype_name(out_type));
    }
    if (type != DataType::uint8 && type != DataType::int8 && type != DataType::uint16 && type != DataType::int16) {
      ctx.fail("attribute 'output_dtype' is {}, expected uint8, int8, uint16 or int16", dtype_name(type));
    }
    out_type = type;
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
      if (q.length == 1 && q.block == 0) {
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
    const auto run_for = [&]<class Q>() {
      k.input(0).dtype() == DataType::int32 ? run.template operator()<Q, int32_t>()
                                            : run.template operator()<Q, float>();
    };
    switch (out_type) {
      case DataType::int8: run_for.template operator()<int8_t>(); break;
      case DataType::uint16: run_for.template operator()<uint16_t>(); break;
      case DataType::int16: run_for.template operator()<int16_t>(); break;
      default: run_for.template operator()<uint8_t>(); break;
    }
  };
  return op;
}

PreparedOp prepare_dequantize_linear(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  expect_quantized_type(ctx, 0, true);
  const QuantizationAxis q = quantization_axis(ctx);
  const DataType in_type = ctx.input(0).dtype;
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {in_type});
  }
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, ctx.input(0).shape}};
  op.kernel = [q, in_type](KernelContext& k) {
    visit_dtype(in_type, [&]<class Q>() {
      if constexpr (std::is_same_v<Q, int8_t> || std::is_same_v<Q, uint8_t> || std::is_same_v<Q, int16_t> ||
                    std::is_same_v<Q, uint16_t> || std::is_same_v<Q, int32_t>) {
        const float* scale = k.input(1).data<float>();
        const Tensor* zero = k.optional_input(2);
        const Q* zp = zero != nullptr ? zero->data<Q>() : nullptr;
        const Q* x = k.input(0).data<Q>();
        float* y = k.output(0).data<float>();
        const int64_t n = k.input(0).elements();
        if (q.length == 1 && q.block == 0) {
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
