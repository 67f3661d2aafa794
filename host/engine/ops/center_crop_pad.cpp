// CenterCropPad (opset 18): each of the given axes (all by default) is cropped or zero-padded to
// its target length about its centre. A crop starts at floor((length - target) / 2); a pad puts
// floor((target - length) / 2) zeros before and the rest after. Any element type: the kernel
// copies whole runs of the last axis and zero-fills the rest.

#include "constant_inputs.hpp"
#include "introduced.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace rknnxx::host {
namespace {

PreparedOp prepare_center_crop_pad(OpContext& ctx) {
  expect_introduced_in(ctx, 18);
  ctx.expect_inputs(2, 2);
  const TensorInfo& data = ctx.input(0);
  const auto rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) {
    ctx.fail("input '{}' must have rank 1 or more", ctx.input_name(0));
  }
  const std::vector<int64_t> target = constant_ints(ctx, 1, "target shape");
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (ctx.attribute("axes") == nullptr) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (target.size() != axes.size()) {
    ctx.fail("input '{}' (the target shape) has {} values for {} axes", ctx.input_name(1), target.size(), axes.size());
  }
  std::vector<int64_t> out_shape = data.shape;
  std::vector<bool> seen(data.shape.size(), false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<std::size_t>(ctx.normalize_axis(axes[i], rank));
    if (seen[a]) {
      ctx.fail("attribute 'axes' names axis {} twice", a);
    }
    seen[a] = true;
    if (target[i] < 0) {
      ctx.fail("target length {} for axis {} is negative", target[i], a);
    }
    out_shape[a] = target[i];
  }
  (void)element_count(out_shape);  // counted without wrapping before the plan sizes it
  // Per axis: where the copied part starts in the input and in the output, and its length.
  const auto dims = data.shape.size();
  std::vector<int64_t> in_start(dims), out_start(dims), length(dims);
  for (std::size_t a = 0; a < dims; ++a) {
    const int64_t in = data.shape[a], out = out_shape[a];
    in_start[a] = in > out ? (in - out) / 2 : 0;
    out_start[a] = out > in ? (out - in) / 2 : 0;
    length[a] = std::min(in, out);
  }
  const std::size_t element = element_size(data.dtype);
  PreparedOp op;
  op.outputs = {TensorInfo{data.dtype, out_shape}};
  op.kernel = [=, in_shape = data.shape](KernelContext& k) {
    const std::byte* in = k.input(0).raw();
    std::byte* out = k.output(0).raw();
    const std::size_t last = dims - 1;
    const int64_t out_w = out_shape[last], in_w = in_shape[last];
    const int64_t rows = out_w > 0 ? k.output(0).elements() / out_w : 0;
    const auto bytes = [element](int64_t n) { return static_cast<std::size_t>(n) * element; };
    k.pool.parallel_for(
        rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, out_w)), [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            // The input row of output row r, or -1 when r lies in the padding of some axis.
            int64_t in_row = 0, rest = r;
            int64_t scale = 1;
            for (std::size_t a = last; a-- > 0 && in_row >= 0;) {
              const int64_t o = rest % out_shape[a];
              rest /= out_shape[a];
              const int64_t i = o - out_start[a];
              if (i < 0 || i >= length[a]) {
                in_row = -1;
              } else {
                in_row += (i + in_start[a]) * scale;
                scale *= in_shape[a];
              }
            }
            std::byte* dst = out + bytes(r * out_w);
            if (in_row < 0) {
              std::memset(dst, 0, bytes(out_w));
              continue;
            }
            const std::byte* src = in + bytes(in_row * in_w + in_start[last]);
            std::memset(dst, 0, bytes(out_start[last]));
            if (length[last] > 0) {
              std::memcpy(dst + bytes(out_start[last]), src, bytes(length[last]));
            }
            std::memset(dst + bytes(out_start[last] + length[last]), 0, bytes(out_w - out_start[last] - length[last]));
          }
        });
  };
  return op;
}

const OpRegistrar center_crop_pad_op{"CenterCropPad", prepare_center_crop_pad};

}  // namespace
}  // namespace rknnxx::host
