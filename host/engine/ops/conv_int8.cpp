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
// group, computed here once per image and group (only for groups with a channel of nonzero z_w: oneDNN 2.6
// takes no weight zero point). Both are exact; the difference is converted to float32 (exact below 2^24),
// times s_x * s_w[m] (rounded to float32), plus the bias, clamped by the fused activation: about two float
// roundings, where the float kernels round each of the K products' partial sums. The step observer then
// rounds the output to its grid as before, so the two paths give the same int8 values except where the
// float sum's error crosses a rounding tie of the output grid (tests/engine/engine_conv_int8_test.cpp).
//
// Layouts: u is NHWC (what oneDNN's int8 kernels take), written while quantizing the NCHW input; the
// int32 sums come out NHWC and are written NCHW by the final pass. Threads as conv_onednn.cpp's: primitives
// for one image and one block of output channels (of groups), run on the pool's workers with OpenMP at one
// thread. Only where the int8 dot product is exact: VNNI (vpdpbusd) sums u8 * s8 products in int32, while
// oneDNN's AVX2 and AVX-512 kernels without it pair products in int16 with saturation.

#include "conv_int8.hpp"
#include "onednn_threads.hpp"

#if defined(RKNNXX_ENGINE_ONEDNN)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
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

bool enabled(const OpContext& ctx) {
  const char* env = std::getenv("RKNNXX_ENGINE_INT8");
  const std::string_view mode = env != nullptr ? env : "on";
  if (mode == "on" || mode.empty()) return true;
  if (mode == "off") return false;
  ctx.fail("RKNNXX_ENGINE_INT8 is '{}'; expected on or off", mode);
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

struct Slice {
  int64_t first_out = 0, outs = 0;  // output channels
  int64_t src_offset = 0;           // bytes into an image's u where its input block starts
  dnnl::convolution_forward conv;
  dnnl::memory::desc src, dst, scratchpad;
  dnnl::memory weights;  // reordered once
};

struct Int8Conv {
  WindowGeometry g;
  int64_t out_channels = 0, group = 1, in_per_group = 0, out_per_group = 0;
  bool has_bias = false, has_activation = false;
  float act_min = 0.0f, act_max = 0.0f;
  float input_inverse_scale = 1.0f;  // 1 / s_x
  int32_t input_zero = 0;            // z_x + 128: u's zero point
  std::vector<float> scale;          // s_x * s_w[m]
  std::vector<int32_t> weight_zero;  // z_w[m]
  std::vector<int64_t> sum_slot;     // per group: its window sums' index, -1 when none is needed
  // Where input channel c lies in an image's u: u is one dense NHWC block per slice of a grouped Conv (its own
  // channels; oneDNN's int8 kernels take dense blocks), one block of every channel for group 1.
  std::vector<int64_t> channel_offset, pixel_stride;
  int64_t sum_groups = 0;
  std::vector<Slice> slices;
  std::size_t u_bytes = 0, sum_bytes = 0, worker_bytes = 0;  // per image (u, sums) and per worker

  // u of input row h of one image: the NCHW floats quantized (exact for grid values) and written NHWC.
  void quantize_row(const float* x, uint8_t* u, int64_t h) const {
    const int64_t w_count = g.in_w, c_count = g.channels;
    const float lo = static_cast<float>(-input_zero), hi = static_cast<float>(255 - input_zero);
    const float zero = static_cast<float>(input_zero), magic = 0x1.8p23f;
    for (int64_t c = 0; c < c_count; ++c) {
      const float* row = x + c * g.in_size() + h * w_count;
      const int64_t stride = pixel_stride[static_cast<std::size_t>(c)];
      uint8_t* out = u + channel_offset[static_cast<std::size_t>(c)] + h * w_count * stride;
      for (int64_t w = 0; w < w_count; ++w) {
        float t = row[w] * input_inverse_scale;
        t = t < lo ? lo : t;
        t = t > hi ? hi : t;
        t = t == t ? t : 0.0f;  // NaN reads as the zero point
        out[w * stride] = static_cast<uint8_t>(((t + magic) - magic) + zero);
      }
    }
  }

  // S[p] of one image and group: the sum of q_x - z_x = u - input_zero over output p's valid taps.
  void window_sums(const uint8_t* u, int64_t gi, int32_t* plane, int32_t* sums) const {
    const auto first = static_cast<std::size_t>(gi * in_per_group);
    const int64_t stride = pixel_stride[first];
    const int32_t offset = static_cast<int32_t>(in_per_group) * input_zero;
    for (int64_t i = 0; i < g.in_size(); ++i) {
      const uint8_t* pixel = u + channel_offset[first] + i * stride;
      int32_t sum = 0;
      for (int64_t c = 0; c < in_per_group; ++c) sum += pixel[c];
      plane[i] = sum - offset;
    }
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        int32_t sum = 0;
        for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
          const int64_t ih = oh * g.stride_h - g.pad_top + ki * g.dilation_h;
          if (ih < 0 || ih >= g.in_h) continue;
          for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
            const int64_t iw = ow * g.stride_w - g.pad_left + kj * g.dilation_w;
            if (iw >= 0 && iw < g.in_w) sum += plane[ih * g.in_w + iw];
          }
        }
        sums[oh * g.out_w + ow] = sum;
      }
    }
  }

  // The slice's int32 sums (NHWC) to float32 outputs (NCHW): corrected, scaled, biased, clamped.
  void finish(const Slice& s, const int32_t* acc, const int32_t* image_sums, const float* bias, float* y) const {
    const int64_t positions = g.out_size(), outs = s.outs;
    constexpr int64_t block = 64;
    const float lo = has_activation ? act_min : -std::numeric_limits<float>::infinity();
    const float hi = has_activation ? act_max : std::numeric_limits<float>::infinity();
    for (int64_t p0 = 0; p0 < positions; p0 += block) {
      const int64_t p1 = std::min(positions, p0 + block);
      for (int64_t j = 0; j < outs; ++j) {
        const int64_t m = s.first_out + j;
        const float sc = scale[static_cast<std::size_t>(m)];
        const float b = bias != nullptr ? bias[m] : 0.0f;
        const int32_t zw = weight_zero[static_cast<std::size_t>(m)];
        const int64_t slot = sum_slot[static_cast<std::size_t>(m / out_per_group)];
        float* out = y + m * positions;
        const int32_t* a = acc + j;
        if (zw != 0 && slot >= 0) {
          const int32_t* sums = image_sums + slot * positions;
          for (int64_t p = p0; p < p1; ++p) {
            const float v = static_cast<float>(a[p * outs] - zw * sums[p]) * sc + b;
            out[p] = std::min(std::max(v, lo), hi);
          }
        } else {
          for (int64_t p = p0; p < p1; ++p) {
            const float v = static_cast<float>(a[p * outs]) * sc + b;
            out[p] = std::min(std::max(v, lo), hi);
          }
        }
      }
    }
  }

  void run(KernelContext& k) const {
    const float* x = k.input(0).data<float>();
    const float* bias = has_bias ? k.input(2).data<float>() : nullptr;
    float* y = k.output(0).data<float>();
    const int64_t in_image = g.channels * g.in_size(), out_image = out_channels * g.out_size();
    std::byte* u_all = k.scratch;
    std::byte* sums_all = u_all + u_bytes * static_cast<std::size_t>(g.batch);
    std::byte* workers = sums_all + sum_bytes * static_cast<std::size_t>(g.batch);
    const auto u_of = [&](int64_t n) {
      return reinterpret_cast<uint8_t*>(u_all + u_bytes * static_cast<std::size_t>(n));
    };
    const auto sums_of = [&](int64_t n) {
      return reinterpret_cast<int32_t*>(sums_all + sum_bytes * static_cast<std::size_t>(n));
    };
    k.pool.parallel_for(g.batch * g.in_h, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / g.in_h;
        quantize_row(x + n * in_image, u_of(n), t - n * g.in_h);
      }
    });
    if (sum_groups > 0) {
      k.pool.parallel_for(g.batch * group, 1, [&](int64_t begin, int64_t end, std::size_t worker) {
        auto* plane = reinterpret_cast<int32_t*>(workers + worker_bytes * worker);
        for (int64_t t = begin; t < end; ++t) {
          const int64_t n = t / group, gi = t - n * group;
          const int64_t slot = sum_slot[static_cast<std::size_t>(gi)];
          if (slot >= 0) window_sums(u_of(n), gi, plane, sums_of(n) + slot * g.out_size());
        }
      });
    }
    const dnnl::engine& engine = onednn_cpu_engine();
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
        dnnl::memory src(s.src, engine, u_of(n) + s.src_offset);
        dnnl::memory dst(s.dst, engine, region);
        dnnl::memory scratchpad(s.scratchpad, engine, region + aligned(s.dst.get_size()));
        s.conv.execute(stream,
                       {{DNNL_ARG_SRC, src},
                        {DNNL_ARG_WEIGHTS, s.weights},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_SCRATCHPAD, scratchpad},
                        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_memory}});
        stream.wait();
        finish(s, reinterpret_cast<const int32_t*>(region), sums_of(n), bias, y + n * out_image);
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
  if (ctx.input_count() > 3 || weights == nullptr || weight_grid == nullptr || !int8_activation(input_grid) ||
      !enabled(ctx) || !int8_conv_available() || g.batch <= 0 || g.out_h <= 0 || g.out_w <= 0 || r.out_channels <= 0)
    return false;
  auto impl = std::make_shared<Int8Conv>();
  Int8Conv& c = *impl;
  c.g = g;
  c.out_channels = r.out_channels;
  c.group = r.group;
  c.in_per_group = g.channels / r.group;
  c.out_per_group = r.out_channels / r.group;
  if (c.in_per_group * g.kernel_h * g.kernel_w > max_window) return false;
  std::vector<int8_t> q;
  std::vector<float> weight_scale;
  if (!int8_weights(*weights, *weight_grid, r.out_channels, q, weight_scale, c.weight_zero)) return false;
  c.has_bias = ctx.has_input(2);
  c.has_activation = r.has_activation;
  c.act_min = r.act_min;
  c.act_max = r.act_max;
  const float input_scale = input_grid->scale[0];
  c.input_inverse_scale = 1.0f / input_scale;
  c.input_zero = input_grid->zero_point[0] + 128;
  for (const float s : weight_scale) c.scale.push_back(static_cast<float>(static_cast<double>(input_scale) * s));
  c.sum_slot.assign(static_cast<std::size_t>(r.group), -1);
  for (int64_t m = 0; m < r.out_channels; ++m) {
    int64_t& slot = c.sum_slot[static_cast<std::size_t>(m / c.out_per_group)];
    if (c.weight_zero[static_cast<std::size_t>(m)] != 0 && slot < 0) slot = c.sum_groups++;
  }
  c.u_bytes = aligned(static_cast<std::size_t>(checked_mul(g.channels, g.in_size(), "the scratch size")));
  c.sum_bytes = aligned(static_cast<std::size_t>(
      checked_mul(checked_mul(c.sum_groups, g.out_size(), "the scratch size"), 4, "the scratch size")));

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
  std::size_t worker_bytes = static_cast<std::size_t>(checked_mul(g.in_size(), 4, "the scratch size"));
  try {
    for (int64_t first = 0; first < units; first += per) {
      const int64_t n_units = std::min(per, units - first);
      Slice s;
      s.first_out = grouped ? first * c.out_per_group : first;
      s.outs = grouped ? n_units * c.out_per_group : n_units;
      const int64_t first_in = grouped ? first * c.in_per_group : 0;
      const int64_t in_c = grouped ? n_units * c.in_per_group : g.channels;
      s.src_offset = first_in * g.in_size();  // the blocks before hold the channels before
      for (int64_t ch = first_in; (grouped || first == 0) && ch < first_in + in_c; ++ch) {
        c.channel_offset.push_back(s.src_offset + ch - first_in);
        c.pixel_stride.push_back(in_c);
      }
      s.src = dnnl::memory::desc({1, in_c, g.in_h, g.in_w}, dt::u8, tag::nhwc);
      s.dst = dnnl::memory::desc({1, s.outs, g.out_h, g.out_w}, dt::s32, tag::nhwc);
      const dnnl::memory::dims w_dims = grouped
          ? dnnl::memory::dims{n_units, c.out_per_group, c.in_per_group, g.kernel_h, g.kernel_w}
          : dnnl::memory::dims{s.outs, in_c, g.kernel_h, g.kernel_w};
      const dnnl::memory::desc user_w(w_dims, dt::s8, grouped ? tag::goihw : tag::oihw);
      const dnnl::memory::desc w_any(w_dims, dt::s8, tag::any);
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                 dnnl::algorithm::convolution_direct, s.src, w_any, s.dst, strides,
                                                 dilates, pad_l, pad_r);
      const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
      const std::string impl_name = pd.impl_info_str();
      if (impl_name.rfind("ref", 0) == 0) return false;  // oneDNN's reference loops: slower than the floats
      s.scratchpad = pd.scratchpad_desc();
      s.conv = dnnl::convolution_forward(pd);
      s.weights = dnnl::memory(pd.weights_desc(), engine);
      dnnl::memory user_w_memory(user_w, engine, q.data() + s.first_out * c.in_per_group * kernel);
      dnnl::reorder(user_w_memory, s.weights).execute(stream, user_w_memory, s.weights);
      worker_bytes = std::max(worker_bytes, aligned(s.dst.get_size()) + aligned(s.scratchpad.get_size()));
      c.slices.push_back(std::move(s));
    }
    stream.wait();
  } catch (const dnnl::error&) {
    return false;  // a Conv oneDNN does not take on integers stays on the float kernels
  }
  c.worker_bytes = aligned(worker_bytes);
  const int64_t image_bytes = static_cast<int64_t>(c.u_bytes + c.sum_bytes);
  op.scratch_bytes = static_cast<std::size_t>(checked_add(
      checked_mul(image_bytes, g.batch, "the scratch size"),
      checked_mul(static_cast<int64_t>(c.worker_bytes), static_cast<int64_t>(ctx.threads()), "the scratch size"),
      "the scratch size"));
  op.kernel = [impl](KernelContext& k) { impl->run(k); };
  return true;
}

#endif

}  // namespace rknnxx::host
