// The Reduce* operators: Mean, Sum, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare,
// over any set of axes, with keepdims and (from the opset that moves axes to an input)
// noop_with_empty_axes. float32 and float64 accumulate in double; int32 and int64 in int64;
// ReduceMax and ReduceMin also take bool from opset 20 on (any and all).
// Also ArgMax and ArgMin.

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace rknnxx::host {
namespace {

enum class Reduction { mean, sum, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

// The opset from which each reduction takes its axes as input 1 instead of an attribute.
constexpr int64_t axes_input_since(Reduction r) { return r == Reduction::sum ? 13 : 18; }

template <Reduction R, class Acc> struct Accumulator {
  Acc value = R == Reduction::prod ? Acc{1}
      : R == Reduction::max        ? std::numeric_limits<Acc>::lowest()
      : R == Reduction::min        ? std::numeric_limits<Acc>::max()
                                   : Acc{0};
  void add(Acc x) {
    if constexpr (R == Reduction::max) {
      value = std::max(value, x);
    } else if constexpr (R == Reduction::min) {
      value = std::min(value, x);
    } else if constexpr (R == Reduction::prod) {
      value *= x;
    } else if constexpr (R == Reduction::l1) {
      value += x < 0 ? -x : x;
    } else if constexpr (R == Reduction::l2 || R == Reduction::sum_square) {
      value += x * x;
    } else {
      value += x;
    }
  }
};

template <Reduction R, class T, class Acc> T finish(Acc value, int64_t count) {
  if constexpr (R == Reduction::mean) {
    return static_cast<T>(value / static_cast<Acc>(count));
  } else if constexpr (R == Reduction::l2) {
    return static_cast<T>(std::sqrt(static_cast<double>(value)));
  } else if constexpr (R == Reduction::log_sum) {
    return static_cast<T>(std::log(static_cast<double>(value)));
  } else {
    return static_cast<T>(value);
  }
}

template <Reduction R> PreparedOp prepare_reduce(OpContext& ctx) {
  const bool axes_from_input = ctx.opset() >= axes_input_since(R);
  ctx.expect_inputs(1, axes_from_input ? 2 : 1);
  constexpr bool integer_ok = R == Reduction::mean || R == Reduction::sum || R == Reduction::max ||
      R == Reduction::min || R == Reduction::prod || R == Reduction::l1 || R == Reduction::sum_square;
  constexpr bool bool_since_20 = R == Reduction::max || R == Reduction::min;
  if constexpr (bool_since_20) {
    if (ctx.opset() < 20 && ctx.input(0).dtype == DataType::boolean) {
      ctx.fail("bool input needs opset 20 or later (the model's opset is {})", ctx.opset());
    }
  }
  if constexpr (bool_since_20) {
    ctx.expect_dtype(0, {DataType::float32, DataType::float64, DataType::int32, DataType::int64, DataType::boolean});
  } else if constexpr (integer_ok) {
    ctx.expect_dtype(0, {DataType::float32, DataType::float64, DataType::int32, DataType::int64});
  } else {
    ctx.expect_dtype(0, {DataType::float32, DataType::float64});
  }
  const TensorInfo in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  std::vector<int64_t> axes;
  if (axes_from_input && ctx.attribute("axes") != nullptr) {
    ctx.fail("attribute 'axes' is the form before opset {}; at opset {} the axes are input 1", axes_input_since(R),
             ctx.opset());
  }
  if (axes_from_input) {
    if (ctx.has_input(1)) {
      axes = constant_ints(ctx, 1, "axes");
    }
  } else {
    axes = ctx.attr_ints("axes");
  }
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool noop = axes_from_input && ctx.attr_int("noop_with_empty_axes", 0) != 0;
  std::vector<bool> reduced(static_cast<std::size_t>(rank), axes.empty() && !noop);
  for (int64_t a : axes) {
    reduced[static_cast<std::size_t>(ctx.normalize_axis(a, rank))] = true;
  }
  std::vector<int64_t> shape;      // the output
  std::vector<int64_t> kept_dims;  // sizes and input strides of the kept axes, outermost first
  std::vector<int64_t> kept_strides;
  std::vector<int64_t> reduced_dims;
  std::vector<int64_t> reduced_strides;
  int64_t stride = 1;
  for (auto a = rank; a-- > 0;) {
    const auto i = static_cast<std::size_t>(a);
    if (reduced[i]) {
      reduced_dims.insert(reduced_dims.begin(), in.shape[i]);
      reduced_strides.insert(reduced_strides.begin(), stride);
    } else {
      kept_dims.insert(kept_dims.begin(), in.shape[i]);
      kept_strides.insert(kept_strides.begin(), stride);
    }
    stride *= in.shape[i];
  }
  for (std::size_t i = 0; i < in.shape.size(); ++i) {
    if (!reduced[i]) {
      shape.push_back(in.shape[i]);
    } else if (keepdims) {
      shape.push_back(1);
    }
  }
  // Offsets of every element of one reduced block, relative to its first element.
  std::vector<int64_t> block{0};
  for (std::size_t r = reduced_dims.size(); r-- > 0;) {
    std::vector<int64_t> next;
    next.reserve(block.size() * static_cast<std::size_t>(reduced_dims[r]));
    for (int64_t j = 0; j < reduced_dims[r]; ++j) {
      for (int64_t b : block) {
        next.push_back(j * reduced_strides[r] + b);
      }
    }
    block = std::move(next);
  }
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  const int64_t outputs = element_count(shape);
  op.kernel = [=, block = std::move(block)](KernelContext& k) {
    auto run = [&]<class T, class Acc>() {
      const T* src = k.input(0).data<T>();
      T* dst = k.output(0).data<T>();
      const auto count = static_cast<int64_t>(block.size());
      k.pool.parallel_for(outputs, std::max<int64_t>(1, 4096 / std::max<int64_t>(count, 1)),
                          [&](int64_t begin, int64_t end) {
                            for (int64_t o = begin; o < end; ++o) {
                              int64_t rest = o;
                              int64_t base = 0;
                              for (std::size_t a = kept_dims.size(); a-- > 0;) {
                                base += (rest % kept_dims[a]) * kept_strides[a];
                                rest /= kept_dims[a];
                              }
                              if constexpr (R == Reduction::log_sum_exp) {
                                double max = -std::numeric_limits<double>::infinity();
                                for (int64_t b : block) {
                                  max = std::max(max, static_cast<double>(src[base + b]));
                                }
                                double sum = 0;
                                for (int64_t b : block) {
                                  sum += std::exp(static_cast<double>(src[base + b]) - max);
                                }
                                dst[o] = static_cast<T>(std::isinf(max) ? max : max + std::log(sum));
                              } else {
                                Accumulator<R, Acc> acc;
                                for (int64_t b : block) {
                                  acc.add(static_cast<Acc>(src[base + b]));
                                }
                                dst[o] = finish<R, T>(acc.value, std::max<int64_t>(count, 1));
                              }
                            }
                          });
    };
    switch (k.input(0).dtype()) {
      case DataType::int32: run.template operator()<int32_t, int64_t>(); break;
      case DataType::int64: run.template operator()<int64_t, int64_t>(); break;
      case DataType::float64: run.template operator()<double, double>(); break;
      case DataType::boolean:
        if constexpr (bool_since_20) {
          run.template operator()<bool, bool>();  // max: any, min: all
        }
        break;
      default: run.template operator()<float, double>(); break;
    }
  };
  return op;
}

// ArgMax and ArgMin along one axis: int64 indices, the first extreme or (select_last_index)
// the last one.
template <bool max> PreparedOp prepare_arg(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32, DataType::int32, DataType::int64, DataType::int8, DataType::uint8});
  const TensorInfo in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank));
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  std::vector<int64_t> shape = in.shape;
  if (rank == 0) {
    ctx.fail("input must have rank 1 or more");
  }
  if (keepdims) {
    shape[axis] = 1;
  } else {
    shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  }
  const int64_t outer = element_count(std::span(in.shape).first(axis));
  const int64_t length = in.shape[axis];
  const int64_t inner = element_count(std::span(in.shape).subspan(axis + 1));
  if (length == 0) {
    ctx.fail("axis {} of {} is empty", axis, shape_string(in.shape));
  }
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::int64, shape}};
  op.kernel = [=, dtype = in.dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (is_float_bits_v<T> || std::is_same_v<T, bool>) {
        return;  // refused while planning
      } else {
        const T* src = k.input(0).data<T>();
        int64_t* dst = k.output(0).data<int64_t>();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            const T* p = src + o * length * inner + i;
            int64_t best = 0;
            for (int64_t j = 1; j < length; ++j) {
              const T v = p[j * inner];
              const T b = p[best * inner];
              const bool better = max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
              if (better) {
                best = j;
              }
            }
            dst[o * inner + i] = best;
          }
        }
      }
    });
  };
  return op;
}

const OpRegistrar arg_max_op{"ArgMax", prepare_arg<true>};
const OpRegistrar arg_min_op{"ArgMin", prepare_arg<false>};
const OpRegistrar reduce_mean_op{"ReduceMean", prepare_reduce<Reduction::mean>};
const OpRegistrar reduce_sum_op{"ReduceSum", prepare_reduce<Reduction::sum>};
const OpRegistrar reduce_max_op{"ReduceMax", prepare_reduce<Reduction::max>};
const OpRegistrar reduce_min_op{"ReduceMin", prepare_reduce<Reduction::min>};
const OpRegistrar reduce_prod_op{"ReduceProd", prepare_reduce<Reduction::prod>};
const OpRegistrar reduce_l1_op{"ReduceL1", prepare_reduce<Reduction::l1>};
const OpRegistrar reduce_l2_op{"ReduceL2", prepare_reduce<Reduction::l2>};
const OpRegistrar reduce_log_sum_op{"ReduceLogSum", prepare_reduce<Reduction::log_sum>};
const OpRegistrar reduce_log_sum_exp_op{"ReduceLogSumExp", prepare_reduce<Reduction::log_sum_exp>};
const OpRegistrar reduce_sum_square_op{"ReduceSumSquare", prepare_reduce<Reduction::sum_square>};

}  // namespace
}  // namespace rknnxx::host
