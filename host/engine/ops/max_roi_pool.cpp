// MaxRoiPool: for each region of interest [batch_index, x1, y1, x2, y2] (input coordinates times
// spatial_scale, rounded to whole pixels, both corners inside the region) a pooled_shape grid of
// bins splitting the region evenly, each the maximum of the input pixels it covers (0 for a bin
// that covers none), as Fast R-CNN's ROI pooling and ONNX Runtime compute it.

#include "../op_registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rknnxx::host {
namespace {

// A region's corner in pixels: round half away from zero of coordinate * scale, kept within a
// range where the bin arithmetic below cannot overflow (the clip to the plane follows).
int64_t corner(float coordinate, float scale) {
  const double v = std::round(coordinate * scale);
  constexpr double limit = 1e15;
  return static_cast<int64_t>(std::clamp(v, -limit, limit));
}

PreparedOp prepare_max_roi_pool(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  const auto& x = ctx.input(0).shape;
  const auto& rois = ctx.input(1).shape;
  if (x.size() != 4) {
    ctx.fail("input '{}' has shape {}, expected [N, C, H, W]", ctx.input_name(0), shape_string(x));
  }
  if (rois.size() != 2 || rois[1] != 5) {
    ctx.fail("input '{}' has shape {}, expected [num_rois, 5]", ctx.input_name(1), shape_string(rois));
  }
  const std::vector<int64_t> pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1) {
    ctx.fail("attribute 'pooled_shape' is {}, expected two positive extents [height, width]", shape_string(pooled));
  }
  const float scale = ctx.attr_float("spatial_scale", 1.0f);
  if (!std::isfinite(scale)) {
    ctx.fail("attribute 'spatial_scale' is {}, expected a finite number", scale);
  }
  const int64_t batch = x[0], channels = x[1], h = x[2], w = x[3];
  const int64_t regions = rois[0];
  const int64_t out_h = pooled[0], out_w = pooled[1];
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, {regions, channels, out_h, out_w}}};
  op.kernel = [=, label = ctx.node().label()](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    const float* roi = k.input(1).data<float>();
    float* out = k.output(0).data<float>();
    for (int64_t r = 0; r < regions; ++r) {
      const float b = roi[r * 5];
      if (!(b >= 0.0f && b < static_cast<float>(batch)) || b != std::floor(b)) {
        throw EngineError(
            fmt::format("{}: batch index {} of region {} is not an image of the batch of {}", label, b, r, batch));
      }
      for (int i = 1; i < 5; ++i) {
        if (!std::isfinite(roi[r * 5 + i])) {
          throw EngineError(fmt::format("{}: region {} has a coordinate {}", label, r, roi[r * 5 + i]));
        }
      }
    }
    k.pool.parallel_for(regions * channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t r = t / channels;
        const float* box = roi + r * 5;
        const auto image = static_cast<int64_t>(box[0]);
        const int64_t x0 = corner(box[1], scale), y0 = corner(box[2], scale);
        const int64_t x1 = corner(box[3], scale), y1 = corner(box[4], scale);
        // Both corners are inside the region; a reversed region is one pixel. Bin edges in float,
        // as ONNX Runtime computes them (an edge on a whole pixel stays there).
        const float bin_h = static_cast<float>(std::max<int64_t>(y1 - y0 + 1, 1)) / static_cast<float>(out_h);
        const float bin_w = static_cast<float>(std::max<int64_t>(x1 - x0 + 1, 1)) / static_cast<float>(out_w);
        const auto edge = [](int64_t i, float bin, bool up, int64_t origin, int64_t size) {
          const float e = static_cast<float>(i) * bin;
          return std::clamp(static_cast<int64_t>(up ? std::ceil(e) : std::floor(e)) + origin, int64_t{0}, size);
        };
        const float* plane = in + (image * channels + t % channels) * h * w;
        float* dst = out + t * out_h * out_w;
        for (int64_t ph = 0; ph < out_h; ++ph) {
          const int64_t hs = edge(ph, bin_h, false, y0, h), he = edge(ph + 1, bin_h, true, y0, h);
          for (int64_t pw = 0; pw < out_w; ++pw) {
            const int64_t ws = edge(pw, bin_w, false, x0, w), we = edge(pw + 1, bin_w, true, x0, w);
            float best = std::numeric_limits<float>::lowest();
            for (int64_t iy = hs; iy < he; ++iy) {
              const float* row = plane + iy * w;
              for (int64_t ix = ws; ix < we; ++ix) {
                best = std::max(best, row[ix]);
              }
            }
            dst[ph * out_w + pw] = he > hs && we > ws ? best : 0.0f;
          }
        }
      }
    });
  };
  return op;
}

const OpRegistrar max_roi_pool_op{"MaxRoiPool", prepare_max_roi_pool};

}  // namespace
}  // namespace rknnxx::host
