// DeformConv (opset 19), 2-D: a convolution whose every kernel tap reads the input at its usual
// position plus a learned offset (offset input, one (dy, dx) pair per offset group, kernel tap
// and output position), bilinearly interpolated with zeros outside the image, times an optional
// mask. Each image and group is an im2col of those samples followed by one GEMM, as Conv's
// im2col path; groups, offset groups, strides, dilations, pads and bias as Conv's.

#include "../gemm.hpp"
#include "introduced.hpp"

#include <algorithm>
#include <cmath>

namespace rknnxx::host {
namespace {

struct DeformPlan {
  int64_t batch = 0, channels = 0, h = 0, w = 0;
  int64_t out_channels = 0, group = 1, offset_group = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  int64_t oh = 0, ow = 0;
};

// The input plane at (y, x), bilinear between the four pixels around it; pixels outside the
// plane count as 0.
float sample(const float* plane, int64_t h, int64_t w, float y, float x) {
  if (!(y > -1.0f && y < static_cast<float>(h) && x > -1.0f && x < static_cast<float>(w))) {
    return 0.0f;
  }
  const float fy = std::floor(y), fx = std::floor(x);
  const auto y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const float ly = y - fy, lx = x - fx;
  auto at = [&](int64_t r, int64_t c) { return r >= 0 && r < h && c >= 0 && c < w ? plane[r * w + c] : 0.0f; };
  return (1.0f - ly) * ((1.0f - lx) * at(y0, x0) + lx * at(y0, x0 + 1)) +
      ly * ((1.0f - lx) * at(y0 + 1, x0) + lx * at(y0 + 1, x0 + 1));
}

PreparedOp prepare_deform_conv(OpContext& ctx) {
  expect_introduced_in(ctx, 19);
  ctx.expect_inputs(3, 5);
  for (std::size_t i = 0; i < 5; ++i) {
    if (ctx.has_input(i)) ctx.expect_dtype(i, {DataType::float32});
  }
  const auto& x = ctx.input(0).shape;
  const auto& wt = ctx.input(1).shape;
  if (x.size() != 4 || wt.size() != 4) {
    ctx.fail("inputs '{}' {} and '{}' {}: the host engine runs 2-D DeformConv ([N, C, H, W] and [M, C / group, kH, "
             "kW])",
             ctx.input_name(0), shape_string(x), ctx.input_name(1), shape_string(wt));
  }
  DeformPlan p;
  p.batch = x[0], p.channels = x[1], p.h = x[2], p.w = x[3];
  p.out_channels = wt[0], p.kh = wt[2], p.kw = wt[3];
  p.group = ctx.attr_int("group", 1);
  p.offset_group = ctx.attr_int("offset_group", 1);
  if (p.group < 1 || p.channels % p.group != 0 || p.out_channels % p.group != 0 || wt[1] != p.channels / p.group) {
    ctx.fail("group {} does not split the {} input channels into the weights' {} and the {} output channels", p.group,
             p.channels, wt[1], p.out_channels);
  }
  if (p.offset_group < 1 || p.channels % p.offset_group != 0) {
    ctx.fail("attribute 'offset_group' is {}, expected a positive divisor of the {} channels", p.offset_group,
             p.channels);
  }
  if (const auto kernel = ctx.attr_ints("kernel_shape", {p.kh, p.kw}); kernel != std::vector<int64_t>{p.kh, p.kw}) {
    ctx.fail("attribute 'kernel_shape' {} does not match the weights {}", shape_string(kernel), shape_string(wt));
  }
  const auto strides = ctx.attr_ints("strides", {1, 1});
  const auto dilations = ctx.attr_ints("dilations", {1, 1});
  const auto pads = ctx.attr_ints("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4 || strides[0] < 1 || strides[1] < 1 ||
      dilations[0] < 1 || dilations[1] < 1 || std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v < 0; })) {
    ctx.fail("strides {} and dilations {} must be two positive values and pads {} four non-negative ones",
             shape_string(strides), shape_string(dilations), shape_string(pads));
  }
  p.sh = strides[0], p.sw = strides[1], p.dh = dilations[0], p.dw = dilations[1];
  p.pad_top = pads[0], p.pad_left = pads[1];
  const int64_t extent_h = checked_add(checked_mul(p.kh - 1, p.dh, "the kernel extent"), 1, "the kernel extent");
  const int64_t extent_w = checked_add(checked_mul(p.kw - 1, p.dw, "the kernel extent"), 1, "the kernel extent");
  const int64_t span_h =
      checked_add(checked_add(p.h, pads[0], "the padded input"), pads[2], "the padded input") - extent_h;
  const int64_t span_w =
      checked_add(checked_add(p.w, pads[1], "the padded input"), pads[3], "the padded input") - extent_w;
  if (span_h < 0 || span_w < 0) {
    ctx.fail("the kernel (extent {} x {}) is larger than the padded input {}", extent_h, extent_w, shape_string(x));
  }
  p.oh = span_h / p.sh + 1;
  p.ow = span_w / p.sw + 1;
  const int64_t taps = p.kh * p.kw;
  const std::vector<int64_t> offset_shape{p.batch, checked_mul(p.offset_group * 2, taps, "the offset channels"), p.oh,
                                          p.ow};
  if (ctx.input(2).shape != offset_shape) {
    ctx.fail("input '{}' (the offsets) has shape {}, expected {}", ctx.input_name(2), shape_string(ctx.input(2).shape),
             shape_string(offset_shape));
  }
  if (ctx.has_input(3) && ctx.input(3).shape != std::vector<int64_t>{p.out_channels}) {
    ctx.fail("input '{}' (the bias) has shape {}, expected [{}]", ctx.input_name(3), shape_string(ctx.input(3).shape),
             p.out_channels);
  }
  const std::vector<int64_t> mask_shape{p.batch, p.offset_group * taps, p.oh, p.ow};
  if (ctx.has_input(4) && ctx.input(4).shape != mask_shape) {
    ctx.fail("input '{}' (the mask) has shape {}, expected {}", ctx.input_name(4), shape_string(ctx.input(4).shape),
             shape_string(mask_shape));
  }
  const std::vector<int64_t> out_shape{p.batch, p.out_channels, p.oh, p.ow};
  (void)element_count(out_shape);
  // One group's columns: (C / group) * kH * kW rows of oH * oW samples.
  const int64_t col_elements = checked_mul(checked_mul(p.channels / p.group, taps, "the DeformConv columns"),
                                           p.oh * p.ow, "the DeformConv columns");
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, out_shape}};
  op.scratch_bytes = static_cast<std::size_t>(checked_mul(col_elements, 4, "the DeformConv columns"));
  op.kernel = [p](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    const float* weights = k.input(1).data<float>();
    const float* offsets = k.input(2).data<float>();
    const Tensor* bias_t = k.optional_input(3);
    const Tensor* mask_t = k.optional_input(4);
    const float* bias = bias_t != nullptr ? bias_t->data<float>() : nullptr;
    const float* mask = mask_t != nullptr ? mask_t->data<float>() : nullptr;
    float* out = k.output(0).data<float>();
    auto* col = reinterpret_cast<float*>(k.scratch);
    const int64_t taps = p.kh * p.kw, positions = p.oh * p.ow;
    const int64_t cg = p.channels / p.group, mg = p.out_channels / p.group;
    const int64_t per_offset_group = p.channels / p.offset_group;
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t g = 0; g < p.group; ++g) {
        // The columns: row (c, tap) holds, for each output position, the sample that tap reads.
        k.pool.parallel_for(cg * taps, 1, [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const int64_t c = g * cg + row / taps, tap = row % taps;
            const int64_t i = tap / p.kw, j = tap % p.kw;
            const int64_t og = c / per_offset_group;
            const float* plane = in + (n * p.channels + c) * p.h * p.w;
            const float* dy = offsets + ((n * p.offset_group + og) * 2 * taps + 2 * tap) * positions;
            const float* dx = dy + positions;
            const float* m = mask != nullptr ? mask + ((n * p.offset_group + og) * taps + tap) * positions : nullptr;
            float* dst = col + row * positions;
            for (int64_t oy = 0; oy < p.oh; ++oy) {
              const auto base_y = static_cast<float>(oy * p.sh - p.pad_top + i * p.dh);
              for (int64_t ox = 0; ox < p.ow; ++ox) {
                const int64_t at = oy * p.ow + ox;
                const auto base_x = static_cast<float>(ox * p.sw - p.pad_left + j * p.dw);
                const float v = sample(plane, p.h, p.w, base_y + dy[at], base_x + dx[at]);
                dst[at] = m != nullptr ? v * m[at] : v;
              }
            }
          }
        });
        float* y = out + (n * p.out_channels + g * mg) * positions;
        parallel_gemm(k.pool, false, false, mg, positions, cg * taps, 1.0f, weights + g * mg * cg * taps, cg * taps,
                      col, positions, 0.0f, y, positions);
        if (bias != nullptr) {
          for (int64_t o = 0; o < mg; ++o) {
            const float b = bias[g * mg + o];
            float* row = y + o * positions;
            for (int64_t q = 0; q < positions; ++q) row[q] += b;
          }
        }
      }
    }
  };
  return op;
}

const OpRegistrar deform_conv_op{"DeformConv", prepare_deform_conv};

}  // namespace
}  // namespace rknnxx::host
