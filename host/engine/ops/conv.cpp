// Conv and ConvTranspose over any number of spatial axes (Conv's fast paths below are 1-D and
// 2-D; three or more axes take the n-axis im2col path at the end): groups, dilations, pads,
// auto_pad, float32.
// Conv runs one of three paths: depthwise (one input channel per group) as a direct loop,
// pointwise (1x1, stride 1, no pad) as a GEMM on the input itself, and everything else as
// im2col on tiles of output positions followed by a GEMM (Eigen). The fused element-wise chain
// (Graph::fuse_for_inference, conv_epilogue.hpp) is applied to each finished tile (depthwise: to
// each finished channel), while it is in cache; a lone clamp inside the depthwise stores.

#include "../four_lanes.hpp"
#include "../gemm.hpp"
#include "../op_registry.hpp"
#include "../broadcast.hpp"
#include "conv_epilogue.hpp"
#include "conv_int8.hpp"
#include "conv_onednn.hpp"
#include "spatial.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <vector>

namespace rknnxx::host {
namespace {

enum class ConvPath { depthwise, pointwise, im2col };

// What every Conv checks and keeps whatever its window's rank: the groups, and the activation
// the fusion pass folded into it.
struct ConvChannels {
  int64_t out_channels = 0;
  int64_t group = 1;
  int64_t in_per_group = 0;     // Cg
  int64_t out_per_group = 0;    // Mg
  bool has_activation = false;  // the epilogue is one clamp to [act_min, act_max]
  float act_min = 0.0f;
  float act_max = 0.0f;
  Epilogue epilogue;  // the fused chain (empty: none)
  // The residual Add's input 3 is not shaped as the Conv's output: the kernels stop before the add, which
  // with_residual_apart (below) does through broadcasting, with the steps after it.
  bool residual_apart = false;
};

// The fused chain on one tile of rows (output channels) x cols, after the GEMM: bias, then the steps;
// with a residual of another shape, the steps before the add only.
void apply_epilogue(const ConvChannels& p, float* y, int64_t ld, int64_t rows, int64_t cols, const float* bias,
                    const float* residual) {
  const std::size_t last = p.residual_apart ? p.epilogue.steps_before_residual() : p.epilogue.steps.size();
  for (int64_t r = 0; r < rows; ++r) {
    p.epilogue.apply(y + r * ld, cols, bias != nullptr ? bias[r] : 0.0f, bias != nullptr,
                     residual != nullptr ? residual + r * ld : nullptr, 0, last);
  }
}

struct ConvPlan : ConvChannels {
  WindowGeometry g;
  int64_t patch = 0;  // Kg = Cg * kh * kw
  int64_t tile = 0;   // output positions per task (pointwise and im2col)
  std::size_t scratch_floats_per_thread = 0;
  ConvPath path = ConvPath::im2col;
};

// col[Kg, len] for output positions [first, first + len) of one image and group.
void im2col(const ConvPlan& p, const float* x, int64_t first, int64_t len, float* col) {
  const WindowGeometry& g = p.g;
  for (int64_t c = 0; c < p.in_per_group; ++c) {
    const float* plane = x + c * g.in_size();
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        float* dst = col + ((c * g.kernel_h + ki) * g.kernel_w + kj) * len;
        const int64_t w_offset = kj * g.dilation_w - g.pad_left;
        const ValidRange valid = valid_outputs(w_offset, g.stride_w, g.in_w, g.out_w);
        int64_t pos = first;
        int64_t j = 0;
        while (j < len) {
          const int64_t oh = pos / g.out_w;
          const int64_t ow0 = pos - oh * g.out_w;
          const int64_t ow1 = std::min(g.out_w, ow0 + (len - j));
          const int64_t ih = oh * g.stride_h - g.pad_top + ki * g.dilation_h;
          float* d = dst + j;  // d[ow - ow0] is this row's element for output column ow
          if (ih < 0 || ih >= g.in_h) {
            std::fill(d, d + (ow1 - ow0), 0.0f);
          } else {
            const float* row = plane + ih * g.in_w;
            const int64_t lo = std::clamp(valid.begin, ow0, ow1);
            const int64_t hi = std::clamp(valid.end, lo, ow1);
            std::fill(d, d + (lo - ow0), 0.0f);
            if (g.stride_w == 1 && hi > lo) {
              std::copy(row + (lo + w_offset), row + (hi + w_offset), d + (lo - ow0));
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) {
                d[ow - ow0] = row[ow * g.stride_w + w_offset];
              }
            }
            std::fill(d + (hi - ow0), d + (ow1 - ow0), 0.0f);
          }
          j += ow1 - ow0;
          pos += ow1 - ow0;
        }
      }
    }
  }
}

// One output channel of a depthwise convolution, computed directly, one output row at a time.
// Each output is bias + its taps in (ki, kj) order, accumulated in registers and stored once
// (not one pass over the row per tap). The columns whose taps all lie inside the row (the
// interior) need no bounds checks; they are computed with GCC/Clang vector types, at stride 1
// 16 at a time (four independent sums hide the latency of the adds) then 4, strided 4 at a time.
// Written out because GCC's -O2 cost model leaves loops of unknown length scalar (this kernel was
// most of mobilenet_v2's time), and as one function: a helper per block, not inlined, was slower.
void depthwise_channel(const ConvPlan& p, const float* x, const float* w, float bias, float* y) {
  const WindowGeometry& g = p.g;
  const float lo_clamp = p.has_activation ? p.act_min : -std::numeric_limits<float>::infinity();
  const float hi_clamp = p.has_activation ? p.act_max : std::numeric_limits<float>::infinity();
  // Interior columns: every kj's input column is inside the row (kj = 0 and kj = kw - 1 bound it).
  const ValidRange first_tap = valid_outputs(-g.pad_left, g.stride_w, g.in_w, g.out_w);
  const ValidRange last_tap = valid_outputs((g.kernel_w - 1) * g.dilation_w - g.pad_left, g.stride_w, g.in_w, g.out_w);
  const int64_t inner_begin = std::max(first_tap.begin, last_tap.begin);
  const int64_t inner_end = std::max(inner_begin, std::min(first_tap.end, last_tap.end));
  // The taps of one output row: its valid input rows and their weights.
  std::array<const float*, 16> rows_small{};
  std::array<int64_t, 16> kis_small{};
  std::vector<const float*> rows_large;
  std::vector<int64_t> kis_large;
  const float** rows = rows_small.data();
  int64_t* kis = kis_small.data();
  if (g.kernel_h > static_cast<int64_t>(rows_small.size())) {
    rows_large.resize(static_cast<std::size_t>(g.kernel_h));
    kis_large.resize(static_cast<std::size_t>(g.kernel_h));
    rows = rows_large.data();
    kis = kis_large.data();
  }
  auto finish = [&](float v) { return std::min(std::max(v, lo_clamp), hi_clamp); };
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    float* out = y + oh * g.out_w;
    int64_t taps_h = 0;
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      const int64_t ih = oh * g.stride_h - g.pad_top + ki * g.dilation_h;
      if (ih >= 0 && ih < g.in_h) {
        rows[taps_h] = x + ih * g.in_w;
        kis[taps_h] = ki;
        ++taps_h;
      }
    }
    // One column with bounds checks (the borders, where padding cuts taps off).
    auto border = [&](int64_t ow) {
      float sum = bias;
      for (int64_t r = 0; r < taps_h; ++r) {
        const float* wr = w + kis[r] * g.kernel_w;
        for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
          const int64_t iw = ow * g.stride_w - g.pad_left + kj * g.dilation_w;
          if (iw >= 0 && iw < g.in_w) sum += wr[kj] * rows[r][iw];
        }
      }
      out[ow] = finish(sum);
    };
    for (int64_t ow = 0; ow < inner_begin; ++ow) border(ow);
    int64_t ow = inner_begin;
    if (g.stride_w == 1) {
      for (; ow + 16 <= inner_end; ow += 16) {
        f32x4 a0 = {bias, bias, bias, bias};
        f32x4 a1 = a0, a2 = a0, a3 = a0;
        for (int64_t r = 0; r < taps_h; ++r) {
          const float* wr = w + kis[r] * g.kernel_w;
          const float* src = rows[r] + ow - g.pad_left;
          for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
            const float* s = src + kj * g.dilation_w;
            const f32x4 v0 = load4(s), v1 = load4(s + 4), v2 = load4(s + 8), v3 = load4(s + 12);
            const float wv = wr[kj];
            a0 += wv * v0;
            a1 += wv * v1;
            a2 += wv * v2;
            a3 += wv * v3;
          }
        }
        for (int i = 0; i < 4; ++i) {
          out[ow + i] = finish(a0[i]);
          out[ow + 4 + i] = finish(a1[i]);
          out[ow + 8 + i] = finish(a2[i]);
          out[ow + 12 + i] = finish(a3[i]);
        }
      }
      for (; ow + 4 <= inner_end; ow += 4) {
        f32x4 a0 = {bias, bias, bias, bias};
        for (int64_t r = 0; r < taps_h; ++r) {
          const float* wr = w + kis[r] * g.kernel_w;
          const float* src = rows[r] + ow - g.pad_left;
          for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
            const f32x4 v0 = load4(src + kj * g.dilation_w);
            a0 += wr[kj] * v0;
          }
        }
        for (int i = 0; i < 4; ++i) out[ow + i] = finish(a0[i]);
      }
    } else {
      // Strided (the downsampling layers): 4 outputs at a time from strided loads.
      const int64_t st = g.stride_w;
      for (; ow + 4 <= inner_end; ow += 4) {
        f32x4 a = {bias, bias, bias, bias};
        const int64_t iw0 = ow * st - g.pad_left;
        for (int64_t r = 0; r < taps_h; ++r) {
          const float* wr = w + kis[r] * g.kernel_w;
          for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
            const float* s = rows[r] + iw0 + kj * g.dilation_w;
            const f32x4 v = {s[0], s[st], s[2 * st], s[3 * st]};
            a += wr[kj] * v;
          }
        }
        for (int i = 0; i < 4; ++i) out[ow + i] = finish(a[i]);
      }
    }
    for (; ow < inner_end; ++ow) {
      float sum = bias;
      const int64_t iw0 = ow * g.stride_w - g.pad_left;
      for (int64_t r = 0; r < taps_h; ++r) {
        const float* wr = w + kis[r] * g.kernel_w;
        const float* src = rows[r] + iw0;
        for (int64_t kj = 0; kj < g.kernel_w; ++kj) sum += wr[kj] * src[kj * g.dilation_w];
      }
      out[ow] = finish(sum);
    }
    for (ow = std::max(inner_end, inner_begin); ow < g.out_w; ++ow) border(ow);
  }
}

void run_conv(const ConvPlan& p, KernelContext& k) {
  const WindowGeometry& g = p.g;
  const float* x = k.input(0).data<float>();
  const float* w = k.input(1).data<float>();
  const float* bias = k.optional_input(2) != nullptr ? k.input(2).data<float>() : nullptr;
  float* y = k.output(0).data<float>();
  const float* residual = p.epilogue.has_residual() && !p.residual_apart ? k.input(3).data<float>() : nullptr;
  const int64_t in_image = g.channels * g.in_size();
  const int64_t out_image = p.out_channels * g.out_size();
  if (p.path == ConvPath::depthwise) {
    const int64_t kernel = g.kernel_h * g.kernel_w;
    k.pool.parallel_for(g.batch * p.out_channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / p.out_channels;
        const int64_t m = t - n * p.out_channels;
        const int64_t c = m / p.out_per_group;
        float* plane = y + n * out_image + m * g.out_size();
        depthwise_channel(p, x + n * in_image + c * g.in_size(), w + m * kernel, bias != nullptr ? bias[m] : 0.0f,
                          plane);
        if (!p.epilogue.empty() && !p.has_activation) {  // the chain, on the channel just written
          apply_epilogue(p, plane, 0, 1, g.out_size(), nullptr, residual != nullptr ? residual + (plane - y) : nullptr);
        }
      }
    });
    return;
  }
  const int64_t positions = g.out_size();
  const int64_t tiles = (positions + p.tile - 1) / p.tile;
  auto* scratch = reinterpret_cast<float*>(k.scratch);
  k.pool.parallel_for(g.batch * p.group * tiles, 1, [&](int64_t begin, int64_t end, std::size_t worker) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / (p.group * tiles);
      const int64_t gi = (t / tiles) % p.group;
      const int64_t first = (t % tiles) * p.tile;
      const int64_t len = std::min(p.tile, positions - first);
      const float* xg = x + n * in_image + gi * p.in_per_group * g.in_size();
      const float* wg = w + gi * p.out_per_group * p.patch;
      float* yg = y + n * out_image + gi * p.out_per_group * positions + first;
      if (p.path == ConvPath::pointwise) {
        gemm(false, false, p.out_per_group, len, p.patch, 1.0f, wg, p.patch, xg + first, g.in_size(), 0.0f, yg,
             positions);
      } else {
        float* col = scratch + worker * p.scratch_floats_per_thread;
        im2col(p, xg, first, len, col);
        gemm(false, false, p.out_per_group, len, p.patch, 1.0f, wg, p.patch, col, len, 0.0f, yg, positions);
      }
      apply_epilogue(p, yg, positions, p.out_per_group, len, bias != nullptr ? bias + gi * p.out_per_group : nullptr,
                     residual != nullptr ? residual + (yg - y) : nullptr);
    }
  });
}

void check_weights(const OpContext& ctx, std::size_t rank) {
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  if (ctx.input(1).shape.size() != rank) {
    ctx.fail("weights '{}' have shape {}, expected rank {} like input '{}' {}", ctx.input_name(1),
             shape_string(ctx.input(1).shape), rank, ctx.input_name(0), shape_string(ctx.input(0).shape));
  }
}

std::vector<int64_t> kernel_shape(const OpContext& ctx) {
  const auto& w = ctx.input(1).shape;
  std::vector<int64_t> from_weights(w.begin() + 2, w.end());
  const std::vector<int64_t> attr = ctx.attr_ints("kernel_shape", from_weights);
  if (attr != from_weights) {
    ctx.fail("kernel_shape {} does not match the weights '{}' {}", shape_string(attr), ctx.input_name(1),
             shape_string(w));
  }
  return from_weights;
}

// The fused chain of a Conv: its attributes, and input 3 when it has a residual Add.
Epilogue fused_epilogue(const OpContext& ctx) {
  const Epilogue e = epilogue_attributes(ctx);
  ctx.expect_inputs(2, e.has_residual() ? 4 : 3);
  if (e.has_residual() && !ctx.has_input(3)) {
    ctx.fail("attribute '{}' has a residual Add but input 3 is omitted", epilogue_kinds_attribute);
  }
  return e;
}

}  // namespace

Epilogue epilogue_attributes(const OpContext& ctx) {
  Epilogue e;
  if (ctx.attribute(epilogue_kinds_attribute) == nullptr) return e;
  const std::vector<int64_t> kinds = ctx.attr_ints(epilogue_kinds_attribute);
  const std::vector<float> params = ctx.attr_floats(epilogue_params_attribute);
  if (params.size() != kinds.size() * 2) {
    ctx.fail("attribute '{}' has {} values, expected 2 per step of '{}' ({})", epilogue_params_attribute, params.size(),
             epilogue_kinds_attribute, kinds.size());
  }
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < static_cast<int64_t>(EpilogueKind::clamp) || kinds[i] > static_cast<int64_t>(last_epilogue_kind)) {
      ctx.fail("attribute '{}' has the unknown step {}", epilogue_kinds_attribute, kinds[i]);
    }
    e.steps.push_back({static_cast<EpilogueKind>(kinds[i]), params[2 * i], params[2 * i + 1]});
  }
  if (std::count(kinds.begin(), kinds.end(), static_cast<int64_t>(EpilogueKind::add)) > 1) {
    ctx.fail("attribute '{}' has more than one residual Add", epilogue_kinds_attribute);
  }
  return e;
}

namespace {

// The groups against the weights' and the bias's shapes, and the fused activation's bounds.
ConvChannels conv_channels(OpContext& ctx, int64_t channels) {
  ConvChannels p;
  const auto& w = ctx.input(1).shape;
  p.group = ctx.attr_int("group", 1);
  p.out_channels = w[0];
  if (p.group <= 0 || channels % p.group != 0 || p.out_channels % p.group != 0) {
    ctx.fail("group {} does not divide the {} input and {} output channels", p.group, channels, p.out_channels);
  }
  p.in_per_group = channels / p.group;
  p.out_per_group = p.out_channels / p.group;
  if (w[1] != p.in_per_group) {
    ctx.fail("weights '{}' {} expect {} input channels per group, input '{}' {} has {} with group {}",
             ctx.input_name(1), shape_string(w), w[1], ctx.input_name(0), shape_string(ctx.input(0).shape),
             p.in_per_group, p.group);
  }
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DataType::float32});
    if (ctx.input(2).shape != std::vector<int64_t>{p.out_channels}) {
      ctx.fail("bias '{}' has shape {}, expected [{}]", ctx.input_name(2), shape_string(ctx.input(2).shape),
               p.out_channels);
    }
  }
  p.epilogue = fused_epilogue(ctx);
  if (p.epilogue.is_clamp()) {
    p.has_activation = true;
    p.act_min = p.epilogue.steps[0].a;
    p.act_max = p.epilogue.steps[0].b;
  }
  return p;
}

// A fused residual Add's input 3: float32, shaped as the output or broadcast to it.
void check_residual(const OpContext& ctx, ConvChannels& p, const std::vector<int64_t>& out_shape) {
  if (p.epilogue.has_residual()) {
    // Input 3 is the residual Add's other operand: shaped as the output, or broadcast to it.
    const TensorInfo& r = ctx.input(3);
    if (r.dtype != DataType::float32) {
      ctx.fail("the fused residual Add's input '{}' has element type {}, expected float32", ctx.input_name(3),
               dtype_name(r.dtype));
    }
    if (r.shape != out_shape) {
      const std::vector<std::vector<int64_t>> shapes{out_shape, r.shape};
      std::string error;
      (void)broadcast_shape(shapes, error);
      if (!error.empty()) {
        ctx.fail("the fused residual Add's input '{}' {} does not broadcast with the Conv's output shape {}",
                 ctx.input_name(3), shape_string(r.shape), shape_string(out_shape));
      }
      p.residual_apart = true;
    }
  }
}

// A residual Add of another shape than the Conv's output (broadcast either way): the Conv, with the steps
// before the add, into scratch memory; then the add through broadcasting into the output, which has the
// Add's shape, and the steps after it on each run of it.
PreparedOp with_residual_apart(const OpContext& ctx, PreparedOp op) {
  const Epilogue epilogue = fused_epilogue(ctx);
  const std::vector<int64_t> conv_shape = op.outputs.at(0).shape;
  const std::vector<std::vector<int64_t>> shapes{conv_shape, ctx.input(3).shape};
  const Broadcast bc(shapes);
  const std::size_t inner_scratch = (op.scratch_bytes + 63) / 64 * 64;
  const auto conv_bytes = static_cast<std::size_t>(
      checked_mul(element_count(conv_shape), static_cast<int64_t>(sizeof(float)), "the scratch size"));
  op.scratch_bytes = static_cast<std::size_t>(
      checked_add(static_cast<int64_t>(inner_scratch), static_cast<int64_t>(conv_bytes), "the scratch size"));
  op.outputs = {TensorInfo{DataType::float32, bc.shape()}};
  op.finishes_output = false;  // the Conv's output is not the stored one: the session rounds the sum
  op.kernel = [inner = std::move(op.kernel), epilogue, conv_shape, bc, inner_scratch](KernelContext& k) {
    Tensor conv = Tensor::view(DataType::float32, conv_shape, static_cast<void*>(k.scratch + inner_scratch));
    Tensor* conv_output[] = {&conv};
    KernelContext conv_context{k.inputs, conv_output, k.pool, k.scratch};
    inner(conv_context);
    const float* c = conv.data<float>();
    const float* r = k.input(3).data<float>();
    float* y = k.output(0).data<float>();
    const std::size_t after = epilogue.steps_before_residual() + 1;
    bc.parallel_runs(k.pool,
                     [&](int64_t out, std::span<const int64_t> offsets, std::span<const int64_t> steps, int64_t count) {
                       for (int64_t j = 0; j < count; ++j)
                         y[out + j] = c[offsets[0] + j * steps[0]] + r[offsets[1] + j * steps[1]];
                       epilogue.apply(y + out, count, 0.0f, false, nullptr, after);
                     });
  };
  return op;
}

PreparedOp prepare_conv_nd(OpContext& ctx);

PreparedOp prepare_conv_2d(OpContext& ctx);

PreparedOp prepare_conv(OpContext& ctx) {
  ctx.expect_inputs(2, 4);  // 4: a fused residual Add (fused_epilogue checks)
  // Three or more spatial axes: "Conv over three or more spatial axes" below.
  PreparedOp op = ctx.input(0).shape.size() > 4 ? prepare_conv_nd(ctx) : prepare_conv_2d(ctx);
  if (ctx.has_input(3) && ctx.input(3).shape != op.outputs.at(0).shape) {
    return with_residual_apart(ctx, std::move(op));
  }
  return op;
}

PreparedOp prepare_conv_2d(OpContext& ctx) {
  const std::size_t rank = ctx.input(0).shape.size();
  check_weights(ctx, rank);
  ConvPlan p;
  p.g = forward_window(ctx, kernel_shape(ctx), false);
  static_cast<ConvChannels&>(p) = conv_channels(ctx, p.g.channels);
  check_residual(ctx, p, p.g.output_shape(p.out_channels));
  const WindowGeometry& g = p.g;
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, g.output_shape(p.out_channels)}};
  const OnednnConvRequest request{g, p.out_channels, p.group, p.epilogue, !p.residual_apart};
  if (prepare_int8_conv(ctx, request, op)) {
    return op;  // on integers, in a quantized model (conv_int8.cpp)
  }
  if (prepare_onednn_conv(ctx, request, op)) {
    return op;  // oneDNN where it measured faster (conv_onednn.cpp)
  }
  p.patch = p.in_per_group * g.kernel_h * g.kernel_w;
  const auto threads = static_cast<int64_t>(ctx.threads());
  if (p.in_per_group == 1 && p.group > 1) {
    p.path = ConvPath::depthwise;
  } else {
    const bool pointwise = g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
        g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0;
    p.path = pointwise ? ConvPath::pointwise : ConvPath::im2col;
    const int64_t positions = std::max<int64_t>(1, g.out_size());
    // Enough tasks for every thread; im2col tiles also stay small enough for the cache.
    const int64_t images = std::max<int64_t>(1, g.batch * p.group);
    const int64_t wanted_tiles = std::max<int64_t>(1, (threads * 2 + images - 1) / images);
    int64_t tile = (positions + wanted_tiles - 1) / wanted_tiles;
    if (p.path == ConvPath::im2col) {
      tile = std::min(tile, std::max<int64_t>(32, (int64_t{1} << 17) / std::max<int64_t>(1, p.patch)));
    }
    tile = std::max<int64_t>(16, (tile + 15) / 16 * 16);
    p.tile = std::min(tile, positions);
    if (p.path == ConvPath::im2col) {
      p.scratch_floats_per_thread = static_cast<std::size_t>((p.patch * p.tile + 15) / 16 * 16);
    }
  }
  op.scratch_bytes = p.scratch_floats_per_thread * sizeof(float) * static_cast<std::size_t>(threads);
  op.kernel = [p](KernelContext& k) { run_conv(p, k); };
  return op;
}

struct ConvTransposePlan {
  WindowND g;  // in is the input, out the output, any number of spatial axes
  int64_t group = 1, in_per_group = 0, out_per_group = 0, out_channels = 0;
};

void run_conv_transpose(const ConvTransposePlan& p, KernelContext& k) {
  const WindowND& g = p.g;
  const float* x = k.input(0).data<float>();
  const float* w = k.input(1).data<float>();
  const float* bias = k.optional_input(2) != nullptr ? k.input(2).data<float>() : nullptr;
  float* y = k.output(0).data<float>();
  auto* col = reinterpret_cast<float*>(k.scratch);
  const int64_t rows = p.out_per_group * g.kernel_size();
  const int64_t in_size = g.in_size(), out_size = g.out_size();
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t gi = 0; gi < p.group; ++gi) {
      // col[Mg * kernel_size, in_size] = W_g^T * X_g, W_g stored as [Cg, Mg * kernel_size].
      const float* xg = x + (n * g.channels + gi * p.in_per_group) * in_size;
      const float* wg = w + gi * p.in_per_group * rows;
      parallel_gemm(k.pool, true, false, rows, in_size, p.in_per_group, 1.0f, wg, rows, xg, in_size, 0.0f, col,
                    in_size);
      // col2im: every output channel gathers its own rows, so channels run in parallel.
      k.pool.parallel_for(p.out_per_group, 1, [&](int64_t begin, int64_t end) {
        for (int64_t m = begin; m < end; ++m) {
          const int64_t channel = gi * p.out_per_group + m;
          float* out = y + (n * p.out_channels + channel) * out_size;
          std::fill(out, out + out_size, bias != nullptr ? bias[channel] : 0.0f);
          col2im_channel(g, col + m * g.kernel_size() * in_size, out);
        }
      });
    }
  }
}

PreparedOp prepare_conv_transpose(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  const auto& xs = ctx.input(0).shape;
  const std::size_t rank = xs.size();
  if (rank < 3) {
    ctx.fail("input '{}' has shape {}, expected N, C and at least one spatial axis", ctx.input_name(0),
             shape_string(xs));
  }
  check_weights(ctx, rank);
  const auto& ws = ctx.input(1).shape;
  ConvTransposePlan p;
  p.group = ctx.attr_int("group", 1);
  if (p.group <= 0 || xs[1] % p.group != 0 || ws[0] != xs[1]) {
    ctx.fail("weights '{}' {} and group {} do not fit the {} channels of input '{}'", ctx.input_name(1),
             shape_string(ws), p.group, xs[1], ctx.input_name(0));
  }
  p.in_per_group = xs[1] / p.group;
  p.out_per_group = ws[1];
  p.out_channels = p.out_per_group * p.group;
  const std::size_t spatial = rank - 2;
  const std::vector<int64_t> kernel = kernel_shape(ctx);
  const auto strides = window_attribute(ctx, "strides", 1, spatial);
  const auto dilations = window_attribute(ctx, "dilations", 1, spatial);
  const auto output_padding = window_attribute(ctx, "output_padding", 0, spatial);
  auto pads = window_attribute(ctx, "pads", 0, spatial * 2);
  std::vector<int64_t> output_shape = ctx.attr_ints("output_shape");
  if (output_shape.size() == rank) {
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  }
  if (!output_shape.empty() && output_shape.size() != spatial) {
    ctx.fail("attribute 'output_shape' has {} values, expected {}", output_shape.size(), spatial);
  }
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> out(spatial);
  for (std::size_t i = 0; i < spatial; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || kernel[i] <= 0) {
      ctx.fail("kernel sizes, strides and dilations must be positive");
    }
    const int64_t in = xs[i + 2];
    // Attributes may hold any int64: every step that could wrap is checked.
    const int64_t extent =
        checked_add(checked_mul(kernel[i] - 1, dilations[i], "the window extent"), 1, "the window extent");
    const int64_t reach =
        checked_add(checked_add((in >= 1 ? checked_mul(strides[i], in - 1, "the output size") : -strides[i]),
                                output_padding[i], "the output size"),
                    extent, "the output size");
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!output_shape.empty() || same) {
      out[i] = !output_shape.empty() ? output_shape[i] : checked_mul(in, strides[i], "the output size");
      // Negative when output_shape asks for more than the input gives; halves round down
      // (Python's //) as in the ONNX reference.
      const int64_t total = checked_sub(reach, out[i], "the padding");
      const int64_t small = total >= 0 ? total / 2 : -((-total + 1) / 2);
      // As the ONNX reference: SAME_UPPER puts the smaller half at the start.
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + spatial] = total - pads[i];
    } else {
      if (auto_pad == "VALID") {
        pads[i] = pads[i + spatial] = 0;
      }
      out[i] = checked_sub(checked_sub(reach, pads[i], "the output size"), pads[i + spatial], "the output size");
    }
    if (out[i] <= 0) {
      ctx.fail("the output size along axis {} would be {}", i + 2, out[i]);
    }
  }
  p.g = window_nd_from(xs, kernel, strides, dilations, pads, out);
  (void)element_count(p.g.output_shape(p.out_channels));  // the output, counted without wrapping
  const WindowND& g = p.g;
  if (ctx.has_input(2)) {
    ctx.expect_dtype(2, {DataType::float32});
    if (ctx.input(2).shape != std::vector<int64_t>{p.out_channels}) {
      ctx.fail("bias '{}' has shape {}, expected [{}]", ctx.input_name(2), shape_string(ctx.input(2).shape),
               p.out_channels);
    }
  }
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, g.output_shape(p.out_channels)}};
  op.scratch_bytes = static_cast<std::size_t>(checked_mul(
      checked_mul(checked_mul(p.out_per_group, g.kernel_size(), "the scratch size"), g.in_size(), "the scratch size"),
      sizeof(float), "the scratch size"));
  op.kernel = [p](KernelContext& k) { run_conv_transpose(p, k); };
  return op;
}

// ---- Conv over three or more spatial axes ----
// im2col over n axes on tiles of whole output rows (the last axis), then a GEMM, as the 2-D
// im2col path does; bias and a fused activation applied to each finished tile.

struct ConvNDPlan : ConvChannels {
  WindowND g;
  int64_t patch = 0;      // Cg * kernel_size
  int64_t tile_rows = 1;  // output rows per task
  std::size_t scratch_floats_per_thread = 0;
};

// col[patch, rows * out_w] for output rows [first_row, first_row + rows) of one image and group.
void im2col_nd(const ConvNDPlan& p, const float* x, int64_t first_row, int64_t rows, float* col) {
  const WindowND& g = p.g;
  const std::size_t last = g.spatial() - 1;
  const int64_t in_w = g.in[last], out_w = g.out[last], len = rows * out_w;
  const int64_t in_size = g.in_size(), in_rows = in_size / std::max<int64_t>(1, in_w);
  std::vector<int64_t> k(g.spatial(), 0), o(last, 0);
  for (int64_t c = 0; c < p.in_per_group; ++c) {
    const float* plane = x + c * in_size;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t tap = 0; tap < g.kernel_size(); ++tap) {
      float* dst = col + (c * g.kernel_size() + tap) * len;
      const int64_t w_offset = k[last] * g.dilation[last] - g.pad_begin[last];
      const ValidRange valid = valid_outputs(w_offset, g.stride[last], in_w, out_w);
      // The outer output coordinates of first_row.
      for (int64_t r = first_row, d = static_cast<int64_t>(last); d-- > 0;) {
        o[static_cast<std::size_t>(d)] = r % g.out[static_cast<std::size_t>(d)];
        r /= g.out[static_cast<std::size_t>(d)];
      }
      for (int64_t row = 0; row < rows; ++row) {
        float* out = dst + row * out_w;
        int64_t in_row = 0;  // the input row's index among the input rows, -1 when in the padding
        for (std::size_t d = 0; d < last && in_row >= 0; ++d) {
          const int64_t i = o[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
          in_row = i >= 0 && i < g.in[d] ? in_row * g.in[d] + i : -1;
        }
        if (in_row < 0 || in_row >= in_rows) {
          std::fill(out, out + out_w, 0.0f);
        } else {
          const float* src = plane + in_row * in_w;
          std::fill(out, out + valid.begin, 0.0f);
          for (int64_t ow = valid.begin; ow < valid.end; ++ow) out[ow] = src[ow * g.stride[last] + w_offset];
          std::fill(out + valid.end, out + out_w, 0.0f);
        }
        for (std::size_t d = last; d-- > 0;) {
          if (++o[d] < g.out[d]) break;
          o[d] = 0;
        }
      }
      for (std::size_t d = g.spatial(); d-- > 0;) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
  }
}

void run_conv_nd(const ConvNDPlan& p, KernelContext& k) {
  const WindowND& g = p.g;
  const float* x = k.input(0).data<float>();
  const float* w = k.input(1).data<float>();
  const float* bias = k.optional_input(2) != nullptr ? k.input(2).data<float>() : nullptr;
  float* y = k.output(0).data<float>();
  const int64_t out_w = g.out[g.spatial() - 1];
  const int64_t positions = g.out_size(), out_rows = positions / std::max<int64_t>(1, out_w);
  const int64_t tiles = (out_rows + p.tile_rows - 1) / p.tile_rows;
  const int64_t in_image = g.channels * g.in_size(), out_image = p.out_channels * positions;
  const float* residual = p.epilogue.has_residual() && !p.residual_apart ? k.input(3).data<float>() : nullptr;
  auto* scratch = reinterpret_cast<float*>(k.scratch);
  k.pool.parallel_for(g.batch * p.group * tiles, 1, [&](int64_t begin, int64_t end, std::size_t worker) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n = t / (p.group * tiles);
      const int64_t gi = (t / tiles) % p.group;
      const int64_t first_row = (t % tiles) * p.tile_rows;
      const int64_t rows = std::min(p.tile_rows, out_rows - first_row);
      const int64_t len = rows * out_w;
      float* col = scratch + worker * p.scratch_floats_per_thread;
      im2col_nd(p, x + n * in_image + gi * p.in_per_group * g.in_size(), first_row, rows, col);
      float* yg = y + n * out_image + gi * p.out_per_group * positions + first_row * out_w;
      gemm(false, false, p.out_per_group, len, p.patch, 1.0f, w + gi * p.out_per_group * p.patch, p.patch, col, len,
           0.0f, yg, positions);
      apply_epilogue(p, yg, positions, p.out_per_group, len, bias != nullptr ? bias + gi * p.out_per_group : nullptr,
                     residual != nullptr ? residual + (yg - y) : nullptr);
    }
  });
}

PreparedOp prepare_conv_nd(OpContext& ctx) {
  const std::size_t rank = ctx.input(0).shape.size();
  check_weights(ctx, rank);
  ConvNDPlan p;
  p.g = forward_window_nd(ctx, kernel_shape(ctx), false);
  static_cast<ConvChannels&>(p) = conv_channels(ctx, p.g.channels);
  check_residual(ctx, p, p.g.output_shape(p.out_channels));
  const WindowND& g = p.g;
  p.patch = checked_mul(p.in_per_group, g.kernel_size(), "the patch size");
  const int64_t out_w = std::max<int64_t>(1, g.out[g.spatial() - 1]);
  // Tiles of whole output rows, about 2^17 floats of columns each (as the 2-D path's tiles).
  const int64_t row_floats = checked_mul(p.patch, out_w, "the im2col tile");
  p.tile_rows = std::max<int64_t>(1, (int64_t{1} << 17) / std::max<int64_t>(1, row_floats));
  p.tile_rows = std::min(p.tile_rows, std::max<int64_t>(1, g.out_size() / out_w));
  p.scratch_floats_per_thread =
      static_cast<std::size_t>(checked_mul(row_floats, p.tile_rows, "the im2col tile") + 15) / 16 * 16;
  const auto threads = static_cast<int64_t>(ctx.threads());
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, g.output_shape(p.out_channels)}};
  op.scratch_bytes = static_cast<std::size_t>(
      checked_mul(checked_mul(static_cast<int64_t>(p.scratch_floats_per_thread), threads, "the scratch size"),
                  sizeof(float), "the scratch size"));
  op.kernel = [p](KernelContext& k) { run_conv_nd(p, k); };
  return op;
}

const OpRegistrar conv_op{"Conv", prepare_conv};
const OpRegistrar conv_transpose_op{"ConvTranspose", prepare_conv_transpose};

}  // namespace
}  // namespace rknnxx::host
