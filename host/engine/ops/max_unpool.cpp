// MaxUnpool (opsets 9 and 11): the partial inverse of MaxPool. The output is zero but for
// each X[i], written at the flat position I[i] (MaxPool's Indices: offsets in the whole tensor,
// batch and channel included) of the inferred shape, (in - 1) * stride - pad_begin - pad_end +
// kernel on each spatial axis. When output_shape is given (a constant) the output has that shape
// and each element goes to the same coordinates there. Indices are checked when the kernel runs;
// one outside the shape is an error.

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <cstring>

namespace rknnxx::host {
namespace {

PreparedOp prepare_max_unpool(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0,
                   {DataType::float32, DataType::float16, DataType::float64, DataType::int8, DataType::uint8,
                    DataType::int16, DataType::int32, DataType::int64});
  ctx.expect_dtype(1, {DataType::int64});
  const TensorInfo in = ctx.input(0);
  if (in.shape.size() < 3) {
    ctx.fail("input '{}' has shape {}, expected [N, C, spatial...]", ctx.input_name(0), shape_string(in.shape));
  }
  if (ctx.input(1).shape != in.shape) {
    ctx.fail("indices '{}' have shape {}, expected the input's {}", ctx.input_name(1), shape_string(ctx.input(1).shape),
             shape_string(in.shape));
  }
  const std::size_t spatial = in.shape.size() - 2;
  const auto kernel = ctx.attr_ints("kernel_shape");
  if (kernel.size() != spatial) {
    ctx.fail("kernel_shape has {} entries for {} spatial axes", kernel.size(), spatial);
  }
  const auto strides = ctx.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const auto pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (strides.size() != spatial || pads.size() != 2 * spatial) {
    ctx.fail("strides has {} and pads {} entries, expected {} and {}", strides.size(), pads.size(), spatial,
             2 * spatial);
  }
  std::vector<int64_t> inferred{in.shape[0], in.shape[1]};
  for (std::size_t a = 0; a < spatial; ++a) {
    if (kernel[a] < 1 || strides[a] < 1 || pads[a] < 0 || pads[a + spatial] < 0) {
      ctx.fail("axis {}: kernel {}, stride {} and pads {}, {} must be positive (pads not negative)", a, kernel[a],
               strides[a], pads[a], pads[a + spatial]);
    }
    const std::string what = fmt::format("the output extent of spatial axis {}", a);
    const int64_t extent =
        checked_add(checked_sub(checked_mul(std::max<int64_t>(in.shape[a + 2] - 1, 0), strides[a], what),
                                checked_add(pads[a], pads[a + spatial], what), what),
                    kernel[a], what);
    if (extent < 0) {
      ctx.fail("axis {}: the pads leave an output extent of {}", a, extent);
    }
    inferred.push_back(extent);
  }
  (void)element_count(inferred);  // counted without wrapping before indices are checked against it
  std::vector<int64_t> shape = inferred;
  if (ctx.has_input(2)) {
    shape = constant_ints(ctx, 2, "output shape");
    if (shape.size() != in.shape.size() || shape[0] != in.shape[0] || shape[1] != in.shape[1]) {
      ctx.fail("output_shape {} does not match input shape {} in rank, batch and channels", shape_string(shape),
               shape_string(in.shape));
    }
  }
  TensorInfo out{in.dtype, shape};
  (void)out.bytes();  // refuses shapes beyond what a tensor may take
  PreparedOp op;
  op.outputs = {out};
  // Indices address the inferred shape (MaxPool's input); a given output_shape places each
  // element at the same coordinates of that shape, where they fit.
  const bool remap = shape != inferred;
  op.kernel = [dtype = in.dtype, inferred, shape, remap, label = ctx.node().label()](KernelContext& k) {
    Tensor& y = k.output(0);
    std::memset(y.raw(), 0, y.bytes());
    const int64_t* index = k.input(1).data<int64_t>();
    const int64_t count = k.input(0).elements();
    const int64_t limit = element_count(inferred);
    const std::size_t size = element_size(dtype);
    const std::byte* src = k.input(0).raw();
    std::byte* dst = y.raw();
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = index[i];
      if (at < 0 || at >= limit) {
        throw EngineError(fmt::format("{}: index {} at position {} is outside the {} elements of shape {}", label, at,
                                      i, limit, shape_string(inferred)));
      }
      if (remap) {
        int64_t rest = at;
        int64_t stride = 1;
        at = 0;
        for (std::size_t a = inferred.size(); a-- > 0;) {
          const int64_t coordinate = rest % inferred[a];
          rest /= inferred[a];
          if (coordinate >= shape[a]) {
            throw EngineError(fmt::format("{}: index {} at position {} lies outside output_shape {}", label, index[i],
                                          i, shape_string(shape)));
          }
          at += coordinate * stride;
          stride *= shape[a];
        }
      }
      std::memcpy(dst + static_cast<std::size_t>(at) * size, src + static_cast<std::size_t>(i) * size, size);
    }
  };
  return op;
}

const OpRegistrar max_unpool_op{"MaxUnpool", prepare_max_unpool};

}  // namespace
}  // namespace rknnxx::host
