// Operators that change a tensor's shape or type but not the order of its elements:
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Shape, Size, ConstantOfShape, Range, Expand,
// Cast, CastLike.
// (Constant nodes are folded by the graph itself.) Shape arguments given as inputs must be
// constants while planning, as they are in exported models; they usually are folded anyway.

#include "../broadcast.hpp"
#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <type_traits>

namespace rknnxx::host {
namespace {

// The kernel of every operator here that keeps the bytes: one copy.
Kernel copy_kernel() {
  return [](KernelContext& k) {
    const Tensor& in = k.input(0);
    if (in.bytes() != 0) {
      std::memcpy(k.output(0).raw(), in.raw(), in.bytes());
    }
  };
}

PreparedOp same_bytes(const OpContext& ctx, std::vector<int64_t> shape) {
  const TensorInfo& in = ctx.input(0);
  if (element_count(shape) != in.elements()) {
    ctx.fail("cannot reshape {} ({} elements) to {} ({} elements)", info_string(in), in.elements(), shape_string(shape),
             element_count(shape));
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, std::move(shape)}};
  op.kernel = copy_kernel();
  op.aliases_input = true;
  return op;
}

PreparedOp prepare_reshape(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  const auto& in = ctx.input(0).shape;
  const auto requested = constant_ints(ctx, 1, "shape");
  const bool allow_zero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  std::vector<int64_t> shape;
  int64_t inferred = -1;
  int64_t known = 1;
  for (std::size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) {
        ctx.fail("shape {} copies dimension {} (0) from input {}, which has rank {}", shape_string(requested), i,
                 shape_string(in), in.size());
      }
      d = in[i];
    } else if (d == -1) {
      if (inferred >= 0) {
        ctx.fail("shape {} has more than one -1", shape_string(requested));
      }
      inferred = static_cast<int64_t>(i);
      d = 1;
    } else if (d < 0) {
      ctx.fail("shape {} has the invalid dimension {}", shape_string(requested), d);
    }
    shape.push_back(d);
    if (i != static_cast<std::size_t>(inferred)) {
      known = checked_mul(known, d, fmt::format("the element count of shape {}", shape_string(requested)));
    }
  }
  if (inferred >= 0) {
    if (allow_zero && std::find(requested.begin(), requested.end(), 0) != requested.end()) {
      ctx.fail("shape {} has both -1 and 0 while allowzero is set", shape_string(requested));
    }
    const int64_t total = element_count(in);
    if (known == 0 || total % known != 0) {
      ctx.fail("cannot reshape {} ({} elements) to {}: -1 cannot be inferred", shape_string(in), total,
               shape_string(requested));
    }
    shape[static_cast<std::size_t>(inferred)] = total / known;
  }
  return same_bytes(ctx, std::move(shape));
}

PreparedOp prepare_flatten(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto& in = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(in.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.fail("axis {} is out of range for rank {} (Flatten allows -rank..rank)", axis, rank);
  }
  if (axis < 0) {
    axis += rank;
  }
  const auto split = static_cast<std::size_t>(axis);
  return same_bytes(ctx, {element_count(std::span(in).first(split)), element_count(std::span(in).subspan(split))});
}

// Axes from the attribute (before `input_since`) or from input 1 (from that opset on).
std::optional<std::vector<int64_t>> axes_argument(const OpContext& ctx, int64_t input_since) {
  if (ctx.opset() < input_since) {
    if (ctx.attribute("axes") == nullptr) {
      return std::nullopt;
    }
    return ctx.attr_ints("axes");
  }
  if (!ctx.has_input(1)) {
    return std::nullopt;
  }
  return constant_ints(ctx, 1, "axes");
}

std::vector<bool> axis_mask(const OpContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> mask(static_cast<std::size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      ctx.fail("axis {} is out of range for rank {}", a, rank);
    }
    auto bit = mask[static_cast<std::size_t>(a < 0 ? a + rank : a)];
    if (bit) {
      ctx.fail("axis {} is given twice in {}", a, shape_string(axes));
    }
    bit = true;
  }
  return mask;
}

PreparedOp prepare_squeeze(OpContext& ctx) {
  ctx.expect_inputs(1, ctx.opset() >= 13 ? 2 : 1);
  const auto& in = ctx.input(0).shape;
  const auto axes = axes_argument(ctx, 13);
  std::vector<int64_t> shape;
  if (!axes) {
    std::copy_if(in.begin(), in.end(), std::back_inserter(shape), [](int64_t d) { return d != 1; });
  } else {
    const auto mask = axis_mask(ctx, *axes, static_cast<int64_t>(in.size()));
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (mask[i] && in[i] != 1) {
        ctx.fail("cannot squeeze axis {} of {}: its size is {}, not 1", i, shape_string(in), in[i]);
      }
      if (!mask[i]) {
        shape.push_back(in[i]);
      }
    }
  }
  return same_bytes(ctx, std::move(shape));
}

PreparedOp prepare_unsqueeze(OpContext& ctx) {
  ctx.expect_inputs(ctx.opset() >= 13 ? 2 : 1, ctx.opset() >= 13 ? 2 : 1);
  const auto& in = ctx.input(0).shape;
  const auto axes = axes_argument(ctx, 13);
  if (!axes) {
    ctx.fail("the axes are required");
  }
  const auto out_rank = static_cast<int64_t>(in.size() + axes->size());
  const auto mask = axis_mask(ctx, *axes, out_rank);
  std::vector<int64_t> shape;
  auto next = in.begin();
  for (std::size_t i = 0; i < mask.size(); ++i) {
    shape.push_back(mask[i] ? 1 : *next++);
  }
  return same_bytes(ctx, std::move(shape));
}

PreparedOp prepare_identity(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  return same_bytes(ctx, ctx.input(0).shape);
}

PreparedOp prepare_shape(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto& in = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(in.size());
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = ctx.opset() >= 15 ? clamp(ctx.attr_int("start", 0)) : 0;
  const int64_t end = ctx.opset() >= 15 ? clamp(ctx.attr_int("end", rank)) : rank;
  const std::vector<int64_t> dims(in.begin() + start, in.begin() + std::max(start, end));
  return constant_result(Tensor::from<int64_t>({static_cast<int64_t>(dims.size())}, std::span(dims)));
}

PreparedOp prepare_constant_of_shape(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto shape = constant_ints(ctx, 0, "shape");
  for (int64_t d : shape) {
    if (d < 0) {
      ctx.fail("shape {} has a negative dimension", shape_string(shape));
    }
  }
  Tensor value = Tensor::scalar<float>(0.0f);
  if (auto given = ctx.attr_tensor("value")) {
    if (given->elements() != 1) {
      ctx.fail("attribute 'value' must hold one element, it holds {}", given->elements());
    }
    value = std::move(*given);
  }
  Tensor out(value.dtype(), shape);
  const std::size_t size = element_size(value.dtype());
  for (int64_t i = 0; i < out.elements(); ++i) {
    std::memcpy(out.raw() + static_cast<std::size_t>(i) * size, value.raw(), size);
  }
  return constant_result(std::move(out));
}

PreparedOp prepare_expand(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  const TensorInfo in = ctx.input(0);
  const std::vector<std::vector<int64_t>> shapes{in.shape, constant_ints(ctx, 1, "shape")};
  std::string error;
  auto out_shape = broadcast_shape(shapes, error);
  if (!error.empty()) {
    ctx.fail("cannot expand {} to {}: {}", shape_string(in.shape), shape_string(shapes[1]), error);
  }
  const std::vector<std::vector<int64_t>> operands{in.shape, out_shape};
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, out_shape}};
  op.kernel = [bc = Broadcast(operands), dtype = in.dtype](KernelContext& k) {
    visit_element_width(dtype, [&]<class U>() {
      const U* src = reinterpret_cast<const U*>(k.input(0).raw());
      U* dst = reinterpret_cast<U*>(k.output(0).raw());
      bc.parallel_runs(k.pool,
                       [&](int64_t o, std::span<const int64_t> offsets, std::span<const int64_t> steps, int64_t n) {
                         if (steps[0] != 0) {
                           std::memcpy(dst + o, src + offsets[0], static_cast<std::size_t>(n) * sizeof(U));
                         } else {
                           std::fill(dst + o, dst + o + n, src[offsets[0]]);
                         }
                       });
    });
  };
  return op;
}

// ---- Cast ----

template <class T> float to_float(T v) {
  if constexpr (is_float_bits_v<T>) {
    return widen(v);
  } else {
    return static_cast<float>(v);
  }
}

// float64 keeps its precision; float16, bfloat16 and float32 widen to float.
template <class T> using widened_float = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Float to integer truncates toward zero as C does; values out of range (and NaN) saturate
// instead of being undefined behaviour (ONNX leaves them unspecified). To float16 and bfloat16
// rounds to nearest even (docs/conformance.md "bfloat16").
template <class To, class From> To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_float_bits_v<From>) {
      return widen(v) != 0.0f;
    } else {
      return v != From{0};
    }
  } else if constexpr (is_float_bits_v<To>) {
    return narrow<To>(to_float(v));
  } else if constexpr (std::is_same_v<To, float>) {
    return to_float(v);
  } else if constexpr (std::is_same_v<To, double>) {
    if constexpr (is_float_bits_v<From>) {
      return static_cast<double>(to_float(v));
    } else {
      return static_cast<double>(v);
    }
  } else if constexpr (std::is_floating_point_v<From> || is_float_bits_v<From>) {
    using F = widened_float<From>;
    F f{};
    if constexpr (is_float_bits_v<From>) {
      f = to_float(v);
    } else {
      f = static_cast<F>(v);
    }
    if (std::isnan(f)) {
      return To{0};
    }
    // The bounds in the float type: the largest float below 2^63 etc. keeps the conversion defined.
    constexpr F lo = static_cast<F>(std::numeric_limits<To>::min());
    constexpr F hi = static_cast<F>(std::numeric_limits<To>::max());
    if (f <= lo) {
      return std::numeric_limits<To>::min();
    }
    if (f >= hi) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(f);
  } else {
    return static_cast<To>(v);  // integer to integer: modular, as numpy's astype
  }
}

PreparedOp cast_to(OpContext& ctx, DataType to) {
  const TensorInfo in = ctx.input(0);
  if (!is_supported(to)) {
    ctx.fail("cast to element type {} is not supported by the host engine", dtype_name(to));
  }
  PreparedOp op;
  op.outputs = {TensorInfo{to, in.shape}};
  op.kernel = [from = in.dtype, to](KernelContext& k) {
    visit_dtype(from, [&]<class From>() {
      visit_dtype(to, [&]<class To>() {
        const From* src = k.input(0).data<From>();
        To* dst = k.output(0).data<To>();
        k.pool.parallel_for(k.input(0).elements(), int64_t{1} << 14, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            dst[i] = cast_value<To>(src[i]);
          }
        });
      });
    });
  };
  return op;
}

PreparedOp prepare_cast(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  return cast_to(ctx, static_cast<DataType>(ctx.attr_int("to", 0)));
}

// CastLike (opset 15): the element type of input 1, whose values are not read.
PreparedOp prepare_cast_like(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  return cast_to(ctx, ctx.input(1).dtype);
}

PreparedOp prepare_size(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  return constant_result(Tensor::scalar<int64_t>(ctx.input(0).elements()));
}

// Range: its length depends on the values of start, limit and delta, so they must be constants
// (they are in exported models); the output is then computed while planning.
PreparedOp prepare_range(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  const DataType dtype = ctx.input(0).dtype;
  for (std::size_t i = 0; i < 3; ++i) {
    if (ctx.input(i).dtype != dtype || ctx.input(i).elements() != 1) {
      ctx.fail("start, limit and delta must be scalars of one element type; input {} is {}", i,
               info_string(ctx.input(i)));
    }
    plan_time_constant(ctx, i, "bound or step that decides the output length");
  }
  return visit_dtype(dtype, [&]<class T>() -> PreparedOp {
    if constexpr (is_float_bits_v<T> || std::is_same_v<T, bool>) {
      ctx.fail("element type {} is not supported for Range", dtype_name(dtype));
    } else {
      const T start = ctx.constant(0)->data<T>()[0];
      const T limit = ctx.constant(1)->data<T>()[0];
      const T delta = ctx.constant(2)->data<T>()[0];
      if (delta == T{0}) {
        ctx.fail("delta is 0");
      }
      const double steps =
          std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      if (!(steps < 1e9)) {
        ctx.fail("the range from {} to {} by {} is too long", static_cast<double>(start), static_cast<double>(limit),
                 static_cast<double>(delta));
      }
      const auto count = static_cast<int64_t>(std::max(steps, 0.0));
      Tensor out(dtype, {count});
      T* data = out.data<T>();
      for (int64_t i = 0; i < count; ++i) {
        data[i] = static_cast<T>(start + static_cast<T>(i) * delta);  // as the ONNX reference: start + i * delta
      }
      return constant_result(std::move(out));
    }
  });
}

const OpRegistrar reshape_op{"Reshape", prepare_reshape, moves_values};
const OpRegistrar flatten_op{"Flatten", prepare_flatten, moves_values};
const OpRegistrar squeeze_op{"Squeeze", prepare_squeeze, moves_values};
const OpRegistrar unsqueeze_op{"Unsqueeze", prepare_unsqueeze, moves_values};
const OpRegistrar identity_op{"Identity", prepare_identity, moves_values};
const OpRegistrar shape_op{"Shape", prepare_shape};
const OpRegistrar constant_of_shape_op{"ConstantOfShape", prepare_constant_of_shape};
const OpRegistrar expand_op{"Expand", prepare_expand, moves_values};
const OpRegistrar cast_op{"Cast", prepare_cast};
const OpRegistrar cast_like_op{"CastLike", prepare_cast_like};
const OpRegistrar size_op{"Size", prepare_size};
const OpRegistrar range_op{"Range", prepare_range};

}  // namespace
}  // namespace rknnxx::host
