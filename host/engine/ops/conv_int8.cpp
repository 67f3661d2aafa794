// Conv on integers (docs/runtime-extensions.md, "Integer Conv"; measurements in benchmarks/README.md, "int8
// Conv on integers").
//
// A quantized model's Conv reads values x = s_x * (q_x - z_x) and weights w = s_w[m] * (q_w - z_w[m]) (per
// output channel m), all on int8 grids (Graph::integer_grid). Its output before the bias is then
//
//   s_x * s_w[m] * sum (q_w - z_w[m]) * (q_x - z_x)
//     = s_x * s_w[m] * (sum q_w * (q_x - z_x)  -  z_w[m] * sum (q_x - z_x))
//
// over the window's valid taps (padding is a real 0, q_x = z_x). The first sum is oneDNN's int8 convolution
// of u = q_x + 128 (uint8, zero point z_x + 128) with the stored int8 weights q_w, in int32; the second,
// S[p], is the sum of the input's integers over output p's window, the same for every output channel of a
// group: the same convolution with weights of ones and one output channel per group (only when some z_w is
// not 0: oneDNN 2.6 takes no weight zero point). Both are exact; the difference is converted to float32
// (exact below 2^24), times s_x * s_w[m] (rounded to float32), plus the bias, clamped by the fused
// activation: about three float roundings, where the float kernels round each product and partial sum. The
// step observer then rounds the output to its grid as before, so the two paths give the same int8 values
// except where the float sum's error crosses a rounding tie of the output grid
// (tests/engine/engine_conv_int8_test.cpp).
//
// Layouts: u is NHWC (what oneDNN's int8 kernels take), one dense block per slice of a grouped Conv, written
// while quantizing the NCHW input; the int32 sums come out NHWC and are reordered to the NCHW output, then
// converted in place. Threads as conv_onednn.cpp's: primitives for one image and one block of output channels
// (of groups), run on the pool's workers with OpenMP at one thread. Only where the int8 dot product is exact:
// VNNI (vpdpbusd) sums u8 * s8 products in int32, while oneDNN's AVX2 and AVX-512 kernels without it pair
// products in int16 with saturation.

#include "conv_int8.hpp"
#include "onednn_threads.hpp"

#if defined(RKNNXX_ENGINE_ONEDNN)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>
#endif

namespace rknnxx::host {

#if !defined(RKNNXX_ENGINE_ONEDNN)

bool prepare_int8_conv(const OpContext&, const OnednnConvRequest&, PreparedOp&) { return false; }

bool int8_conv_available() noexcept { return false; }

#else

namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

constexpr std::size_t alignment = 64;

std::size_t aligned(std::size_t bytes) { return (bytes + alignment - 1) / alignment * alignment; }

// The largest window (input channels per group times kernel taps) whose sums stay within int32: each term
// of both sums is at most 255 * 128 in magnitude, and their difference at most twice that.
constexpr int64_t max_window = 32768;

// Whether the integer path pays for this Conv: it quantizes the input and converts the int32 sums (work per
// element moved, about a nanosecond) and makes five oneDNN calls, for int8 arithmetic several times faster
// than float32 per product. Measured on 2026-12-02 (benchmarks/README.md, "int8 Conv on integers"): it paid
// on resnet18's Convs (windows of 147 to 4608 terms, 100 million products and more each) and lost on
// mobilenet_v2's (depthwise windows of 9 terms; 1x1 Convs of at most 20 million products): windows of at least
// 128 terms and at least 2^25 products.
bool worth_integers(int64_t window, int64_t out_channels, int64_t outputs) {
  constexpr int64_t min_window = 128;
  constexpr int64_t min_products = int64_t{1} << 25;
  return window >= min_window && window * out_channels >= min_products / std::max<int64_t>(1, outputs);
}

bool exact_int8_dot_product() noexcept {
  try {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto has = [isa](dnnl::cpu_isa want) {
      return (isa & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
    };
    return has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni);
  } catch (const dnnl::error&) {
    return false;
  }
}

enum class Mode { off, rule, always };

// RKNNXX_ENGINE_INT8: unset or "on" follows worth_integers; "always" takes every Conv it can (tests); "off".
Mode mode(const OpContext& ctx) {
  const char* env = std::getenv("RKNNXX_ENGINE_INT8");
  const std::string_view value = env != nullptr ? env : "on";
  if (value == "on" || value.empty()) return Mode::rule;
  if (value == "always") return Mode::always;
  if (value == "off") return Mode::off;
  ctx.fail("RKNNXX_ENGINE_INT8 is '{}'; expected on, always or off", value);
}

// One tensor-wide int8 grid (an activation's).
bool int8_activation(const IntegerGrid* grid) {
  return grid != nullptr && grid->scale.size() == 1 && grid->min >= -128 && grid->max <= 127 &&
      grid->zero_point[0] >= -128 && grid->zero_point[0] <= 127 && std::isfinite(grid->scale[0]) &&
      grid->scale[0] > 0.0f;
}

// The stored integers q_w of every weight and each output channel's scale and zero point; false unless every
// weight is exactly the grid value of an int8 integer (AffineParams::dequantize's rounding).
bool int8_weights(const Tensor& w, const IntegerGrid& grid, int64_t out_channels, std::vector<int8_t>& q,
                  std::vector<float>& scale, std::vector<int32_t>& zero_point) {
  const bool per_channel = grid.scale.size() != 1;
  if (grid.min < -128 || grid.max > 127 || grid.axis != 0 ||
      (per_channel && grid.scale.size() != static_cast<std::size_t>(out_channels)))
    return false;
  const int64_t per = w.elements() / out_channels;
  const float* values = w.data<float>();
  q.resize(static_cast<std::size_t>(w.elements()));
  for (int64_t m = 0; m < out_channels; ++m) {
    const auto slot = per_channel ? static_cast<std::size_t>(m) : 0;
    const double s = grid.scale[slot];
    const int32_t z = grid.zero_point[slot];
    if (!(s > 0.0) || !std::isfinite(s)) return false;
    scale.push_back(static_cast<float>(s));
    zero_point.push_back(z);
    for (int64_t i = m * per; i < (m + 1) * per; ++i) {
      const double t = std::nearbyint(static_cast<double>(values[i]) / s);
      if (!(std::abs(t) <= 255.0)) return false;  // NaN too
      const int32_t integer = static_cast<int32_t>(t) + z;
      if (integer < grid.min || integer > grid.max || static_cast<float>(s * (integer - z)) != values[i]) return false;
      q[static_cast<std::size_t>(i)] = static_cast<int8_t>(integer);
    }
  }
  return true;
}

// y = clamp(float(acc - zw * sums) * scale + bias, lo, hi) over one plane, in place: `plane` holds the int32
// sums on entry and the floats on return (each int32 read before its float is written). Eight lanes at a time
// with the compilers' vector extensions; compiled for AVX2, which every CPU this path runs on has (VNNI).
using Int8Lanes = int32_t __attribute__((vector_size(32)));
using Float8Lanes = float __attribute__((vector_size(32)));

__attribute__((target("avx2"))) void finish_plane(int32_t* plane, int64_t count, const int32_t* sums, int32_t zw,
                                                  float scale, float bias, float lo, float hi) {
  const bool correct = zw != 0 && sums != nullptr;
  int64_t i = 0;
  const Float8Lanes vscale = Float8Lanes{} + scale, vbias = Float8Lanes{} + bias;
  const Float8Lanes vlo = Float8Lanes{} + lo, vhi = Float8Lanes{} + hi;
  const Int8Lanes vzw = Int8Lanes{} + zw;
  for (; i + 8 <= count; i += 8) {
    Int8Lanes acc;
    std::memcpy(&acc, plane + i, sizeof acc);
    if (correct) {
      Int8Lanes s;
      std::memcpy(&s, sums + i, sizeof s);
      acc -= vzw * s;
    }
    Float8Lanes v = __builtin_convertvector(acc, Float8Lanes) * vscale + vbias;
    v = v < vlo ? vlo : v;
    v = v > vhi ? vhi : v;
    std::memcpy(plane + i, &v, sizeof v);
  }
  for (; i < count; ++i) {
    const int32_t acc = correct ? plane[i] - zw * sums[i] : plane[i];
    const float v = std::min(std::max(static_cast<float>(acc) * scale + bias, lo), hi);
    std::memcpy(plane + i, &v, sizeof v);
  }
}

// One input row of `channels` planes (`plane` floats apart) quantized into u: x / s_x + z rounded to the
// nearest integer (exact for grid values; NaN reads as the zero point), written NHWC (pixel after pixel,
// `channels` bytes each). In tiles of 16 channels by 16 pixels, so that the reads (along a row) and the writes
// (along a pixel's channels) are both contiguous; eight lanes at a time (AVX2, as finish_plane).
__attribute__((target("avx2"))) void quantize_block_row(const float* x, int64_t plane, int64_t channels, int64_t width,
                                                        uint8_t* out, float inverse_scale, int32_t zero) {
  constexpr int64_t tile = 16;
  const float lo = static_cast<float>(-zero), hi = static_cast<float>(255 - zero);
  const Float8Lanes vinv = Float8Lanes{} + inverse_scale, vlo = Float8Lanes{} + lo, vhi = Float8Lanes{} + hi;
  const Float8Lanes vzero = Float8Lanes{} + static_cast<float>(zero), magic = Float8Lanes{} + 0x1.8p23f;
  const Float8Lanes none = Float8Lanes{};
  alignas(32) uint8_t t[tile][tile];
  for (int64_t c0 = 0; c0 < channels; c0 += tile) {
    const int64_t cn = std::min(tile, channels - c0);
    for (int64_t w0 = 0; w0 < width; w0 += tile) {
      const int64_t wn = std::min(tile, width - w0);
      for (int64_t c = 0; c < cn; ++c) {
        const float* row = x + (c0 + c) * plane + w0;
        int64_t w = 0;
        for (; w + 8 <= wn; w += 8) {
          Float8Lanes v;
          std::memcpy(&v, row + w, sizeof v);
          v *= vinv;
          v = v < vlo ? vlo : v;
          v = v > vhi ? vhi : v;
          v = v == v ? v : none;
          const Int8Lanes q = __builtin_convertvector(((v + magic) - magic) + vzero, Int8Lanes);
          for (int l = 0; l < 8; ++l) t[c][w + l] = static_cast<uint8_t>(q[l]);
        }
        for (; w < wn; ++w) {
          float v = row[w] * inverse_scale;
          v = v < lo ? lo : v;
          v = v > hi ? hi : v;
          v = v == v ? v : 0.0f;
          t[c][w] = static_cast<uint8_t>(((v + 0x1.8p23f) - 0x1.8p23f) + static_cast<float>(zero));
        }
      }
      for (int64_t w = 0; w < wn; ++w) {
        uint8_t* pixel = out + (w0 + w) * channels + c0;
        for (int64_t c = 0; c < cn; ++c) pixel[c] = t[c][w];
      }
    }
  }
}

struct Slice {
  int64_t first_out = 0, outs = 0;  // output channels
  int64_t groups = 1;               // groups it covers (1 for group 1)
  int64_t u_offset = 0;             // bytes into an image's u where its input block starts
  dnnl::convolution_forward conv, sums;
  dnnl::memory::desc src, dst, sums_dst, scratchpad, sums_scratchpad;
  dnnl::memory weights, ones;  // reordered once
  dnnl::reorder to_planes;     // the int32 sums, NHWC -> NCHW into the output
  std::optional<dnnl::reorder> sums_to_planes;
  dnnl::memory::desc planes, sums_planes;
  std::size_t dst_bytes = 0, sums_bytes = 0, sums_planes_bytes = 0;  // in a worker's region, in this order
};

// An input block: channels [first, first + channels) of an image, quantized into u as one dense NHWC block.
struct InputBlock {
  int64_t first = 0, channels = 0, u_offset = 0;
};

struct Int8Conv {
  WindowGeometry g;
  int64_t out_channels = 0, out_per_group = 0;
  bool has_bias = false, has_activation = false;
  float act_min = 0.0f, act_max = 0.0f;
  int32_t input_zero = 0;            // z_x + 128: u's zero point
  float input_inverse_scale = 1.0f;  // 1 / s_x
  std::vector<float> scale;          // s_x * s_w[m]
  std::vector<int32_t> weight_zero;  // z_w[m]
  bool needs_sums = false;           // some z_w[m] is not 0
  std::vector<Slice> slices;
  std::vector<InputBlock> blocks;
  std::size_t u_bytes = 0, worker_bytes = 0;  // per image, per worker

  void quantize_row(const float* x, uint8_t* block, const InputBlock& b, int64_t h) const {
    quantize_block_row(x + b.first * g.in_size() + h * g.in_w, g.in_size(), b.channels, g.in_w,
                       block + h * g.in_w * b.channels, input_inverse_scale, input_zero);
  }

  // One output plane of the slice: int32 sums in place (NCHW) to float32, corrected, scaled, biased, clamped.
  void finish(int64_t m, int32_t* plane, const int32_t* sums, const float* bias) const {
    finish_plane(plane, g.out_size(), sums, weight_zero[static_cast<std::size_t>(m)],
                 scale[static_cast<std::size_t>(m)], bias != nullptr ? bias[m] : 0.0f,
                 has_activation ? act_min : -std::numeric_limits<float>::infinity(),
                 has_activation ? act_max : std::numeric_limits<float>::infinity());
  }

  void run(KernelContext& k) const {
    const float* x = k.input(0).data<float>();
    const float* bias = has_bias ? k.input(2).data<float>() : nullptr;
    float* y = k.output(0).data<float>();
    const int64_t in_image = g.channels * g.in_size(), positions = g.out_size();
    const int64_t out_image = out_channels * positions;
    std::byte* u_all = k.scratch;
    std::byte* workers = u_all + u_bytes * static_cast<std::size_t>(g.batch);
    const auto u_of = [&](int64_t n) { return u_all + u_bytes * static_cast<std::size_t>(n); };
    const dnnl::engine& engine = onednn_cpu_engine();
    k.pool.parallel_for(g.batch * g.in_h, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / g.in_h;
        for (const InputBlock& b : blocks)
          quantize_row(x + n * in_image, reinterpret_cast<uint8_t*>(u_of(n) + b.u_offset), b, t - n * g.in_h);
      }
    });
    const auto count = static_cast<int64_t>(slices.size());
    k.pool.parallel_for(g.batch * count, 1, [&](int64_t begin, int64_t end, std::size_t worker) {
      SerialOpenmp serial;
      dnnl::stream stream(engine);
      std::byte* region = workers + worker_bytes * worker;
      int32_t zero = input_zero;
      dnnl::memory zero_memory({{1}, dt::s32, tag::x}, engine, &zero);
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / count;
        const Slice& s = slices[static_cast<std::size_t>(t - n * count)];
        dnnl::memory src(s.src, engine, u_of(n) + s.u_offset);
        auto* planes = reinterpret_cast<int32_t*>(y + n * out_image + s.first_out * positions);
        dnnl::memory dst(s.dst, engine, region);
        dnnl::memory out(s.planes, engine, planes);
        dnnl::memory scratchpad(s.scratchpad, engine, region + s.dst_bytes);
        s.conv.execute(stream,
                       {{DNNL_ARG_SRC, src},
                        {DNNL_ARG_WEIGHTS, s.weights},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_SCRATCHPAD, scratchpad},
                        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_memory}});
        s.to_planes.execute(stream, dst, out);
        const int32_t* sums = nullptr;
        if (needs_sums) {
          std::byte* sums_region = region + s.dst_bytes + s.sums_bytes;
          dnnl::memory sums_dst(s.sums_dst, engine, sums_region);
          dnnl::memory sums_scratchpad(s.sums_scratchpad, engine, sums_region + aligned(s.sums_dst.get_size()));
          s.sums.execute(stream,
                         {{DNNL_ARG_SRC, src},
                          {DNNL_ARG_WEIGHTS, s.ones},
                          {DNNL_ARG_DST, sums_dst},
                          {DNNL_ARG_SCRATCHPAD, sums_scratchpad},
                          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_memory}});
          sums = reinterpret_cast<const int32_t*>(sums_region);
          if (s.sums_to_planes) {
            dnnl::memory sums_planes(s.sums_planes, engine, region + s.dst_bytes);
            s.sums_to_planes->execute(stream, sums_dst, sums_planes);
            sums = reinterpret_cast<const int32_t*>(region + s.dst_bytes);
          }
        }
        stream.wait();
        for (int64_t j = 0; j < s.outs; ++j) {
          const int64_t m = s.first_out + j;
          const int64_t group_in_slice = j / out_per_group;
          finish(m, planes + j * positions,
                 sums != nullptr ? sums + (s.groups > 1 ? group_in_slice : 0) * positions : nullptr, bias);
        }
      }
    });
  }
};

}  // namespace

bool int8_conv_available() noexcept {
  static const bool available = exact_int8_dot_product();
  return available;
}

bool prepare_int8_conv(const OpContext& ctx, const OnednnConvRequest& r, PreparedOp& op) {
  const WindowGeometry& g = r.g;
  const Tensor* weights = ctx.constant(1);
  const IntegerGrid* input_grid = ctx.input_grid(0);
  const IntegerGrid* weight_grid = ctx.input_grid(1);
  // A fused chain other than one clamp (Relu, Clip: all a quantized graph fuses, FusionScope::clamp) stays
  // on the float kernels, which apply it.
  const bool clamp_only = r.epilogue.empty() || r.epilogue.is_clamp();
  if (ctx.input_count() > 3 || !clamp_only || weights == nullptr || weight_grid == nullptr ||
      !int8_activation(input_grid) || !int8_conv_available() || g.batch <= 0 || g.out_h <= 0 || g.out_w <= 0 ||
      r.out_channels <= 0)
    return false;
  auto impl = std::make_shared<Int8Conv>();
  Int8Conv& c = *impl;
  c.g = g;
  c.out_channels = r.out_channels;
  const int64_t in_per_group = g.channels / r.group;
  c.out_per_group = r.out_channels / r.group;
  if (in_per_group * g.kernel_h * g.kernel_w > max_window) return false;
  const Mode chosen = mode(ctx);
  if (chosen == Mode::off ||
      (chosen == Mode::rule &&
       !worth_integers(in_per_group * g.kernel_h * g.kernel_w, r.out_channels, g.batch * g.out_size()))) {
    return false;
  }
  std::vector<int8_t> q;
  std::vector<float> weight_scale;
  if (!int8_weights(*weights, *weight_grid, r.out_channels, q, weight_scale, c.weight_zero)) return false;
  c.has_bias = ctx.has_input(2);
  c.has_activation = r.epilogue.is_clamp();
  c.act_min = c.has_activation ? r.epilogue.steps[0].a : 0.0f;
  c.act_max = c.has_activation ? r.epilogue.steps[0].b : 0.0f;
  const float input_scale = input_grid->scale[0];
  c.input_zero = input_grid->zero_point[0] + 128;
  c.input_inverse_scale = 1.0f / input_scale;
  for (const float s : weight_scale) c.scale.push_back(static_cast<float>(static_cast<double>(input_scale) * s));
  c.needs_sums = std::any_of(c.weight_zero.begin(), c.weight_zero.end(), [](int32_t z) { return z != 0; });
  const std::vector<int8_t> ones(static_cast<std::size_t>(g.channels * g.kernel_h * g.kernel_w), 1);

  SerialOpenmp serial;  // primitives made for one thread run on one thread
  const dnnl::engine& engine = onednn_cpu_engine();
  dnnl::stream stream(engine);
  const dnnl::memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dilation_h - 1, g.dilation_w - 1};
  const dnnl::memory::dims pad_l{g.pad_top, g.pad_left}, pad_r{g.pad_bottom, g.pad_right};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  const bool grouped = r.group > 1;
  // Blocks of output channels (of groups) for the pool's threads, in multiples of 16 channels where possible.
  const int64_t units = grouped ? r.group : r.out_channels;
  const int64_t step = grouped ? (16 % c.out_per_group == 0 ? std::max<int64_t>(1, 16 / c.out_per_group) : 1) : 16;
  const int64_t steps = (units + step - 1) / step;
  const int64_t count = std::clamp<int64_t>(static_cast<int64_t>(ctx.threads()), 1, steps);
  const int64_t per = (steps + count - 1) / count * step;
  const int64_t kernel = g.kernel_h * g.kernel_w;
  std::size_t worker_bytes = 0;
  const auto fast = [](const auto& pd) {
    return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;  // oneDNN's reference loops: slower than floats
  };
  try {
    for (int64_t first = 0; first < units; first += per) {
      const int64_t n_units = std::min(per, units - first);
      Slice s;
      s.first_out = grouped ? first * c.out_per_group : first;
      s.outs = grouped ? n_units * c.out_per_group : n_units;
      s.groups = grouped ? n_units : 1;
      const int64_t first_in = grouped ? first * in_per_group : 0;
      const int64_t in_c = grouped ? n_units * in_per_group : g.channels;
      s.u_offset = first_in * g.in_size();  // the blocks before hold the channels before
      const dnnl::memory::desc src({1, in_c, g.in_h, g.in_w}, dt::u8, tag::nhwc);
      s.src = src;
      if (grouped || first == 0) {
        InputBlock b;
        b.first = first_in;
        b.channels = in_c;
        b.u_offset = s.u_offset;
        c.blocks.push_back(std::move(b));
      }
      s.dst = dnnl::memory::desc({1, s.outs, g.out_h, g.out_w}, dt::s32, tag::nhwc);
      s.planes = dnnl::memory::desc({1, s.outs, g.out_h, g.out_w}, dt::s32, tag::nchw);
      const dnnl::memory::dims w_dims = grouped
          ? dnnl::memory::dims{n_units, c.out_per_group, in_per_group, g.kernel_h, g.kernel_w}
          : dnnl::memory::dims{s.outs, in_c, g.kernel_h, g.kernel_w};
      const dnnl::memory::desc user_w(w_dims, dt::s8, grouped ? tag::goihw : tag::oihw);
      const dnnl::memory::desc w_any(w_dims, dt::s8, tag::any);
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, src, w_any, s.dst, strides,
                                                 dilates, pad_l, pad_r);
      const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
      if (!fast(pd)) return false;
      s.scratchpad = pd.scratchpad_desc();
      s.conv = dnnl::convolution_forward(pd);
      s.weights = dnnl::memory(pd.weights_desc(), engine);
      dnnl::memory user_w_memory(user_w, engine, q.data() + s.first_out * in_per_group * kernel);
      dnnl::reorder(user_w_memory, s.weights).execute(stream, user_w_memory, s.weights);
      s.to_planes = dnnl::reorder(dnnl::reorder::primitive_desc(engine, s.dst, engine, s.planes));
      s.dst_bytes = aligned(s.dst.get_size());
      std::size_t bytes = s.dst_bytes + aligned(s.scratchpad.get_size());
      if (c.needs_sums) {
        // S per group of the slice: the same Conv with weights of ones and one output channel per group.
        const dnnl::memory::dims ones_dims = grouped
            ? dnnl::memory::dims{n_units, 1, in_per_group, g.kernel_h, g.kernel_w}
            : dnnl::memory::dims{1, in_c, g.kernel_h, g.kernel_w};
        s.sums_dst = dnnl::memory::desc({1, s.groups, g.out_h, g.out_w}, dt::s32, tag::nhwc);
        s.sums_planes = dnnl::memory::desc({1, s.groups, g.out_h, g.out_w}, dt::s32, tag::nchw);
        const dnnl::convolution_forward::desc sums_desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
            dnnl::memory::desc(ones_dims, dt::s8, tag::any), s.sums_dst, strides, dilates, pad_l, pad_r);
        const dnnl::convolution_forward::primitive_desc sums_pd(sums_desc, attr, engine);
        if (!fast(sums_pd)) return false;
        s.sums = dnnl::convolution_forward(sums_pd);
        s.sums_scratchpad = sums_pd.scratchpad_desc();
        s.ones = dnnl::memory(sums_pd.weights_desc(), engine);
        dnnl::memory user_ones(dnnl::memory::desc(ones_dims, dt::s8, grouped ? tag::goihw : tag::oihw), engine,
                               const_cast<int8_t*>(ones.data()));
        dnnl::reorder(user_ones, s.ones).execute(stream, user_ones, s.ones);
        if (s.groups > 1)
          s.sums_to_planes = dnnl::reorder(dnnl::reorder::primitive_desc(engine, s.sums_dst, engine, s.sums_planes));
        // Region: dst | sums planes (NCHW) | sums (NHWC) | its scratchpad; the conv's scratchpad after dst.
        s.sums_bytes = aligned(s.sums_planes.get_size());
        bytes = std::max(
            bytes, s.dst_bytes + s.sums_bytes + aligned(s.sums_dst.get_size()) + aligned(s.sums_scratchpad.get_size()));
      }
      worker_bytes = std::max(worker_bytes, bytes);
      c.slices.push_back(std::move(s));
    }
    stream.wait();
  } catch (const dnnl::error&) {
    return false;  // a Conv oneDNN does not take on integers stays on the float kernels
  }
  c.u_bytes = aligned(static_cast<std::size_t>(checked_mul(g.channels, g.in_size(), "the scratch size")));
  c.worker_bytes = aligned(worker_bytes);
  op.scratch_bytes = static_cast<std::size_t>(checked_add(
      checked_mul(static_cast<int64_t>(c.u_bytes), g.batch, "the scratch size"),
      checked_mul(static_cast<int64_t>(c.worker_bytes), static_cast<int64_t>(ctx.threads()), "the scratch size"),
      "the scratch size"));
  op.kernel = [impl](KernelContext& k) { impl->run(k); };
  return true;
}

#endif

}  // namespace rknnxx::host
