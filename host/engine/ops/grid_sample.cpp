// GridSample (opsets 16 and 20; opset 20's mode names linear and cubic are taken as bilinear and
// bicubic, its n-D form is refused) on 4-D input: each output pixel samples X at the normalized (x, y) of
// the grid [N, H_out, W_out, 2], -1 and 1 being the outer pixel edges (or centres with
// align_corners), by nearest, bilinear or bicubic (A = -0.75) interpolation, with zeros, border
// or reflection padding — the arithmetic of ONNX Runtime, so results agree to float rounding.

#include "../op_registry.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace rknnxx::host {
namespace {

enum class Mode { nearest, bilinear, bicubic };
enum class Padding { zeros, border, reflection };

float reflect(float x, float lo, float hi) {
  const float range = hi - lo;
  if (range <= 0.0f) {
    return lo;
  }
  if (x < lo) {
    const float d = lo - x;
    const auto n = static_cast<int64_t>(d / range);
    const float r = d - static_cast<float>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const float d = x - hi;
    const auto n = static_cast<int64_t>(d / range);
    const float r = d - static_cast<float>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

struct Plane {
  const float* data;
  int64_t h, w;
  Padding padding;
  std::array<float, 4> bounds;  // x_min, y_min, x_max, y_max

  float at(int64_t r, int64_t c) const {
    switch (padding) {
      case Padding::zeros: return r >= 0 && r < h && c >= 0 && c < w ? data[r * w + c] : 0.0f;
      case Padding::border:
        r = std::clamp<int64_t>(r, 0, h - 1);
        c = std::clamp<int64_t>(c, 0, w - 1);
        break;
      case Padding::reflection:
        c = static_cast<int64_t>(reflect(static_cast<float>(c), bounds[0], bounds[2]));
        r = static_cast<int64_t>(reflect(static_cast<float>(r), bounds[1], bounds[3]));
        r = std::clamp<int64_t>(r, 0, h - 1);  // guards rounding at the edges
        c = std::clamp<int64_t>(c, 0, w - 1);
        break;
    }
    return data[r * w + c];
  }
};

std::array<float, 4> cubic_coefficients(float t) {
  constexpr float a = -0.75f;
  const float x = std::fabs(t);
  return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a, ((a + 2) * x - (a + 3)) * x * x + 1,
          ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
          ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

PreparedOp prepare_grid_sample(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  const auto& x = ctx.input(0).shape;
  const auto& grid = ctx.input(1).shape;
  if (x.size() != 4) {
    ctx.fail("input X has shape {}, expected [N, C, H, W]{}", shape_string(x),
             ctx.opset() >= 20 ? " (GridSample-20's volumetric and other non-2-D forms are not implemented)" : "");
  }
  if (grid.size() != 4 || grid[0] != x[0] || grid[3] != 2) {
    ctx.fail("grid has shape {}, expected [{}, H_out, W_out, 2]", shape_string(grid), x[0]);
  }
  const std::string mode_name = ctx.attr_string("mode", "bilinear");
  const std::string padding_name = ctx.attr_string("padding_mode", "zeros");
  Mode mode{};
  if (mode_name == "nearest") mode = Mode::nearest;
  else if (mode_name == "bilinear" || mode_name == "linear") mode = Mode::bilinear;
  else if (mode_name == "bicubic" || mode_name == "cubic") mode = Mode::bicubic;
  else ctx.fail("attribute 'mode' is '{}', expected nearest, bilinear or bicubic", mode_name);
  Padding padding{};
  if (padding_name == "zeros") padding = Padding::zeros;
  else if (padding_name == "border") padding = Padding::border;
  else if (padding_name == "reflection") padding = Padding::reflection;
  else ctx.fail("attribute 'padding_mode' is '{}', expected zeros, border or reflection", padding_name);
  const bool align_corners = ctx.attr_int("align_corners", 0) != 0;
  const int64_t n = x[0], channels = x[1], h = x[2], w = x[3];
  const int64_t out_h = grid[1], out_w = grid[2];
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, {n, channels, out_h, out_w}}};
  op.kernel = [=](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    const float* g = k.input(1).data<float>();
    float* out = k.output(0).data<float>();
    const auto fw = static_cast<float>(w);
    const auto fh = static_cast<float>(h);
    const std::array<float, 4> bounds = align_corners ? std::array<float, 4>{0.0f, 0.0f, fw - 1, fh - 1}
                                                      : std::array<float, 4>{-0.5f, -0.5f, fw - 0.5f, fh - 0.5f};
    const auto denormalize = [&](float v, float length) {
      return align_corners ? (v + 1) / 2.0f * (length - 1) : ((v + 1) * length - 1) / 2.0f;
    };
    k.pool.parallel_for(n * channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / channels;
        const Plane plane{in + t * h * w, h, w, padding, bounds};
        float* dst = out + t * out_h * out_w;
        const float* gb = g + b * out_h * out_w * 2;
        for (int64_t p = 0; p < out_h * out_w; ++p) {
          float sx = denormalize(gb[2 * p], fw);
          float sy = denormalize(gb[2 * p + 1], fh);
          if (mode == Mode::nearest) {
            sx = std::nearbyint(sx);
            sy = std::nearbyint(sy);
          }
          if (sx < bounds[0] || sx > bounds[2] || sy < bounds[1] || sy > bounds[3]) {
            if (padding == Padding::border) {
              sx = std::clamp(sx, 0.0f, fw - 1);
              sy = std::clamp(sy, 0.0f, fh - 1);
            } else if (padding == Padding::reflection) {
              sx = reflect(sx, bounds[0], bounds[2]);
              sy = reflect(sy, bounds[1], bounds[3]);
            }
          }
          if (!std::isfinite(sx) || !std::isfinite(sy) || std::fabs(sx) > 1e9f || std::fabs(sy) > 1e9f) {
            dst[p] = 0.0f;  // a NaN or absurd grid point samples nothing
            continue;
          }
          if (mode == Mode::nearest) {
            dst[p] = plane.at(static_cast<int64_t>(sy), static_cast<int64_t>(sx));
          } else if (mode == Mode::bilinear) {
            const float x1 = std::floor(sx);
            const float y1 = std::floor(sy);
            const auto c1 = static_cast<int64_t>(x1);
            const auto r1 = static_cast<int64_t>(y1);
            const float dx1 = sx - x1, dx2 = x1 + 1 - sx;
            const float dy1 = sy - y1, dy2 = y1 + 1 - sy;
            dst[p] = dy2 * (dx2 * plane.at(r1, c1) + dx1 * plane.at(r1, c1 + 1)) +
                dy1 * (dx2 * plane.at(r1 + 1, c1) + dx1 * plane.at(r1 + 1, c1 + 1));
          } else {
            const float x0 = std::floor(sx) - 1;
            const float y0 = std::floor(sy) - 1;
            const auto cx = cubic_coefficients(sx - x0 - 1);
            const auto cy = cubic_coefficients(sy - y0 - 1);
            float v = 0.0f;
            for (int i = 0; i < 4; ++i) {
              float row = 0.0f;
              for (int j = 0; j < 4; ++j) {
                row += cx[static_cast<std::size_t>(j)] *
                    plane.at(static_cast<int64_t>(y0) + i, static_cast<int64_t>(x0) + j);
              }
              v += cy[static_cast<std::size_t>(i)] * row;
            }
            dst[p] = v;
          }
        }
      }
    });
  };
  return op;
}

const OpRegistrar grid_sample_op{"GridSample", prepare_grid_sample};

}  // namespace
}  // namespace rknnxx::host
