#pragma once
// Window geometry shared by Conv, ConvTranspose and the pooling operators: kernel size,
// strides, dilations and pads (explicit or auto_pad) of a window over N C D1..Dn data.
// WindowND holds any number of spatial axes (the pools and ConvTranspose run on it);
// WindowGeometry is its 1-D or 2-D form for the Conv kernels (1-D as 2-D with height 1).

#include "../op_registry.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace rknnxx::host {

struct WindowGeometry {
  int64_t batch = 0, channels = 0;
  int64_t in_h = 1, in_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t out_h = 1, out_w = 1;
  bool one_dimensional = false;

  int64_t in_size() const noexcept { return in_h * in_w; }
  int64_t out_size() const noexcept { return out_h * out_w; }
  // The output shape [N, channels, (out_h,) out_w].
  std::vector<int64_t> output_shape(int64_t out_channels) const {
    if (one_dimensional) {
      return {batch, out_channels, out_w};
    }
    return {batch, out_channels, out_h, out_w};
  }
};

// A window over n spatial axes: per-axis input size, kernel, stride, dilation, pads and output size.
struct WindowND {
  int64_t batch = 0, channels = 0;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;

  std::size_t spatial() const noexcept { return in.size(); }
  // Products of sizes the engine already counted without wrapping (tensor shapes, kernel_size
  // checked when the geometry was built).
  static int64_t product(const std::vector<int64_t>& v) noexcept {
    int64_t n = 1;
    for (int64_t d : v) n *= d;
    return n;
  }
  int64_t in_size() const noexcept { return product(in); }
  int64_t out_size() const noexcept { return product(out); }
  int64_t kernel_size() const noexcept { return product(kernel); }
  std::vector<int64_t> output_shape(int64_t out_channels) const {
    std::vector<int64_t> shape{batch, out_channels};
    shape.insert(shape.end(), out.begin(), out.end());
    return shape;
  }
};

inline WindowND window_nd_from(const std::vector<int64_t>& shape, const std::vector<int64_t>& kernel,
                               const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                               const std::vector<int64_t>& pads, const std::vector<int64_t>& out) {
  const std::size_t spatial = shape.size() - 2;
  WindowND g;
  g.batch = shape[0];
  g.channels = shape[1];
  g.in.assign(shape.begin() + 2, shape.end());
  g.kernel = kernel;
  g.stride = strides;
  g.dilation = dilations;
  g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  g.pad_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(spatial), pads.end());
  g.out = out;
  (void)element_count(kernel);  // the kernel size, counted without wrapping
  return g;
}

// The geometry of a window over input `shape` [N, C, (H,) W] with per-axis kernel, strides,
// dilations, pads (begins then ends) and output sizes.
inline WindowGeometry window_from(const std::vector<int64_t>& shape, const std::vector<int64_t>& kernel,
                                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                                  const std::vector<int64_t>& pads, const std::vector<int64_t>& out) {
  const std::size_t spatial = shape.size() - 2;
  WindowGeometry g;
  g.batch = shape[0];
  g.channels = shape[1];
  g.one_dimensional = spatial == 1;
  const std::size_t w = spatial - 1;  // the last axis is the width
  g.in_w = shape[w + 2];
  g.kernel_w = kernel[w];
  g.stride_w = strides[w];
  g.dilation_w = dilations[w];
  g.pad_left = pads[w];
  g.pad_right = pads[w + spatial];
  g.out_w = out[w];
  if (spatial == 2) {
    g.in_h = shape[2];
    g.kernel_h = kernel[0];
    g.stride_h = strides[0];
    g.dilation_h = dilations[0];
    g.pad_top = pads[0];
    g.pad_bottom = pads[spatial];
    g.out_h = out[0];
  }
  return g;
}

// A window attribute of `count` values (one per spatial axis; pads: two), each `fallback` when the
// node has none; any other number of values fails naming the attribute.
inline std::vector<int64_t> window_attribute(const OpContext& ctx, std::string_view name, int64_t fallback,
                                             std::size_t count) {
  std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(count, fallback));
  if (v.size() != count) {
    ctx.fail("attribute '{}' has {} values, expected {}", name, v.size(), count);
  }
  return v;
}

// Reads the window attributes of a forward window (Conv and pools) over input 0, whose kernel
// size is `kernel` (from the weights or kernel_shape), and computes the output size.
// ceil_mode rounds the output size up, dropping a last window that would start in the padding.
// Any number of spatial axes (input rank 3 or more).
inline WindowND forward_window_nd(const OpContext& ctx, std::vector<int64_t> kernel, bool ceil_mode) {
  const TensorInfo& x = ctx.input(0);
  if (x.shape.size() < 3) {
    ctx.fail("input '{}' has shape {}, expected N, C and at least one spatial axis", ctx.input_name(0),
             shape_string(x.shape));
  }
  const std::size_t spatial = x.shape.size() - 2;
  if (kernel.size() != spatial) {
    ctx.fail("kernel shape {} does not match the {} spatial dimensions of input '{}' {}", shape_string(kernel), spatial,
             ctx.input_name(0), shape_string(x.shape));
  }
  const std::vector<int64_t> strides = window_attribute(ctx, "strides", 1, spatial);
  const std::vector<int64_t> dilations = window_attribute(ctx, "dilations", 1, spatial);
  std::vector<int64_t> pads = window_attribute(ctx, "pads", 0, spatial * 2);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> out(spatial);
  for (std::size_t i = 0; i < spatial; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) {
      ctx.fail("kernel sizes, strides and dilations must be positive");
    }
    // Attributes may hold any int64: every step that could wrap is checked.
    const int64_t extent =
        checked_add(checked_mul(kernel[i] - 1, dilations[i], "the window extent"), 1, "the window extent");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = checked_add(in[i], strides[i] - 1, "the output size") / strides[i];
      const int64_t total = std::max<int64_t>(0, checked_add((out[i] - 1) * strides[i], extent, "the padding") - in[i]);
      const int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + spatial] = total - pads[i];
      continue;
    }
    if (auto_pad == "VALID") {
      pads[i] = pads[i + spatial] = 0;
    } else if (auto_pad != "NOTSET" && !auto_pad.empty()) {
      ctx.fail("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
    }
    const int64_t padded =
        checked_add(checked_add(in[i], pads[i], "the padded input"), pads[i + spatial], "the padded input");
    const int64_t span = checked_sub(padded, extent, "the padded input");
    if (span < 0) {
      ctx.fail("the window (extent {}) is larger than the padded input ({}) along axis {}", extent, padded, i + 2);
    }
    out[i] = (ceil_mode ? checked_add(span, strides[i] - 1, "the output size") / strides[i] : span / strides[i]) + 1;
    if (ceil_mode && (out[i] - 1) * strides[i] >= in[i] + pads[i]) {
      --out[i];
    }
  }
  std::vector<int64_t> counted{x.shape[0], x.shape[1]};
  counted.insert(counted.end(), out.begin(), out.end());
  (void)element_count(counted);  // the output positions, counted without wrapping before kernels size their work
  return window_nd_from(x.shape, kernel, strides, dilations, pads, out);
}

// The 1-D or 2-D form (input rank 3 or 4) for the Conv kernels.
inline WindowGeometry forward_window(const OpContext& ctx, std::vector<int64_t> kernel, bool ceil_mode) {
  const TensorInfo& x = ctx.input(0);
  if (x.shape.size() != 3 && x.shape.size() != 4) {
    ctx.fail("input '{}' has shape {}; the host engine supports 1-D and 2-D windows (rank 3 or 4)", ctx.input_name(0),
             shape_string(x.shape));
  }
  const WindowND nd = forward_window_nd(ctx, std::move(kernel), ceil_mode);
  std::vector<int64_t> pads = nd.pad_begin;
  pads.insert(pads.end(), nd.pad_end.begin(), nd.pad_end.end());
  return window_from(x.shape, nd.kernel, nd.stride, nd.dilation, pads, nd.out);
}

// The range [begin, end) of output positions o whose input index o * stride + offset lies in
// [0, size): the part of a row that needs no bounds checks.
struct ValidRange {
  int64_t begin = 0, end = 0;
};
inline ValidRange valid_outputs(int64_t offset, int64_t stride, int64_t size, int64_t outputs) {
  int64_t begin = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t end = size - 1 - offset < 0 ? 0 : (size - 1 - offset) / stride + 1;
  begin = std::min(begin, outputs);
  end = std::max(begin, std::min(end, outputs));
  return {begin, end};
}

// col2im of one output channel (ConvTranspose in conv.cpp, Col2Im in col2im.cpp): the
// kernel_size rows of `col` (one per kernel position, each over the input positions) added to the
// output at position i * stride + k * dilation - pad. The last axis is the inner loop, clipped to
// the output once per input row.
inline void col2im_channel(const WindowND& g, const float* col, float* out) {
  const std::size_t last = g.spatial() - 1;
  const int64_t in_w = g.in[last], out_w = g.out[last], stride_w = g.stride[last];
  const int64_t in_size = g.in_size(), in_rows = in_size / std::max<int64_t>(1, in_w);
  std::vector<int64_t> k(g.spatial(), 0);  // kernel coordinates, the last axis fastest
  std::vector<int64_t> i(last, 0);         // input coordinates of an input row
  for (int64_t tap = 0; tap < g.kernel_size(); ++tap) {
    const float* src = col + tap * in_size;
    // Output column of input column iw: iw * stride + kw * dilation - pad.
    const int64_t offset = k[last] * g.dilation[last] - g.pad_begin[last];
    const int64_t iw_begin = offset >= 0 ? 0 : (-offset + stride_w - 1) / stride_w;
    const int64_t iw_end = std::min(in_w, out_w - 1 - offset < 0 ? 0 : (out_w - 1 - offset) / stride_w + 1);
    std::fill(i.begin(), i.end(), 0);
    for (int64_t row = 0; row < in_rows; ++row) {
      int64_t out_row = 0;  // the output row's index among the output rows, -1 when outside
      for (std::size_t d = 0; d < last && out_row >= 0; ++d) {
        const int64_t o = i[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
        out_row = o >= 0 && o < g.out[d] ? out_row * g.out[d] + o : -1;
      }
      if (out_row >= 0) {
        float* orow = out + out_row * out_w;
        const float* irow = src + row * in_w;
        for (int64_t iw = iw_begin; iw < iw_end; ++iw) {
          orow[iw * stride_w + offset] += irow[iw];
        }
      }
      for (std::size_t d = last; d-- > 0;) {
        if (++i[d] < g.in[d]) break;
        i[d] = 0;
      }
    }
    for (std::size_t d = g.spatial(); d-- > 0;) {
      if (++k[d] < g.kernel[d]) break;
      k[d] = 0;
    }
  }
}

}  // namespace rknnxx::host
