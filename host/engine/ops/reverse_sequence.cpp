// ReverseSequence (opset 10): for each batch entry b, the first sequence_lens[b] steps along
// the time axis are reversed and the rest copied. Any element type (elements are moved, not
// read); the lengths are read when the kernel runs and each must lie within 0 to the number
// of time steps.

#include "../op_registry.hpp"
#include <algorithm>
#include <cstring>

namespace rknnxx::host {
namespace {

PreparedOp prepare_reverse_sequence(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(1, {DataType::int64});
  const TensorInfo in = ctx.input(0);
  if (in.shape.size() < 2) {
    ctx.fail("input '{}' has shape {}, expected rank 2 or more", ctx.input_name(0), shape_string(in.shape));
  }
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1);
  const int64_t time_axis = ctx.attr_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    ctx.fail("batch_axis {} and time_axis {}: expected 0 and 1 in either order", batch_axis, time_axis);
  }
  const int64_t batch = in.shape[static_cast<std::size_t>(batch_axis)];
  const int64_t steps = in.shape[static_cast<std::size_t>(time_axis)];
  if (ctx.input(1).shape != std::vector<int64_t>{batch}) {
    ctx.fail("sequence_lens '{}' has shape {}, expected [{}] (the batch size)", ctx.input_name(1),
             shape_string(ctx.input(1).shape), batch);
  }
  // One (batch, step) slice is `inner` contiguous elements; the two leading axes are [T, B] or
  // [B, T]. Strides count slices.
  const int64_t inner = element_count(std::span(in.shape).subspan(2));
  const int64_t batch_stride = batch_axis == 0 ? steps : 1;
  const int64_t step_stride = time_axis == 0 ? batch : 1;
  PreparedOp op;
  op.outputs = {in};
  op.kernel = [=, label = ctx.node().label()](KernelContext& k) {
    const int64_t* lengths = k.input(1).data<int64_t>();
    for (int64_t b = 0; b < batch; ++b) {
      if (lengths[b] < 0 || lengths[b] > steps) {
        throw EngineError(
            fmt::format("{}: sequence_lens[{}] is {}, outside 0 to {} (the time steps)", label, b, lengths[b], steps));
      }
    }
    const std::size_t slice = static_cast<std::size_t>(inner) * element_size(in.dtype);
    const std::byte* src = k.input(0).raw();
    std::byte* dst = k.output(0).raw();
    k.pool.parallel_for(
        batch * steps, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner)), [&](int64_t begin, int64_t end) {
          for (int64_t t = begin; t < end; ++t) {
            const int64_t b = t / steps;
            const int64_t s = t % steps;
            const int64_t from = s < lengths[b] ? lengths[b] - 1 - s : s;
            std::memcpy(dst + static_cast<std::size_t>(b * batch_stride + s * step_stride) * slice,
                        src + static_cast<std::size_t>(b * batch_stride + from * step_stride) * slice, slice);
          }
        });
  };
  return op;
}

const OpRegistrar reverse_sequence_op{"ReverseSequence", prepare_reverse_sequence};

}  // namespace
}  // namespace rknnxx::host
