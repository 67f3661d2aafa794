// Resize (opsets 10 to 19) and Upsample (opsets 7 to 9; scales an attribute before opset 9):
// nearest, linear and cubic interpolation with every coordinate_transformation_mode and
// nearest_mode, from scales or sizes; from opset 18 on for a subset of the axes (`axes`) and with
// keep_aspect_ratio_policy, from opset 19 on with half_pixel_symmetric. antialias=1 (opset 18) is
// refused when the model loads (legacy_opsets.cpp).
//
// All three modes are separable: resizing axis by axis gives the same result as the N-D
// formula (n-linear and n-cubic are products of 1-D weights; tf_crop_and_resize
// extrapolation depends only on the output index of one axis). Each axis is one pass over
// [outer, length, inner] with a precomputed table of source indices and weights; axes
// whose table is the identity are skipped. A nearest Resize of an image's two spatial axes also reads and writes
// NHWC, so that it keeps that layout between the Convs, Adds and Concats of a feature pyramid (NearestPixels).

#include "../blocked_layout.hpp"
#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

namespace rknnxx::host {
namespace {

enum class Mode { nearest, linear, cubic };
enum class Transform {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize
};
enum class Rounding { round_prefer_floor, round_prefer_ceil, floor, ceil };

// One output position of one axis: up to four source positions with weights.
struct Tap {
  std::array<int64_t, 4> index{};
  std::array<float, 4> weight{};
  int32_t count = 0;  // 0: the extrapolation value (tf_crop_and_resize outside the input)
};

struct AxisPass {
  std::size_t axis = 0;
  int64_t outer = 1;
  int64_t in_length = 1;
  int64_t out_length = 1;
  int64_t inner = 1;
  std::vector<Tap> taps;  // out_length entries
};

struct Settings {
  Mode mode = Mode::nearest;
  Transform transform = Transform::half_pixel;
  Rounding rounding = Rounding::round_prefer_floor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
};

// As the ONNX reference (onnx/backend/test/case/node/resize.py): the "resized length" in
// these formulas is input length * scale, not the rounded output length, when they differ.
// half_pixel_symmetric shifts half_pixel so that the centres of input and output coincide when
// the output length was rounded (out_length != resized).
double source_coordinate(const Settings& s, double x, double scale, int64_t in_length, int64_t out_length,
                         double roi_start, double roi_end) {
  const double resized = static_cast<double>(in_length) * scale;
  const double last = static_cast<double>(in_length - 1);
  switch (s.transform) {
    case Transform::half_pixel: return (x + 0.5) / scale - 0.5;
    case Transform::half_pixel_symmetric: {
      const double centre = static_cast<double>(in_length) / 2;
      const double offset = centre * (1 - static_cast<double>(out_length) / resized);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Transform::pytorch_half_pixel: return resized == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case Transform::align_corners: return resized == 1 ? 0.0 : x * last / (resized - 1);
    case Transform::asymmetric: return x / scale;
    case Transform::tf_half_pixel_for_nn: return (x + 0.5) / scale;
    case Transform::tf_crop_and_resize:
      return resized == 1 ? 0.5 * (roi_start + roi_end) * last
                          : roi_start * last + x * (roi_end - roi_start) * last / (resized - 1);
  }
  return x;
}

int64_t nearest_index(Rounding r, double x) {
  switch (r) {
    case Rounding::floor: return static_cast<int64_t>(std::floor(x));
    case Rounding::ceil: return static_cast<int64_t>(std::ceil(x));
    case Rounding::round_prefer_ceil: return static_cast<int64_t>(std::floor(x + 0.5));
    case Rounding::round_prefer_floor: return static_cast<int64_t>(std::ceil(x - 0.5));
  }
  return 0;
}

std::array<double, 4> cubic_weights(double t, double a) {
  const auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 <= d < 2
  const auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // 0 <= d < 1
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

std::vector<Tap> axis_taps(const Settings& s, double scale, int64_t in_length, int64_t out_length, double roi_start,
                           double roi_end, bool& identity) {
  std::vector<Tap> taps(static_cast<std::size_t>(out_length));
  identity = in_length == out_length;
  const int64_t last = in_length - 1;
  for (int64_t j = 0; j < out_length; ++j) {
    Tap& tap = taps[static_cast<std::size_t>(j)];
    const double x = source_coordinate(s, static_cast<double>(j), scale, in_length, out_length, roi_start, roi_end);
    if (s.transform == Transform::tf_crop_and_resize && (x < 0 || x > static_cast<double>(last))) {
      identity = false;
      continue;  // count 0: extrapolation value
    }
    if (s.mode == Mode::nearest) {
      tap.count = 1;
      tap.index[0] = std::clamp<int64_t>(nearest_index(s.rounding, x), 0, last);
      tap.weight[0] = 1;
    } else if (s.mode == Mode::linear) {
      const double clamped = std::clamp(x, 0.0, static_cast<double>(last));
      const auto x0 = static_cast<int64_t>(std::floor(clamped));
      const double w = clamped - static_cast<double>(x0);
      tap.count = 2;
      tap.index = {x0, std::min(x0 + 1, last), 0, 0};
      tap.weight = {static_cast<float>(1 - w), static_cast<float>(w), 0, 0};
    } else {
      const double x0 = std::floor(x);
      const auto weights = cubic_weights(x - x0, s.cubic_a);
      double total = 0;
      tap.count = 4;
      for (int k = 0; k < 4; ++k) {
        const auto i = static_cast<int64_t>(x0) - 1 + k;
        double w = weights[static_cast<std::size_t>(k)];
        if (s.exclude_outside && (i < 0 || i > last)) {
          w = 0;
        }
        tap.index[static_cast<std::size_t>(k)] = std::clamp<int64_t>(i, 0, last);
        tap.weight[static_cast<std::size_t>(k)] = static_cast<float>(w);
        total += w;
      }
      if (s.exclude_outside && total != 0) {
        for (auto& w : tap.weight) {
          w = static_cast<float>(w / total);
        }
      }
    }
    // Identity: one source, its own position, weight 1 (other taps weigh nothing).
    bool same = true;
    for (int k = 0; k < tap.count; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const bool self = tap.index[kk] == j;
      same = same && (self ? tap.weight[kk] == 1.0f : tap.weight[kk] == 0.0f);
    }
    identity = identity && same;
  }
  return taps;
}

// One output value of the last axis (inner == 1): the taps' weighted sum in the order of run_pass's rows, so
// the same value; nearest copies.
template <class T> T resized_value(const Tap& tap, const T* in, float extrapolation) {
  if constexpr (std::is_same_v<T, float>) {
    if (tap.count == 0) return extrapolation;
    float sum = tap.weight[0] * in[tap.index[0]];
    for (std::size_t k = 1; k < static_cast<std::size_t>(tap.count); ++k) sum += tap.weight[k] * in[tap.index[k]];
    return sum;
  } else {
    return tap.count == 0 ? T{} : in[tap.index[0]];
  }
}

template <class T> void run_pass(ThreadPool& pool, const AxisPass& pass, const T* src, T* dst, float extrapolation) {
  if (pass.inner == 1) {  // the last axis: a line at a time, not a "row" (and its bookkeeping) per value
    pool.parallel_for(pass.outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(pass.out_length, 1)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t o = begin; o < end; ++o) {
                          const T* in = src + o * pass.in_length;
                          T* out = dst + o * pass.out_length;
                          for (int64_t j = 0; j < pass.out_length; ++j) {
                            out[j] = resized_value(pass.taps[static_cast<std::size_t>(j)], in, extrapolation);
                          }
                        }
                      });
    return;
  }
  const int64_t rows = pass.outer * pass.out_length;
  pool.parallel_for(
      rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(pass.inner, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / pass.out_length;
          const int64_t j = r - o * pass.out_length;
          const Tap& tap = pass.taps[static_cast<std::size_t>(j)];
          T* out = dst + r * pass.inner;
          const T* in = src + o * pass.in_length * pass.inner;
          if constexpr (std::is_same_v<T, float>) {
            if (tap.count == 0) {
              std::fill(out, out + pass.inner, extrapolation);
              continue;
            }
            const T* row0 = in + tap.index[0] * pass.inner;
            if (tap.count == 1 && tap.weight[0] == 1.0f) {  // nearest, or a linear tap on a source position
              std::memcpy(out, row0, static_cast<std::size_t>(pass.inner) * sizeof(T));
              continue;
            }
            for (int64_t i = 0; i < pass.inner; ++i) {
              out[i] = tap.weight[0] * row0[i];
            }
            for (int k = 1; k < tap.count; ++k) {
              const auto kk = static_cast<std::size_t>(k);
              const T* row = in + tap.index[kk] * pass.inner;
              const float w = tap.weight[kk];
              for (int64_t i = 0; i < pass.inner; ++i) {
                out[i] += w * row[i];
              }
            }
          } else {  // nearest on any element type: a copy of the chosen row
            if (tap.count == 0) {
              std::fill(out, out + pass.inner, T{});
            } else {
              std::memcpy(out, in + tap.index[0] * pass.inner, static_cast<std::size_t>(pass.inner) * sizeof(T));
            }
          }
        }
      });
}

// A nearest Resize of the spatial axes of a float32 image [N, C, H, W]: each output pixel is one input pixel, so with
// the image in NHWC it copies the pixel's channels at once.
struct NearestPixels {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0;
  std::vector<int64_t> rows, columns;  // per output row and column: the input's
};

// The plan where the passes are nearest copies of axes 2 and 3 of a 4-D float32 input, every output taking a
// source (no extrapolation); nullopt otherwise.
std::optional<NearestPixels> nearest_pixels(const TensorInfo& in, std::span<const int64_t> out_shape,
                                            std::span<const AxisPass> passes) {
  if (in.dtype != DataType::float32 || in.shape.size() != 4 || passes.empty()) return std::nullopt;
  NearestPixels p{in.shape[0], in.shape[1], in.shape[2], in.shape[3], {}, {}};
  for (std::size_t a = 2; a < 4; ++a) {
    std::vector<int64_t>& index = a == 2 ? p.rows : p.columns;
    index.resize(static_cast<std::size_t>(out_shape[a]));
    for (int64_t j = 0; j < out_shape[a]; ++j) index[static_cast<std::size_t>(j)] = j;  // the identity: no pass
  }
  for (const AxisPass& pass : passes) {
    if (pass.axis < 2) return std::nullopt;
    std::vector<int64_t>& index = pass.axis == 2 ? p.rows : p.columns;
    for (std::size_t j = 0; j < pass.taps.size(); ++j) {
      const Tap& tap = pass.taps[j];
      if (tap.count != 1 || tap.weight[0] != 1.0f) return std::nullopt;
      index[j] = tap.index[0];
    }
  }
  return p;
}

void run_nearest_nhwc(const NearestPixels& p, const float* x, float* y, ThreadPool& pool) {
  const auto out_h = static_cast<int64_t>(p.rows.size()), out_w = static_cast<int64_t>(p.columns.size());
  const auto pixel_bytes = static_cast<std::size_t>(p.channels) * sizeof(float);
  const int64_t row_values = std::max<int64_t>(1, out_w * p.channels);
  pool.parallel_for(p.batch * out_h, std::max<int64_t>(1, 4096 / row_values), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / out_h;
      const float* in_row = x + (n * p.in_h + p.rows[static_cast<std::size_t>(r - n * out_h)]) * p.in_w * p.channels;
      float* out = y + r * row_values;
      for (int64_t j = 0; j < out_w; ++j)
        std::memcpy(out + j * p.channels, in_row + p.columns[static_cast<std::size_t>(j)] * p.channels, pixel_bytes);
    }
  });
}

PreparedOp prepare_resize(OpContext& ctx) {
  const bool upsample = ctx.node().op_type == "Upsample";
  const bool legacy = upsample || ctx.opset() < 11;           // X, scales; asymmetric coordinates
  const bool scales_attribute = upsample && ctx.opset() < 9;  // Upsample-7
  ctx.expect_inputs(scales_attribute ? 1 : legacy ? 2 : 1, scales_attribute ? 1 : legacy ? 2 : 4);
  const TensorInfo in = ctx.input(0);
  const auto rank = in.shape.size();
  Settings s;
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "nearest") {
    s.mode = Mode::nearest;
  } else if (mode == "linear" || mode == "bilinear") {
    s.mode = Mode::linear;
  } else if (mode == "cubic" && !legacy) {
    s.mode = Mode::cubic;
  } else {
    ctx.fail("mode '{}' is not supported", mode);
  }
  if (legacy) {
    s.transform = Transform::asymmetric;
    s.rounding = Rounding::floor;
  } else {
    const std::string transform = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    if (transform == "half_pixel") s.transform = Transform::half_pixel;
    else if (transform == "half_pixel_symmetric" && ctx.opset() >= 19) s.transform = Transform::half_pixel_symmetric;
    else if (transform == "pytorch_half_pixel") s.transform = Transform::pytorch_half_pixel;
    else if (transform == "align_corners") s.transform = Transform::align_corners;
    else if (transform == "asymmetric") s.transform = Transform::asymmetric;
    else if (transform == "tf_half_pixel_for_nn") s.transform = Transform::tf_half_pixel_for_nn;
    else if (transform == "tf_crop_and_resize") s.transform = Transform::tf_crop_and_resize;
    else ctx.fail("coordinate_transformation_mode '{}' is not supported at opset {}", transform, ctx.opset());
    const std::string rounding = ctx.attr_string("nearest_mode", "round_prefer_floor");
    if (rounding == "round_prefer_floor") s.rounding = Rounding::round_prefer_floor;
    else if (rounding == "round_prefer_ceil") s.rounding = Rounding::round_prefer_ceil;
    else if (rounding == "floor") s.rounding = Rounding::floor;
    else if (rounding == "ceil") s.rounding = Rounding::ceil;
    else ctx.fail("nearest_mode '{}' is not supported", rounding);
    s.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    s.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  }
  const float extrapolation = legacy ? 0.0f : ctx.attr_float("extrapolation_value", 0.0f);
  if (s.mode != Mode::nearest) {
    ctx.expect_dtype(0, {DataType::float32});
  }

  // Resize-18: scales, sizes and roi may cover only the axes listed in `axes` (the others keep
  // their size); `resized` maps an entry of those inputs to its axis.
  std::vector<std::size_t> resized(rank);
  for (std::size_t a = 0; a < rank; ++a) {
    resized[a] = a;
  }
  if (!legacy && ctx.opset() >= 18 && ctx.attribute("axes") != nullptr) {
    const std::vector<int64_t> axes = ctx.attr_ints("axes");
    std::vector<bool> seen(rank, false);
    resized.clear();
    for (int64_t given : axes) {
      const auto a = static_cast<std::size_t>(ctx.normalize_axis(given, static_cast<int64_t>(rank)));
      if (seen[a]) {
        ctx.fail("attribute 'axes' {} names axis {} twice", shape_string(axes), a);
      }
      seen[a] = true;
      resized.push_back(a);
    }
  }
  const std::size_t listed = resized.size();
  const std::string policy =
      !legacy && ctx.opset() >= 18 ? ctx.attr_string("keep_aspect_ratio_policy", "stretch") : std::string("stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    ctx.fail("attribute 'keep_aspect_ratio_policy' is '{}', expected stretch, not_larger or not_smaller", policy);
  }

  // Scales or sizes: an omitted or empty input is absent.
  auto present = [&](std::size_t i) { return ctx.has_input(i) && ctx.input(i).elements() > 0; };
  const std::size_t scales_input = legacy ? 1 : 2;
  std::vector<double> scales(rank, 1.0);
  std::vector<int64_t> shape = in.shape;
  if (scales_attribute || present(scales_input)) {
    if (!legacy && present(3)) {
      ctx.fail("give scales or sizes, not both");
    }
    if (scales_attribute && ctx.attribute("scales") == nullptr) {
      ctx.fail("attribute 'scales' is required before opset 9");
    }
    const auto given = scales_attribute ? ctx.attr_floats("scales") : constant_floats(ctx, scales_input, "scales");
    if (given.size() != listed) {
      ctx.fail("scales has {} entries for {} {}", given.size(), listed,
               listed == rank ? "axes (the input's rank)" : "listed axes");
    }
    for (std::size_t i = 0; i < listed; ++i) {
      const std::size_t a = resized[i];
      if (!(given[i] > 0)) {
        ctx.fail("scale {} of axis {} is not positive", given[i], a);
      }
      scales[a] = given[i];
      const double length = std::floor(static_cast<double>(in.shape[a]) * scales[a]);
      if (!(length <= static_cast<double>(max_tensor_bytes))) {  // converted to int64 only when it fits
        ctx.fail("scale {} makes axis {} of size {} longer than any tensor may be", given[i], a, in.shape[a]);
      }
      shape[a] = static_cast<int64_t>(length);
    }
  } else if (!legacy && present(3)) {
    const std::vector<int64_t> sizes = constant_ints(ctx, 3, "sizes");
    if (sizes.size() != listed) {
      ctx.fail("sizes has {} entries for {} {}", sizes.size(), listed,
               listed == rank ? "axes (the input's rank)" : "listed axes");
    }
    for (std::size_t i = 0; i < listed; ++i) {
      const std::size_t a = resized[i];
      if (sizes[i] < 0) {
        ctx.fail("size {} of axis {} is negative", sizes[i], a);
      }
      shape[a] = sizes[i];
      scales[a] = in.shape[a] == 0 ? 1.0 : static_cast<double>(sizes[i]) / static_cast<double>(in.shape[a]);
    }
    if (policy != "stretch" && listed > 0) {
      // One scale for every listed axis, the smallest (not_larger) or the largest (not_smaller) of
      // the sizes' ratios; each length is then that scale times the input's, rounded half up, and
      // the coordinates use the common scale (as ONNX's reference).
      double common = scales[resized[0]];
      for (std::size_t a : resized) {
        common = policy == "not_larger" ? std::min(common, scales[a]) : std::max(common, scales[a]);
      }
      for (std::size_t a : resized) {
        const double length = std::floor(common * static_cast<double>(in.shape[a]) + 0.5);
        if (!(length <= static_cast<double>(max_tensor_bytes))) {
          ctx.fail("keep_aspect_ratio_policy {} makes axis {} longer than any tensor may be", policy, a);
        }
        scales[a] = common;
        shape[a] = static_cast<int64_t>(length);
      }
    }
  } else {
    ctx.fail("neither scales nor sizes is given");
  }
  std::vector<float> roi;
  if (s.transform == Transform::tf_crop_and_resize) {
    if (!present(1)) {
      ctx.fail("coordinate_transformation_mode tf_crop_and_resize needs the roi input");
    }
    const std::vector<float> given = constant_floats(ctx, 1, "roi");
    if (given.size() != 2 * listed) {
      ctx.fail("roi has {} entries for {} axes, expected {}", given.size(), listed, 2 * listed);
    }
    roi.assign(2 * rank, 0.0f);  // [starts, ends]; an axis not listed keeps [0, 1]
    std::fill(roi.begin() + static_cast<std::ptrdiff_t>(rank), roi.end(), 1.0f);
    for (std::size_t i = 0; i < listed; ++i) {
      roi[resized[i]] = given[i];
      roi[resized[i] + rank] = given[i + listed];
    }
  }

  std::vector<AxisPass> passes;
  std::vector<int64_t> current = in.shape;
  std::size_t largest = 0;
  for (std::size_t a = 0; a < rank; ++a) {
    if (in.shape[a] == 0 || shape[a] == 0) {
      current[a] = shape[a];
      continue;  // an empty output: nothing to compute
    }
    bool identity = false;
    auto taps = axis_taps(s, scales[a], in.shape[a], shape[a], roi.empty() ? 0.0 : roi[a],
                          roi.empty() ? 1.0 : roi[a + rank], identity);
    if (identity) {
      continue;
    }
    AxisPass pass;
    pass.axis = a;
    pass.outer = element_count(std::span(current).first(a));
    pass.in_length = current[a];
    pass.out_length = shape[a];
    pass.inner = element_count(std::span(current).subspan(a + 1));
    pass.taps = std::move(taps);
    current[a] = shape[a];
    largest = std::max(largest, static_cast<std::size_t>(element_count(current)));
    passes.push_back(std::move(pass));
  }
  const std::size_t size = element_size(in.dtype);
  const std::size_t buffer = (largest * size + tensor_alignment - 1) / tensor_alignment * tensor_alignment;
  const bool empty = element_count(shape) == 0;
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.scratch_bytes = passes.size() > 1 ? 2 * buffer : 0;
  // In NHWC with its input or not at all (the tie): what it reads and writes, a feature pyramid's Adds and
  // Concat keep too.
  std::optional<NearestPixels> pixels = empty ? std::nullopt : nearest_pixels(in, shape, passes);
  auto kept = std::make_shared<bool>(false);
  if (pixels) op.blocked = nhwc_tied_ports(op.outputs[0].bytes(), [kept] { *kept = true; });
  op.kernel = [passes = std::move(passes), buffer, extrapolation, empty, dtype = in.dtype, pixels = std::move(pixels),
               kept](KernelContext& k) {
    if (empty) {
      return;
    }
    if (*kept) {
      run_nearest_nhwc(*pixels, k.input(0).data<float>(), k.output(0).data<float>(), k.pool);
      return;
    }
    if (passes.empty()) {
      std::memcpy(k.output(0).raw(), k.input(0).raw(), k.input(0).bytes());
      return;
    }
    visit_element_width(dtype, [&]<class U>() {
      auto run = [&]<class T>() {
        const T* src = reinterpret_cast<const T*>(k.input(0).raw());
        for (std::size_t p = 0; p < passes.size(); ++p) {
          T* dst = p + 1 == passes.size() ? reinterpret_cast<T*>(k.output(0).raw())
                                          : reinterpret_cast<T*>(k.scratch + (p % 2) * buffer);
          run_pass<T>(k.pool, passes[p], src, dst, extrapolation);
          src = dst;
        }
      };
      if (dtype == DataType::float32) {
        run.template operator()<float>();
      } else {
        run.template operator()<U>();
      }
    });
  };
  return op;
}

const OpRegistrar resize_op{"Resize", prepare_resize};
const OpRegistrar upsample_op{"Upsample", prepare_resize};

}  // namespace
}  // namespace rknnxx::host
