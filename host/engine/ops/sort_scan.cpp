// Operators that order or accumulate along one axis: TopK (values and int64 indices, ties to the
// lower index) and CumSum (inclusive or exclusive, forward or reverse).

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <numeric>
#include <type_traits>

namespace rknnxx::host {
namespace {

// `outer` blocks of `length` x `inner` elements around one axis.
struct AxisLines {
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;
};

AxisLines axis_lines(const std::vector<int64_t>& shape, std::size_t axis) {
  return {element_count(std::span(shape).first(axis)), shape[axis], element_count(std::span(shape).subspan(axis + 1))};
}

PreparedOp prepare_top_k(OpContext& ctx) {
  ctx.expect_inputs(ctx.opset() < 10 ? 1 : 2, ctx.opset() < 10 ? 1 : 2);
  ctx.expect_dtype(
      0, {DataType::float32, DataType::int8, DataType::uint8, DataType::int16, DataType::int32, DataType::int64});
  const TensorInfo in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  if (rank == 0) {
    ctx.fail("input '{}' must have rank 1 or more", ctx.input_name(0));
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", -1), rank));
  int64_t k = 0;
  if (ctx.opset() < 10) {
    k = ctx.attr_int("k", -1);
  } else if (ctx.constant(1) == nullptr) {
    // k computed by the network (k = min(300, count) in detectors): decided while running,
    // bounded by the axis (docs/conformance.md#run-time-shapes).
    std::vector<int64_t> bound = in.shape;
    return run_time_shaped({TensorInfo{in.dtype, bound}, TensorInfo{DataType::int64, bound}});
  } else {
    const auto ks = constant_ints(ctx, 1, "k");
    if (ks.size() != 1) {
      ctx.fail("input 'K' must hold one value, given {}", ks.size());
    }
    k = ks[0];
  }
  if (k < 0 || k > in.shape[axis]) {
    ctx.fail("k is {}, expected 0 to {} (the size of axis {})", k, in.shape[axis], axis);
  }
  const bool largest = ctx.attr_int("largest", 1) != 0;
  std::vector<int64_t> shape = in.shape;
  shape[axis] = k;
  const AxisLines lines = axis_lines(in.shape, axis);
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}, TensorInfo{DataType::int64, shape}};
  op.kernel = [lines, k, largest, dtype = in.dtype](KernelContext& kc) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        const T* src = kc.input(0).data<T>();
        T* values = kc.output(0).data<T>();
        int64_t* indices = kc.output(1).data<int64_t>();
        kc.pool.parallel_for(lines.outer * lines.inner, std::max<int64_t>(1, 1024 / std::max<int64_t>(1, lines.length)),
                             [&](int64_t begin, int64_t end) {
                               std::vector<int64_t> order(static_cast<std::size_t>(lines.length));
                               for (int64_t line = begin; line < end; ++line) {
                                 const int64_t o = line / lines.inner;
                                 const int64_t i = line - o * lines.inner;
                                 const T* x = src + o * lines.length * lines.inner + i;
                                 std::iota(order.begin(), order.end(), int64_t{0});
                                 const auto before = [&](int64_t a, int64_t b) {
                                   const T va = x[a * lines.inner];
                                   const T vb = x[b * lines.inner];
                                   if (va != vb) return largest ? va > vb : va < vb;
                                   return a < b;
                                 };
                                 std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
                                 const int64_t base = o * k * lines.inner + i;
                                 for (int64_t j = 0; j < k; ++j) {
                                   const auto at = static_cast<std::size_t>(j);
                                   values[base + j * lines.inner] = x[order[at] * lines.inner];
                                   indices[base + j * lines.inner] = order[at];
                                 }
                               }
                             });
      }
    });
  };
  return op;
}

PreparedOp prepare_cum_sum(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32, DataType::float64, DataType::int32, DataType::int64});
  ctx.expect_dtype(1, {DataType::int32, DataType::int64});
  if (ctx.input(1).elements() != 1) {
    ctx.fail("axis '{}' must hold one value, given shape {}", ctx.input_name(1), shape_string(ctx.input(1).shape));
  }
  const TensorInfo in = ctx.input(0);
  if (in.shape.empty()) {
    ctx.fail("input '{}' must have rank 1 or more", ctx.input_name(0));
  }
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  PreparedOp op;
  op.outputs = {in};
  op.kernel = [in, exclusive, reverse, label = ctx.node().label()](KernelContext& k) {
    const Tensor& a = k.input(1);
    int64_t axis = a.dtype() == DataType::int64 ? a.data<int64_t>()[0] : a.data<int32_t>()[0];
    const auto rank = static_cast<int64_t>(in.shape.size());
    if (axis < -rank || axis >= rank) {
      throw EngineError(fmt::format("{}: axis {} is out of range for rank {}", label, axis, rank));
    }
    axis = axis < 0 ? axis + rank : axis;
    const AxisLines lines = axis_lines(in.shape, static_cast<std::size_t>(axis));
    visit_dtype(in.dtype, [&]<class T>() {
      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        // Integers wrap on overflow (in unsigned arithmetic) instead of being undefined.
        using Acc = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<double>,
                                                std::make_unsigned<T>>::type;
        const T* src = k.input(0).data<T>();
        T* dst = k.output(0).data<T>();
        k.pool.parallel_for(lines.outer * lines.inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, lines.length)),
                            [&](int64_t begin, int64_t end) {
                              for (int64_t line = begin; line < end; ++line) {
                                const int64_t o = line / lines.inner;
                                const int64_t i = line - o * lines.inner;
                                const int64_t base = o * lines.length * lines.inner + i;
                                Acc sum{0};
                                for (int64_t j = 0; j < lines.length; ++j) {
                                  const int64_t at = base + (reverse ? lines.length - 1 - j : j) * lines.inner;
                                  const auto v = static_cast<Acc>(src[at]);
                                  if (exclusive) {
                                    dst[at] = static_cast<T>(sum);
                                    sum += v;
                                  } else {
                                    sum += v;
                                    dst[at] = static_cast<T>(sum);
                                  }
                                }
                              }
                            });
      }
    });
  };
  return op;
}

const OpRegistrar top_k_op{"TopK", prepare_top_k};
const OpRegistrar cum_sum_op{"CumSum", prepare_cum_sum};

}  // namespace
}  // namespace rknnxx::host
