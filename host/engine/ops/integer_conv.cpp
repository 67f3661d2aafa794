// ConvInteger and QLinearConv (opset 10) on int8/uint8 data, 1-D and 2-D windows with groups,
// strides, dilations and pads (spatial.hpp), exact: each output is the int32 sum over its window
// of (x - x_zero_point) * (w - w_zero_point), padding contributing nothing (as if it held the
// zero point). ConvInteger outputs that; QLinearConv adds the int32 bias and requantizes
// (requantize.hpp). The weight zero point and scale are per tensor or per output channel.
// A direct loop over the output and its window: the accumulator never leaves a register.

#include "../op_registry.hpp"
#include "requantize.hpp"
#include "spatial.hpp"

#include <vector>

namespace rknnxx::host {
namespace {

struct IntegerConvPlan {
  WindowGeometry g;
  int64_t out_channels = 0;
  int64_t group = 1;
  int64_t in_per_group = 0;
};

// Inputs x and w at positions `xi` and `wi`; checks shapes and reads the window attributes.
IntegerConvPlan plan_integer_conv(const OpContext& ctx, std::size_t xi, std::size_t wi) {
  ctx.expect_dtype(xi, {DataType::int8, DataType::uint8});
  ctx.expect_dtype(wi, {DataType::int8, DataType::uint8});
  const auto& x = ctx.input(xi).shape;
  const auto& w = ctx.input(wi).shape;
  if (w.size() != x.size() || w.size() < 3) {
    ctx.fail("weights '{}' have shape {}, expected [M, C/group, k...] of the rank of input '{}' {}", ctx.input_name(wi),
             shape_string(w), ctx.input_name(xi), shape_string(x));
  }
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (ctx.attr_ints("kernel_shape", kernel) != kernel) {
    ctx.fail("kernel_shape does not match the weights '{}' {}", ctx.input_name(wi), shape_string(w));
  }
  IntegerConvPlan p;
  p.g = forward_window(ctx, kernel, false);
  p.group = ctx.attr_int("group", 1);
  p.out_channels = w[0];
  if (p.group < 1 || x[1] % p.group != 0 || w[0] % p.group != 0 || w[1] != x[1] / p.group) {
    ctx.fail("group {} does not divide input channels {} and output channels {} with {} channels per group in "
             "weights '{}'",
             p.group, x[1], w[0], w[1], ctx.input_name(wi));
  }
  p.in_per_group = w[1];
  return p;
}

// out[n, m, oy, ox] = the window sum for every output, then `finish(acc, m, index)`.
template <class X, class W, class Finish> void integer_conv(const IntegerConvPlan& p, ThreadPool& pool, const X* x,
                                                            const W* w, int32_t x_zero,
                                                            const std::vector<int32_t>& w_zero, Finish&& finish) {
  const WindowGeometry& g = p.g;
  const int64_t out_per_group = p.out_channels / p.group;
  const int64_t plane = g.out_size();
  const int64_t kernel = g.kernel_h * g.kernel_w;
  pool.parallel_for(g.batch * p.out_channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t nm = begin; nm < end; ++nm) {
      const int64_t n = nm / p.out_channels;
      const int64_t m = nm % p.out_channels;
      const int64_t first_channel = (m / out_per_group) * p.in_per_group;
      const int32_t wz = w_zero[static_cast<std::size_t>(m)];
      const W* wm = w + m * p.in_per_group * kernel;
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          int32_t acc = 0;
          for (int64_t c = 0; c < p.in_per_group; ++c) {
            const X* xc = x + (n * g.channels + first_channel + c) * g.in_size();
            const W* wc = wm + c * kernel;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
              const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
              if (iy < 0 || iy >= g.in_h) {
                continue;
              }
              for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
                if (ix < 0 || ix >= g.in_w) {
                  continue;
                }
                const int32_t term = (static_cast<int32_t>(xc[iy * g.in_w + ix]) - x_zero) *
                    (static_cast<int32_t>(wc[ky * g.kernel_w + kx]) - wz);
                acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(term));  // wraps
              }
            }
          }
          finish(acc, m, nm * plane + oy * g.out_w + ox);
        }
      }
    }
  });
}

std::vector<int32_t> per_channel_zero(const Tensor* zero, int64_t channels) {
  std::vector<int32_t> values(static_cast<std::size_t>(channels));
  for (int64_t m = 0; m < channels; ++m) {
    values[static_cast<std::size_t>(m)] = parameter<int32_t>(zero, m);
  }
  return values;
}

// Inputs: x, w, x_zero_point, w_zero_point.
PreparedOp prepare_conv_integer(OpContext& ctx) {
  ctx.expect_inputs(2, 4);
  const IntegerConvPlan p = plan_integer_conv(ctx, 0, 1);
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {ctx.input(0).dtype});
    expect_parameter(ctx, 2, 1, "x_zero_point");
  }
  if (ctx.has_input(3)) {
    ctx.expect_dtype(3, {ctx.input(1).dtype});
    expect_parameter(ctx, 3, p.out_channels, "w_zero_point");
  }
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::int32, p.g.output_shape(p.out_channels)}};
  op.kernel = [p, x_type = ctx.input(0).dtype, w_type = ctx.input(1).dtype](KernelContext& k) {
    const int32_t x_zero = parameter<int32_t>(k.optional_input(2), 0);
    const auto w_zero = per_channel_zero(k.optional_input(3), p.out_channels);
    int32_t* y = k.output(0).data<int32_t>();
    visit_int8_pair(x_type, w_type, [&]<class X, class W>() {
      integer_conv(p, k.pool, k.input(0).data<X>(), k.input(1).data<W>(), x_zero, w_zero,
                   [y](int32_t acc, int64_t, int64_t at) { y[at] = acc; });
    });
  };
  return op;
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32, optional).
PreparedOp prepare_qlinear_conv(OpContext& ctx) {
  ctx.expect_inputs(8, 9);
  const IntegerConvPlan p = plan_integer_conv(ctx, 0, 3);
  for (std::size_t i : {1, 4, 6}) {
    ctx.expect_dtype(i, {DataType::float32});
  }
  ctx.expect_dtype(2, {ctx.input(0).dtype});
  ctx.expect_dtype(5, {ctx.input(3).dtype});
  ctx.expect_dtype(7, {DataType::int8, DataType::uint8});
  expect_parameter(ctx, 1, 1, "x_scale");
  expect_parameter(ctx, 2, 1, "x_zero_point");
  expect_parameter(ctx, 4, p.out_channels, "w_scale");
  expect_parameter(ctx, 5, p.out_channels, "w_zero_point");
  expect_parameter(ctx, 6, 1, "y_scale");
  expect_parameter(ctx, 7, 1, "y_zero_point");
  if (ctx.has_input(8)) {
    ctx.expect_dtype(8, {DataType::int32});
    if (ctx.input(8).shape != std::vector<int64_t>{p.out_channels}) {
      ctx.fail("bias '{}' has shape {}, expected [{}]", ctx.input_name(8), shape_string(ctx.input(8).shape),
               p.out_channels);
    }
  }
  const DataType y_type = ctx.input(7).dtype;
  PreparedOp op;
  op.outputs = {TensorInfo{y_type, p.g.output_shape(p.out_channels)}};
  op.kernel = [p, x_type = ctx.input(0).dtype, w_type = ctx.input(3).dtype, y_type](KernelContext& k) {
    const int32_t x_zero = parameter<int32_t>(&k.input(2), 0);
    const auto w_zero = per_channel_zero(&k.input(5), p.out_channels);
    const float x_scale = parameter<float>(&k.input(1), 0);
    const float y_scale = parameter<float>(&k.input(6), 0);
    const int32_t y_zero = parameter<int32_t>(&k.input(7), 0);
    const Tensor* bias = k.optional_input(8);
    std::vector<float> multiplier(static_cast<std::size_t>(p.out_channels));
    std::vector<int32_t> offset(static_cast<std::size_t>(p.out_channels), 0);
    for (int64_t m = 0; m < p.out_channels; ++m) {
      multiplier[static_cast<std::size_t>(m)] =
          requantize_multiplier(x_scale, parameter<float>(&k.input(4), m), y_scale);
      if (bias != nullptr) {
        offset[static_cast<std::size_t>(m)] = bias->data<int32_t>()[m];
      }
    }
    visit_int8_pair(x_type, w_type, [&]<class X, class W>() {
      const X* x = k.input(0).data<X>();
      const W* w = k.input(3).data<W>();
      if (y_type == DataType::int8) {
        int8_t* y = k.output(0).data<int8_t>();
        integer_conv(p, k.pool, x, w, x_zero, w_zero, [&](int32_t acc, int64_t m, int64_t at) {
          const auto c = static_cast<std::size_t>(m);
          y[at] =
              requantize<int8_t>(static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(offset[c])),
                                 multiplier[c], y_zero);
        });
      } else {
        uint8_t* y = k.output(0).data<uint8_t>();
        integer_conv(p, k.pool, x, w, x_zero, w_zero, [&](int32_t acc, int64_t m, int64_t at) {
          const auto c = static_cast<std::size_t>(m);
          y[at] =
              requantize<uint8_t>(static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(offset[c])),
                                  multiplier[c], y_zero);
        });
      }
    });
  };
  return op;
}

const OpRegistrar conv_integer_op{"ConvInteger", prepare_conv_integer};
const OpRegistrar qlinear_conv_op{"QLinearConv", prepare_qlinear_conv};

}  // namespace
}  // namespace rknnxx::host
