// RoiAlign: for each region of interest [x1, y1, x2, y2] (in input coordinates times
// spatial_scale) an output_height x output_width grid of bins, each the average (or maximum) of
// bilinear samples on a regular sub-grid (sampling_ratio per bin side, or as many as the bin is
// pixels wide). coordinate_transformation_mode half_pixel shifts by half a pixel; the older
// output_half_pixel does not and makes every region at least 1 x 1, as ONNX Runtime does.

#include "../op_registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rknnxx::host {
namespace {

struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  float weight[4] = {0, 0, 0, 0};
};

// The four neighbours of (y, x) in an h x w plane and their bilinear weights; a point more than
// one pixel outside contributes nothing.
Sample bilinear(float y, float x, int64_t h, int64_t w) {
  Sample s;
  if (y < -1.0f || y > static_cast<float>(h) || x < -1.0f || x > static_cast<float>(w)) {
    return s;
  }
  y = std::max(y, 0.0f);
  x = std::max(x, 0.0f);
  auto y_low = static_cast<int64_t>(y);
  auto x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1;
  int64_t x_high = x_low + 1;
  if (y_low >= h - 1) {
    y_high = y_low = h - 1;
    y = static_cast<float>(y_low);
  }
  if (x_low >= w - 1) {
    x_high = x_low = w - 1;
    x = static_cast<float>(x_low);
  }
  const float ly = y - static_cast<float>(y_low);
  const float lx = x - static_cast<float>(x_low);
  const float hy = 1.0f - ly;
  const float hx = 1.0f - lx;
  s.pos[0] = y_low * w + x_low;
  s.pos[1] = y_low * w + x_high;
  s.pos[2] = y_high * w + x_low;
  s.pos[3] = y_high * w + x_high;
  s.weight[0] = hy * hx;
  s.weight[1] = hy * lx;
  s.weight[2] = ly * hx;
  s.weight[3] = ly * lx;
  return s;
}

PreparedOp prepare_roi_align(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  ctx.expect_dtype(2, {DataType::int64});
  const auto& x = ctx.input(0).shape;
  const auto& rois = ctx.input(1).shape;
  if (x.size() != 4) {
    ctx.fail("input X has shape {}, expected [N, C, H, W]", shape_string(x));
  }
  if (rois.size() != 2 || rois[1] != 4) {
    ctx.fail("input rois has shape {}, expected [num_rois, 4]", shape_string(rois));
  }
  if (ctx.input(2).shape != std::vector<int64_t>{rois[0]}) {
    ctx.fail("input batch_indices has shape {}, expected [{}]", shape_string(ctx.input(2).shape), rois[0]);
  }
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") {
    ctx.fail("attribute 'mode' is '{}', expected avg or max", mode);
  }
  const std::string transform =
      ctx.attr_string("coordinate_transformation_mode", ctx.opset() < 16 ? "output_half_pixel" : "half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    ctx.fail("attribute 'coordinate_transformation_mode' is '{}', expected half_pixel or output_half_pixel", transform);
  }
  const int64_t out_h = ctx.attr_int("output_height", 1);
  const int64_t out_w = ctx.attr_int("output_width", 1);
  const int64_t sampling = ctx.attr_int("sampling_ratio", 0);
  if (out_h < 1 || out_w < 1 || sampling < 0) {
    ctx.fail("output_height {}, output_width {} must be positive and sampling_ratio {} not negative", out_h, out_w,
             sampling);
  }
  const float scale = ctx.attr_float("spatial_scale", 1.0f);
  const bool half_pixel = transform == "half_pixel";
  const bool max_mode = mode == "max";
  const int64_t batch = x[0], channels = x[1], h = x[2], w = x[3];
  const int64_t regions = rois[0];
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, {regions, channels, out_h, out_w}}};
  op.kernel = [=, label = ctx.node().label()](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    const float* roi = k.input(1).data<float>();
    const int64_t* batch_index = k.input(2).data<int64_t>();
    float* out = k.output(0).data<float>();
    for (int64_t r = 0; r < regions; ++r) {
      if (batch_index[r] < 0 || batch_index[r] >= batch) {
        throw EngineError(fmt::format("{}: batch index {} of region {} is out of range for batch {}", label,
                                      batch_index[r], r, batch));
      }
    }
    k.pool.parallel_for(regions, 1, [&](int64_t begin, int64_t end) {
      std::vector<Sample> samples;
      for (int64_t r = begin; r < end; ++r) {
        const float offset = half_pixel ? 0.5f : 0.0f;
        const float* box = roi + r * 4;
        const float x0 = box[0] * scale - offset;
        const float y0 = box[1] * scale - offset;
        float roi_w = box[2] * scale - offset - x0;
        float roi_h = box[3] * scale - offset - y0;
        if (!half_pixel) {
          roi_w = std::max(roi_w, 1.0f);
          roi_h = std::max(roi_h, 1.0f);
        }
        const float bin_h = roi_h / static_cast<float>(out_h);
        const float bin_w = roi_w / static_cast<float>(out_w);
        const int64_t grid_h =
            sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roi_h / static_cast<float>(out_h)));
        const int64_t grid_w =
            sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(roi_w / static_cast<float>(out_w)));
        const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
        // The samples of every bin, shared by all channels.
        samples.clear();
        for (int64_t ph = 0; ph < out_h; ++ph) {
          for (int64_t pw = 0; pw < out_w; ++pw) {
            for (int64_t iy = 0; iy < grid_h; ++iy) {
              const float yy = y0 + static_cast<float>(ph) * bin_h +
                  (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                const float xx = x0 + static_cast<float>(pw) * bin_w +
                    (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
                samples.push_back(bilinear(yy, xx, h, w));
              }
            }
          }
        }
        const auto per_bin = static_cast<std::size_t>(std::max<int64_t>(grid_h * grid_w, 0));
        for (int64_t c = 0; c < channels; ++c) {
          const float* plane = in + (batch_index[r] * channels + c) * h * w;
          float* dst = out + (r * channels + c) * out_h * out_w;
          for (int64_t bin = 0; bin < out_h * out_w; ++bin) {
            float acc = max_mode ? -std::numeric_limits<float>::infinity() : 0.0f;
            for (std::size_t i = 0; i < per_bin; ++i) {
              const Sample& s = samples[static_cast<std::size_t>(bin) * per_bin + i];
              if (max_mode) {
                float v = s.weight[0] * plane[s.pos[0]];
                for (int q = 1; q < 4; ++q) v = std::max(v, s.weight[q] * plane[s.pos[q]]);
                acc = std::max(acc, v);
              } else {
                for (int q = 0; q < 4; ++q) acc += s.weight[q] * plane[s.pos[q]];
              }
            }
            dst[bin] = max_mode ? (per_bin == 0 ? 0.0f : acc) : acc / count;
          }
        }
      }
    });
  };
  return op;
}

const OpRegistrar roi_align_op{"RoiAlign", prepare_roi_align};

}  // namespace
}  // namespace rknnxx::host
