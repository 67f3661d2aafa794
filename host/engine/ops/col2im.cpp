// Col2Im (opset 18): the inverse of an im2col. Input [N, C * prod(block_shape), L] holds, for each
// channel and position within a block, one value per block position; the blocks are laid over
// an image of image_shape (any number of axes) with strides, dilations and pads as a
// convolution's windows, and the values of overlapping blocks add up. Output [N, C, image_shape].
// The same col2im as ConvTranspose's (spatial.hpp).

#include "constant_inputs.hpp"
#include "introduced.hpp"
#include "spatial.hpp"

#include <algorithm>

namespace rknnxx::host {
namespace {

PreparedOp prepare_col2im(OpContext& ctx) {
  expect_introduced_in(ctx, 18);
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& x = ctx.input(0).shape;
  if (x.size() != 3) {
    ctx.fail("input '{}' has shape {}, expected [N, C * prod(block_shape), L]", ctx.input_name(0), shape_string(x));
  }
  const std::vector<int64_t> image = constant_ints(ctx, 1, "image shape");
  const std::vector<int64_t> block = constant_ints(ctx, 2, "block shape");
  const std::size_t spatial = image.size();
  if (spatial == 0 || block.size() != spatial) {
    ctx.fail("image_shape {} and block_shape {} must have the same number of axes, at least one", shape_string(image),
             shape_string(block));
  }
  const std::vector<int64_t> strides = window_attribute(ctx, "strides", 1, spatial);
  const std::vector<int64_t> dilations = window_attribute(ctx, "dilations", 1, spatial);
  const std::vector<int64_t> pads = window_attribute(ctx, "pads", 0, spatial * 2);
  std::vector<int64_t> blocks(spatial);
  for (std::size_t i = 0; i < spatial; ++i) {
    if (image[i] < 1 || block[i] < 1 || strides[i] < 1 || dilations[i] < 1 || pads[i] < 0 || pads[i + spatial] < 0) {
      ctx.fail("along axis {}: image size {}, block size {}, stride {} and dilation {} must be positive and pads {}, "
               "{} not negative",
               i, image[i], block[i], strides[i], dilations[i], pads[i], pads[i + spatial]);
    }
    const int64_t extent =
        checked_add(checked_mul(block[i] - 1, dilations[i], "the block extent"), 1, "the block extent");
    const int64_t padded =
        checked_add(checked_add(image[i], pads[i], "the padded image"), pads[i + spatial], "the padded image");
    if (padded < extent) {
      ctx.fail("the block (extent {}) is larger than the padded image ({}) along axis {}", extent, padded, i);
    }
    blocks[i] = (padded - extent) / strides[i] + 1;
  }
  const int64_t block_size = element_count(block);
  if (x[1] % block_size != 0) {
    ctx.fail("input '{}' has {} rows per image, not a multiple of the block size {}", ctx.input_name(0), x[1],
             block_size);
  }
  if (const int64_t count = element_count(blocks); x[2] != count) {
    ctx.fail("input '{}' has {} columns; the blocks fit {} times ({} per axis)", ctx.input_name(0), x[2], count,
             shape_string(blocks));
  }
  const int64_t channels = x[1] / block_size;
  std::vector<int64_t> out_shape{x[0], channels};
  out_shape.insert(out_shape.end(), image.begin(), image.end());
  (void)element_count(out_shape);  // counted without wrapping before the plan sizes it
  // The im2col geometry: the window's input positions are the block positions, its output the image.
  std::vector<int64_t> positions{x[0], channels};
  positions.insert(positions.end(), blocks.begin(), blocks.end());
  const WindowND g = window_nd_from(positions, block, strides, dilations, pads, image);
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, out_shape}};
  op.kernel = [g](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    const int64_t col_size = g.kernel_size() * g.in_size(), image_size = g.out_size();
    k.pool.parallel_for(g.batch * g.channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        float* dst = out + c * image_size;
        std::fill(dst, dst + image_size, 0.0f);
        col2im_channel(g, in + c * col_size, dst);
      }
    });
  };
  return op;
}

const OpRegistrar col2im_op{"Col2Im", prepare_col2im};

}  // namespace
}  // namespace rknnxx::host
