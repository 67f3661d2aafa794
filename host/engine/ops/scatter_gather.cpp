// Index-driven gathers and scatters: GatherND, ScatterND, ScatterElements (and its deprecated
// name Scatter), with the optional add/mul/max/min reductions, OneHot, and Compress (whose
// condition decides the output shape, so it must be a constant). Indices may be
// negative (counted from the end); an index out of range stops the run with a message naming
// the node. Plain copies work on element bytes, so they are written once for every type.

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace rknnxx::host {
namespace {

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * shape[i];
  }
  return strides;
}

int64_t index_at(const Tensor& indices, int64_t e) {
  return indices.dtype() == DataType::int64 ? indices.data<int64_t>()[e] : indices.data<int32_t>()[e];
}

// `v` checked against a dimension of `size` and made non-negative.
int64_t checked_index(int64_t v, int64_t size, std::size_t axis, const std::string& label) {
  if (v < -size || v >= size) {
    throw EngineError(fmt::format("{}: index {} is out of range for axis {} of size {}", label, v, axis, size));
  }
  return v < 0 ? v + size : v;
}

enum class Reduction { none, add, mul, max, min };

Reduction reduction_of(const OpContext& ctx, DataType dtype) {
  const std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return Reduction::none;
  if (dtype == DataType::boolean || dtype == DataType::float16 || dtype == DataType::bfloat16) {
    ctx.fail("reduction '{}' is not supported for element type {}", r, dtype_name(dtype));
  }
  if (r == "add") return Reduction::add;
  if (r == "mul") return Reduction::mul;
  if (r == "max") return Reduction::max;
  if (r == "min") return Reduction::min;
  ctx.fail("attribute 'reduction' is '{}', expected none, add, mul, max or min", r);
}

// dst[i] = reduce(dst[i], src[i]) for n elements of `dtype` (a copy for Reduction::none).
void scatter_elements(Reduction reduction, DataType dtype, std::byte* dst, const std::byte* src, int64_t n) {
  if (reduction == Reduction::none) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * element_size(dtype));
    return;
  }
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      T* d = reinterpret_cast<T*>(dst);
      const T* s = reinterpret_cast<const T*>(src);
      for (int64_t i = 0; i < n; ++i) {
        switch (reduction) {
          case Reduction::add: d[i] = static_cast<T>(d[i] + s[i]); break;
          case Reduction::mul: d[i] = static_cast<T>(d[i] * s[i]); break;
          case Reduction::max: d[i] = std::max(d[i], s[i]); break;
          case Reduction::min: d[i] = std::min(d[i], s[i]); break;
          case Reduction::none: break;
        }
      }
    }
  });
}

// The geometry GatherND and ScatterND share: indices [..., m] address slices of data.
struct IndexedSlices {
  int64_t batches = 1;        // product of the batch dimensions
  int64_t batch_data = 1;     // data elements per batch
  int64_t tuples = 1;         // index tuples per batch
  int64_t depth = 0;          // m: dimensions each tuple addresses
  int64_t slice = 1;          // elements per addressed slice
  std::vector<int64_t> dims;  // the m addressed dimensions
  std::vector<int64_t> strides;

  // Element offset (in data) of tuple t of batch b, whose values start at `tuple`.
  int64_t offset(const Tensor& indices, int64_t b, int64_t t, const std::string& label) const {
    int64_t offset = b * batch_data;
    const int64_t first = (b * tuples + t) * depth;
    for (int64_t j = 0; j < depth; ++j) {
      const auto a = static_cast<std::size_t>(j);
      offset += checked_index(index_at(indices, first + j), dims[a], a, label) * strides[a];
    }
    return offset;
  }
};

IndexedSlices indexed_slices(const OpContext& ctx, int64_t batch_dims) {
  ctx.expect_dtype(1, {DataType::int64});
  const auto& data = ctx.input(0).shape;
  const auto& indices = ctx.input(1).shape;
  const auto r = static_cast<int64_t>(data.size());
  const auto q = static_cast<int64_t>(indices.size());
  if (r < 1 || q < 1) {
    ctx.fail("data {} and indices {} must have rank 1 or more", shape_string(data), shape_string(indices));
  }
  if (batch_dims < 0 || batch_dims >= std::min(q, r)) {
    ctx.fail("batch_dims {} must be below the ranks of data {} and indices {}", batch_dims, shape_string(data),
             shape_string(indices));
  }
  const auto b = static_cast<std::size_t>(batch_dims);
  if (!std::equal(data.begin(), data.begin() + batch_dims, indices.begin())) {
    ctx.fail("the first {} dimensions of data {} and indices {} must agree", batch_dims, shape_string(data),
             shape_string(indices));
  }
  IndexedSlices s;
  s.depth = indices.back();
  if (s.depth < 1 || s.depth > r - batch_dims) {
    ctx.fail("the last dimension of indices {} must be 1 to {}", shape_string(indices), r - batch_dims);
  }
  const auto m = static_cast<std::size_t>(s.depth);
  s.batches = element_count(std::span(data).first(b));
  s.batch_data = element_count(std::span(data).subspan(b));
  s.tuples = element_count(std::span(indices).subspan(b, indices.size() - 1 - b));
  s.slice = element_count(std::span(data).subspan(b + m));
  s.dims.assign(data.begin() + batch_dims, data.begin() + batch_dims + s.depth);
  const auto all = strides_of(data);
  s.strides.assign(all.begin() + batch_dims, all.begin() + batch_dims + s.depth);
  return s;
}

PreparedOp prepare_gather_nd(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  const int64_t batch_dims = ctx.attr_int("batch_dims", 0);
  const IndexedSlices s = indexed_slices(ctx, batch_dims);
  const auto& data = ctx.input(0).shape;
  const auto& indices = ctx.input(1).shape;
  std::vector<int64_t> shape(indices.begin(), indices.end() - 1);
  shape.insert(shape.end(), data.begin() + batch_dims + s.depth, data.end());
  const DataType dtype = ctx.input(0).dtype;
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, shape}};
  op.kernel = [s, dtype, label = ctx.node().label()](KernelContext& k) {
    const std::size_t size = element_size(dtype);
    const std::size_t slice_bytes = static_cast<std::size_t>(s.slice) * size;
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    for (int64_t b = 0; b < s.batches; ++b) {
      for (int64_t t = 0; t < s.tuples; ++t) {
        const int64_t from = s.offset(k.input(1), b, t, label);
        std::memcpy(dst + static_cast<std::size_t>(b * s.tuples + t) * slice_bytes,
                    src + static_cast<std::size_t>(from) * size, slice_bytes);
      }
    }
  };
  return op;
}

PreparedOp prepare_scatter_nd(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  const IndexedSlices s = indexed_slices(ctx, 0);
  const DataType dtype = ctx.input(0).dtype;
  ctx.expect_dtype(2, {dtype});
  const auto& data = ctx.input(0).shape;
  const auto& indices = ctx.input(1).shape;
  std::vector<int64_t> updates(indices.begin(), indices.end() - 1);
  updates.insert(updates.end(), data.begin() + s.depth, data.end());
  if (ctx.input(2).shape != updates) {
    ctx.fail("updates '{}' have shape {}, expected {}", ctx.input_name(2), shape_string(ctx.input(2).shape),
             shape_string(updates));
  }
  const Reduction reduction = reduction_of(ctx, dtype);
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [s, dtype, reduction, label = ctx.node().label()](KernelContext& k) {
    const std::size_t size = element_size(dtype);
    std::byte* dst = k.output(0).raw();
    std::memcpy(dst, k.input(0).raw(), k.input(0).bytes());
    const std::byte* src = k.input(2).raw();
    for (int64_t t = 0; t < s.tuples; ++t) {
      const int64_t to = s.offset(k.input(1), 0, t, label);
      scatter_elements(reduction, dtype, dst + static_cast<std::size_t>(to) * size,
                       src + static_cast<std::size_t>(t * s.slice) * size, s.slice);
    }
  };
  return op;
}

PreparedOp prepare_scatter_elements(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(1, {DataType::int64, DataType::int32});
  const TensorInfo data = ctx.input(0);
  const TensorInfo indices = ctx.input(1);
  ctx.expect_dtype(2, {data.dtype});
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (indices.shape.size() != data.shape.size() || rank == 0) {
    ctx.fail("indices {} must have the rank of data {} (at least 1)", shape_string(indices.shape),
             shape_string(data.shape));
  }
  if (ctx.input(2).shape != indices.shape) {
    ctx.fail("updates '{}' have shape {}, expected the shape of indices {}", ctx.input_name(2),
             shape_string(ctx.input(2).shape), shape_string(indices.shape));
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank));
  const Reduction reduction = reduction_of(ctx, data.dtype);
  PreparedOp op;
  op.outputs = {data};
  op.kernel = [axis, reduction, data, shape = indices.shape, label = ctx.node().label()](KernelContext& k) {
    const auto strides = strides_of(data.shape);
    const std::size_t size = element_size(data.dtype);
    std::byte* dst = k.output(0).raw();
    std::memcpy(dst, k.input(0).raw(), k.input(0).bytes());
    const std::byte* src = k.input(2).raw();
    const int64_t total = element_count(shape);
    for (int64_t e = 0; e < total; ++e) {
      const int64_t v = checked_index(index_at(k.input(1), e), data.shape[axis], axis, label);
      int64_t rest = e;
      int64_t offset = 0;
      for (std::size_t a = shape.size(); a-- > 0;) {
        const int64_t i = rest % shape[a];
        rest /= shape[a];
        offset += (a == axis ? v : i) * strides[a];
      }
      scatter_elements(reduction, data.dtype, dst + static_cast<std::size_t>(offset) * size,
                       src + static_cast<std::size_t>(e) * size, 1);
    }
  };
  return op;
}

// OneHot(indices, depth, values [off, on]): depth is inserted at `axis`.
PreparedOp prepare_one_hot(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  const TensorInfo indices = ctx.input(0);
  visit_dtype(indices.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool> || is_float_bits_v<T>) {
      ctx.fail("indices of element type {} are not supported", dtype_name(indices.dtype));
    }
  });
  const Tensor& depth_tensor = plan_time_constant(ctx, 1, "depth");
  if (depth_tensor.elements() != 1) {
    ctx.fail("depth must hold one value, given shape {}", shape_string(depth_tensor.shape()));
  }
  const int64_t depth = visit_dtype(depth_tensor.dtype(), [&]<class T>() -> int64_t {
    if constexpr (is_float_bits_v<T>) {
      return static_cast<int64_t>(widen(depth_tensor.data<T>()[0]));
    } else {
      return static_cast<int64_t>(depth_tensor.data<T>()[0]);
    }
  });
  if (depth < 1) {
    ctx.fail("depth is {}, expected a positive count", depth);
  }
  if (ctx.input(2).elements() != 2) {
    ctx.fail("values '{}' must hold two elements [off, on], given shape {}", ctx.input_name(2),
             shape_string(ctx.input(2).shape));
  }
  const auto rank = static_cast<int64_t>(indices.shape.size()) + 1;
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", -1), rank));
  std::vector<int64_t> shape = indices.shape;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), depth);
  const int64_t outer = element_count(std::span(indices.shape).first(axis));
  const int64_t inner = element_count(std::span(indices.shape).subspan(axis));
  const DataType dtype = ctx.input(2).dtype;
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, shape}};
  op.kernel = [outer, inner, depth, dtype, index_type = indices.dtype](KernelContext& k) {
    const std::size_t size = element_size(dtype);
    const std::byte* off = k.input(2).raw();
    const std::byte* on = off + size;
    std::byte* dst = k.output(0).raw();
    visit_dtype(index_type, [&]<class T>() {
      if constexpr (!std::is_same_v<T, bool> && !is_float_bits_v<T>) {
        const T* idx = k.input(0).data<T>();
        for (int64_t o = 0; o < outer; ++o) {
          for (int64_t d = 0; d < depth; ++d) {
            for (int64_t i = 0; i < inner; ++i) {
              const T raw = idx[o * inner + i];
              int64_t v = -1;  // a NaN or huge float index matches no position
              if constexpr (std::is_floating_point_v<T>) {
                if (std::fabs(raw) < 9.0e18f) v = static_cast<int64_t>(raw);
              } else {
                v = static_cast<int64_t>(raw);
              }
              v = v < 0 ? v + depth : v;
              const auto at = static_cast<std::size_t>((o * depth + d) * inner + i) * size;
              std::memcpy(dst + at, v == d ? on : off, size);
            }
          }
        }
      }
    });
  };
  return op;
}

// Compress(input, condition, axis): the slices along `axis` (of the flattened input without
// it) whose condition is true; a condition shorter than the axis drops the rest.
PreparedOp prepare_compress(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DataType::boolean});
  const Tensor& condition = plan_time_constant(ctx, 1, "condition");
  if (condition.rank() != 1) {
    ctx.fail("condition must be 1-D, given shape {}", shape_string(condition.shape()));
  }
  const TensorInfo in = ctx.input(0);
  const bool flatten = ctx.attribute("axis") == nullptr;
  std::vector<int64_t> shape = flatten ? std::vector<int64_t>{in.elements()} : in.shape;
  const auto axis = flatten
      ? std::size_t{0}
      : static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), static_cast<int64_t>(in.shape.size())));
  if (condition.elements() > shape[axis]) {
    ctx.fail("condition has {} values, axis {} of {} only {}", condition.elements(), axis, shape_string(in.shape),
             shape[axis]);
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < condition.elements(); ++i) {
    if (condition.data<bool>()[i]) kept.push_back(i);
  }
  const int64_t outer = element_count(std::span(shape).first(axis));
  const int64_t inner = element_count(std::span(shape).subspan(axis + 1));
  const int64_t length = shape[axis];
  shape[axis] = static_cast<int64_t>(kept.size());
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.kernel = [kept = std::move(kept), outer, inner, length, dtype = in.dtype](KernelContext& k) {
    const std::size_t row = static_cast<std::size_t>(inner) * element_size(dtype);
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i : kept) {
        std::memcpy(dst, src + static_cast<std::size_t>(o * length + i) * row, row);
        dst += row;
      }
    }
  };
  return op;
}

const OpRegistrar gather_nd_op{"GatherND", prepare_gather_nd, moves_values};
const OpRegistrar scatter_nd_op{"ScatterND", prepare_scatter_nd};
const OpRegistrar scatter_elements_op{"ScatterElements", prepare_scatter_elements};
const OpRegistrar scatter_op{"Scatter", prepare_scatter_elements};
const OpRegistrar one_hot_op{"OneHot", prepare_one_hot};
const OpRegistrar compress_op{"Compress", prepare_compress};

}  // namespace
}  // namespace rknnxx::host
