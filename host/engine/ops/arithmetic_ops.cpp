// More arithmetic with numpy-style broadcasting: the variadic Min, Max, Sum and Mean (one or
// more inputs), Mod (integer mod with the divisor's sign, or C fmod) and BitShift.

#include "elementwise.hpp"

#include <cmath>
#include <type_traits>

namespace rknnxx::host {
namespace {

// The broadcast shape of every input, or a failure naming them.
std::vector<int64_t> variadic_shape(const OpContext& ctx) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    shapes.push_back(ctx.input(i).shape);
    names.push_back(fmt::format("'{}' {}", ctx.input_name(i), shape_string(ctx.input(i).shape)));
  }
  std::string error;
  auto shape = broadcast_shape(shapes, error);
  if (!error.empty()) {
    ctx.fail("inputs {}: {}", fmt::join(names, ", "), error);
  }
  return shape;
}

enum class Variadic { min, max, sum, mean };

template <Variadic kind, class T> T combine(T a, T b) {
  if constexpr (is_float_bits_v<T>) {
    return narrow<T>(combine<kind>(widen(a), widen(b)));
  } else if constexpr (kind == Variadic::min) {
    // NaN propagates, as in numpy and ONNX Runtime.
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return b < a ? b : a;
  } else if constexpr (kind == Variadic::max) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return a + b;
    }
    return a < b ? b : a;
  } else {
    return a + b;
  }
}

// The output is the first input broadcast to the result, then each further input is folded
// in, one pass over the output per input; Mean divides once at the end.
template <Variadic kind> PreparedOp prepare_variadic(OpContext& ctx) {
  if (ctx.input_count() == 0) {
    ctx.fail("expected at least one input");
  }
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    if constexpr (kind == Variadic::min || kind == Variadic::max) {
      ctx.expect_dtype(i,
                       {DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64, DataType::int8,
                        DataType::uint8, DataType::int16, DataType::uint16, DataType::int32, DataType::uint32,
                        DataType::int64, DataType::uint64});
    } else {
      ctx.expect_dtype(i, {DataType::float32, DataType::float16, DataType::bfloat16});
    }
    same_dtype(ctx, 0, i);
  }
  const DataType dtype = ctx.input(0).dtype;
  const std::vector<int64_t> shape = variadic_shape(ctx);
  std::vector<Broadcast> steps;  // output with input i
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    const std::vector<std::vector<int64_t>> pair{shape, ctx.input(i).shape};
    steps.emplace_back(pair);
  }
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, shape}};
  op.kernel = [steps = std::move(steps), dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        T* out = k.output(0).data<T>();
        broadcast_binary(steps[0], k.pool, out, k.input(0).data<T>(), out, [](T, T b) { return b; });
        for (std::size_t i = 1; i < steps.size(); ++i) {
          broadcast_binary(steps[i], k.pool, out, k.input(i).data<T>(), out,
                           [](T a, T b) { return combine<kind, T>(a, b); });
        }
        if constexpr (kind == Variadic::mean) {
          const float inverse = 1.0f / static_cast<float>(steps.size());
          if constexpr (is_float_bits_v<T>) {
            parallel_map(k.pool, out, out, k.output(0).elements(),
                         [inverse](T v) { return narrow<T>(widen(v) * inverse); });
          } else {
            parallel_map(k.pool, out, out, k.output(0).elements(), [inverse](T v) { return v * inverse; });
          }
        }
      }
    });
  };
  return op;
}

// Integer Mod takes the divisor's sign (Python's %); fmod=1 takes the dividend's (C's fmod).
// A zero divisor gives 0 instead of trapping.
template <class T> T integer_mod(T a, T b, bool c_fmod) {
  if (b == 0) return T{0};
  if constexpr (std::is_signed_v<T>) {
    if (b == T{-1}) return T{0};  // also INT_MIN % -1, which would trap
    auto r = static_cast<T>(a % b);
    if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) {
      r = static_cast<T>(r + b);
    }
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

PreparedOp prepare_mod(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0,
                   {DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64, DataType::int8,
                    DataType::uint8, DataType::int16, DataType::uint16, DataType::int32, DataType::uint32,
                    DataType::int64, DataType::uint64});
  const DataType dtype = same_dtype(ctx, 0, 1);
  const int64_t fmod = ctx.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) {
    ctx.fail("attribute 'fmod' is {}, expected 0 or 1", fmod);
  }
  if (fmod == 0 &&
      (dtype == DataType::float32 || dtype == DataType::float16 || dtype == DataType::bfloat16 ||
       dtype == DataType::float64)) {
    ctx.fail("floating-point inputs need attribute fmod=1 (C fmod); fmod=0 is for integers");
  }
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, bc.shape()}};
  op.kernel = [bc, dtype, c_fmod = fmod == 1](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      const T* a = k.input(0).data<T>();
      const T* b = k.input(1).data<T>();
      T* out = k.output(0).data<T>();
      if constexpr (is_float_bits_v<T>) {
        broadcast_binary(bc, k.pool, a, b, out, [](T x, T y) { return narrow<T>(std::fmod(widen(x), widen(y))); });
      } else if constexpr (std::is_floating_point_v<T>) {
        broadcast_binary(bc, k.pool, a, b, out, [](T x, T y) { return std::fmod(x, y); });
      } else if constexpr (!std::is_same_v<T, bool>) {
        broadcast_binary(bc, k.pool, a, b, out, [c_fmod](T x, T y) { return integer_mod<T>(x, y, c_fmod); });
      }
    });
  };
  return op;
}

// BitShift on unsigned integers; a shift by the type's width or more gives 0.
PreparedOp prepare_bit_shift(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::uint8, DataType::uint16, DataType::uint32, DataType::uint64});
  const DataType dtype = same_dtype(ctx, 0, 1);
  const std::string direction = ctx.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    ctx.fail("attribute 'direction' is '{}', expected LEFT or RIGHT", direction);
  }
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{ctx.input(0).dtype, bc.shape()}};
  op.kernel = [bc, dtype, left = direction == "LEFT"](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
        broadcast_binary(bc, k.pool, k.input(0).data<T>(), k.input(1).data<T>(), k.output(0).data<T>(),
                         [left](T x, T s) {
                           if (s >= 8 * sizeof(T)) return T{0};
                           return static_cast<T>(left ? x << s : x >> s);
                         });
      }
    });
  };
  return op;
}

const OpRegistrar min_op{"Min", prepare_variadic<Variadic::min>};
const OpRegistrar max_op{"Max", prepare_variadic<Variadic::max>};
const OpRegistrar sum_op{"Sum", prepare_variadic<Variadic::sum>};
const OpRegistrar mean_op{"Mean", prepare_variadic<Variadic::mean>};
const OpRegistrar mod_op{"Mod", prepare_mod};
const OpRegistrar bit_shift_op{"BitShift", prepare_bit_shift};

}  // namespace
}  // namespace rknnxx::host
