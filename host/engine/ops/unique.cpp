// Unique (opset 11): the distinct elements of a tensor (or, with `axis`, its distinct slices along
// the axis), sorted ascending or in order of first occurrence, with the index of each one's first
// occurrence, the inverse indices (where each input element or slice went) and the counts. How many
// there are depends on the data: of a constant it is computed while planning, of a computed tensor
// while running (docs/conformance.md#run-time-shapes), bounded by the input's size along the axis.

#include "../op_registry.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace rknnxx::host {
namespace {

PreparedOp prepare_unique(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0,
                   {DataType::float32, DataType::float64, DataType::int8, DataType::uint8, DataType::int16,
                    DataType::uint16, DataType::int32, DataType::uint32, DataType::int64, DataType::uint64});
  const TensorInfo& in = ctx.input(0);
  const bool has_axis = ctx.attribute("axis") != nullptr;
  const auto rank = static_cast<int64_t>(in.shape.size());
  if (has_axis && rank == 0) {
    ctx.fail("attribute 'axis' needs an input of rank 1 or more");
  }
  const auto axis = has_axis ? static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), rank)) : 0;
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  // Slices j of x[outer, length, inner]: the elements themselves when there is no axis.
  const int64_t length = has_axis ? in.shape[axis] : in.elements();
  const int64_t outer = has_axis ? element_count(std::span(in.shape).first(axis)) : 1;
  const int64_t inner = has_axis ? element_count(std::span(in.shape).subspan(axis + 1)) : 1;
  auto shape_for = [&](int64_t count) {
    std::vector<int64_t> shape = has_axis ? in.shape : std::vector<int64_t>{count};
    if (has_axis) {
      shape[axis] = count;
    }
    return shape;
  };
  const Tensor* x = ctx.constant(0);
  if (x == nullptr) {
    return run_time_shaped({TensorInfo{in.dtype, shape_for(length)}, TensorInfo{DataType::int64, {length}},
                            TensorInfo{DataType::int64, {length}}, TensorInfo{DataType::int64, {length}}});
  }
  PreparedOp op;
  visit_dtype(in.dtype, [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T* data = x->data<T>();
      const auto at = [&](int64_t slice, int64_t k) {
        return data[(k / inner) * length * inner + slice * inner + k % inner];
      };
      const int64_t slice_size = outer * inner;
      const auto less = [&](int64_t a, int64_t b) {
        for (int64_t k = 0; k < slice_size; ++k) {
          if (at(a, k) != at(b, k)) return at(a, k) < at(b, k);
        }
        return false;
      };
      const auto equal = [&](int64_t a, int64_t b) { return !less(a, b) && !less(b, a); };
      std::vector<int64_t> order(static_cast<std::size_t>(length));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), less);  // equal slices keep their first occurrence first
      std::vector<int64_t> firsts;                         // first occurrence of each distinct slice, ascending
      std::vector<int64_t> group_of(static_cast<std::size_t>(length));
      for (std::size_t i = 0; i < order.size(); ++i) {
        if (i == 0 || !equal(order[i - 1], order[i])) {
          firsts.push_back(order[i]);
        }
        group_of[static_cast<std::size_t>(order[i])] = static_cast<int64_t>(firsts.size() - 1);
      }
      // Output position of each group: ascending by value, or by first occurrence.
      std::vector<int64_t> position(firsts.size());
      std::iota(position.begin(), position.end(), int64_t{0});
      if (!sorted) {
        std::vector<int64_t> by_first(firsts.size());
        std::iota(by_first.begin(), by_first.end(), int64_t{0});
        std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
          return firsts[static_cast<std::size_t>(a)] < firsts[static_cast<std::size_t>(b)];
        });
        for (std::size_t p = 0; p < by_first.size(); ++p) {
          position[static_cast<std::size_t>(by_first[p])] = static_cast<int64_t>(p);
        }
      }
      const auto count = static_cast<int64_t>(firsts.size());
      Tensor y(in.dtype, shape_for(count));
      Tensor indices(DataType::int64, {count});
      Tensor inverse(DataType::int64, {length});
      Tensor counts(DataType::int64, {count});
      std::fill_n(counts.data<int64_t>(), count, int64_t{0});
      T* out = y.data<T>();
      for (std::size_t g = 0; g < firsts.size(); ++g) {
        const int64_t p = position[g];
        indices.data<int64_t>()[p] = firsts[g];
        for (int64_t k = 0; k < slice_size; ++k) {
          out[(k / inner) * count * inner + p * inner + k % inner] = at(firsts[g], k);
        }
      }
      for (int64_t j = 0; j < length; ++j) {
        const int64_t p = position[static_cast<std::size_t>(group_of[static_cast<std::size_t>(j)])];
        inverse.data<int64_t>()[j] = p;
        ++counts.data<int64_t>()[p];
      }
      std::vector<Tensor> results;
      for (Tensor* t : {&y, &indices, &inverse, &counts}) {
        results.push_back(std::move(*t));
      }
      op = constant_result(std::move(results));
    }
  });
  return op;
}

const OpRegistrar unique_op{"Unique", prepare_unique};

}  // namespace
}  // namespace rknnxx::host
