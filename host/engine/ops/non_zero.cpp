// NonZero (opsets 9 and 13): the indices [rank, count] (int64) of the non-zero elements, in
// row-major order. The count decides the output shape: of a constant, the indices are computed
// while planning; of a computed tensor, when running (docs/conformance.md#run-time-shapes), and the
// bound is [rank, elements].

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <vector>

namespace rknnxx::host {
namespace {

PreparedOp prepare_non_zero(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (ctx.constant(0) == nullptr) {
    const TensorInfo& in = ctx.input(0);
    return run_time_shaped({TensorInfo{DataType::int64, {static_cast<int64_t>(in.shape.size()), in.elements()}}});
  }
  const Tensor& x = *ctx.constant(0);
  const auto rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> positions;  // flat indices of the non-zero elements
  visit_dtype(x.dtype(), [&]<class T>() {
    const auto values = x.values<T>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      bool non_zero = false;
      if constexpr (is_float_bits_v<T>) {
        non_zero = widen(values[i]) != 0.0f;
      } else {
        non_zero = values[i] != T{0};
      }
      if (non_zero) {
        positions.push_back(static_cast<int64_t>(i));
      }
    }
  });
  const auto count = static_cast<int64_t>(positions.size());
  Tensor out(DataType::int64, {rank, count});
  int64_t* indices = out.data<int64_t>();
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = positions[static_cast<std::size_t>(j)];
    for (int64_t a = rank; a-- > 0;) {
      indices[a * count + j] = rest % x.dim(static_cast<std::size_t>(a));
      rest /= x.dim(static_cast<std::size_t>(a));
    }
  }
  return constant_result(std::move(out));
}

const OpRegistrar non_zero_op{"NonZero", prepare_non_zero};

}  // namespace
}  // namespace rknnxx::host
