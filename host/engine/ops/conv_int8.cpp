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
// session's output rounding (KernelContext::finish_output) then rounds the output to its grid as before, so the
// two paths give the same int8 values except where the float sum's error crosses a rounding tie of the output
// grid (tests/engine/engine_conv_int8_test.cpp).
//
// Layouts: u is NHWC (what oneDNN's int8 kernels take), quantized from the NCHW input through 16 x 16 tiles, or
// element by element from an input kept NHWC (blocked_layout.hpp). The Conv runs in bands of output rows, all
// channels each (as conv_onednn.cpp's NHWC bands), so its output is plain NHWC too: kept, its int32 sums are
// written straight into the output and turned into floats in place; else into a worker's region, then reordered
// to the NCHW planes. Threads as conv_onednn.cpp's: primitives for one image and one band, run on the pool's
// workers with OpenMP at one thread. Only where the int8 dot product is exact: VNNI (vpdpbusd) sums u8 * s8
// products in int32, while oneDNN's AVX2 and AVX-512 kernels without it pair
// products in int16 with saturation.

#include "conv_int8.hpp"
#include "../blocked_layout.hpp"
#include "onednn_threads.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

#if defined(RKNNXX_ENGINE_ONEDNN)
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#endif

namespace rknnxx::host {

// oneDNN tries its AMX kernels first where the CPU has them (Sapphire Rapids and later). On a large Conv they
// take 0.3 to 0.6 of the time of its VNNI kernels, but each call costs about 11 µs before its first product, 33 µs
// for the 1x1 kernel: MobileNetV3-small's 1x1 Convs over 14x14 pixels took 35 to 50 µs on AMX and 5 to 12 on VNNI
// (benchmarks/README.md, "AMX or VNNI"). At 344 products a ns on VNNI and 1284 on AMX, each with 16 output
// channels or more (fewer fill as few of the lanes: a window sum's one channel takes 16 times as long a product),
// AMX saves 2.128 ps a product, which pays the fixed cost from 5.2 million products (15.5 for the 1x1 kernel).
bool amx_pays(std::string_view implementation, int64_t products, int64_t out_per_group) noexcept {
  constexpr double amx_saving_ns = 1.0 / 344.0 - 1.0 / 1284.0;
  const double fixed_ns = implementation.find("1x1") != std::string_view::npos ? 33000.0 : 11000.0;
  const double lanes = static_cast<double>(std::clamp<int64_t>(out_per_group, 1, 16));
  return static_cast<double>(products) * (16.0 / lanes) * amx_saving_ns > fixed_ns;
}

#if !defined(RKNNXX_ENGINE_ONEDNN)

bool prepare_int8_conv(const OpContext&, const OnednnConvRequest&, PreparedOp&) { return false; }

bool prepare_int8_gemm(const OpContext&, const Int8GemmRequest&, PreparedOp&) { return false; }

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

// Whether the integer path pays for this Conv. It saves about 6.6 ps a product (int8 arithmetic on VNNI against
// float32) and costs about 0.24 ns an input element (its quantization to uint8 and the window sums) and 0.2 ns an
// output element (the int32 sums turned into floats), the least-squares fit of the 55 Convs of mobilenet_v2 and
// resnet18 timed on both paths (benchmarks/README.md, "int8 Conv on integers", 2026-12-03): so it runs on integers
// where products > 37 inputs + 30 outputs. A depthwise Conv never pays: oneDNN's int8 depthwise kernel is no faster
// than the float one (9-term windows), and the window sums double it (measured 2.5 to 5 times slower).
bool worth_integers(const WindowGeometry& g, int64_t out_channels, int64_t group) {
  const int64_t in_per_group = g.channels / group;
  if (group > 1 && in_per_group == 1) return false;
  const int64_t inputs = g.channels * g.in_size(), outputs = out_channels * g.out_size();
  const int64_t products = outputs * in_per_group * g.kernel_h * g.kernel_w;  // below 2^63: each factor is bounded
  return products > 37 * inputs + 30 * outputs;
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

// The primitive of an int8 convolution: oneDNN's first kernel, or its first without AMX where AMX does not pay.
dnnl::convolution_forward::primitive_desc int8_primitive(const dnnl::convolution_forward::desc& desc,
                                                         const dnnl::primitive_attr& attr, const dnnl::engine& engine,
                                                         int64_t products, int64_t out_per_group) {
  const auto uses_amx = [](const auto& pd) {
    return std::string_view(pd.impl_info_str()).find("amx") != std::string_view::npos;
  };
  dnnl::convolution_forward::primitive_desc first(desc, attr, engine);
  if (!uses_amx(first) || amx_pays(first.impl_info_str(), products, out_per_group)) return first;
  dnnl::convolution_forward::primitive_desc other(desc, attr, engine);
  while (other.next_impl())
    if (!uses_amx(other)) return std::string_view(other.impl_info_str()).rfind("ref", 0) == 0 ? first : other;
  return first;
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
bool int8_activation(const IntegerGrid* grid) { return grid != nullptr && grid->tensor_wide_int8(); }

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

using Int8Lanes = int32_t __attribute__((vector_size(32)));
using Float8Lanes = float __attribute__((vector_size(32)));

// What turns a pixel's int32 sums into its floats: per output channel m, y = clamp(float(acc - z_w[m] * S) *
// scale[m] + bias[m], lo, hi), where S is the window sum of the pixel's group (groups per pixel).
struct Finish {
  const int32_t* weight_zero;
  const float *scale, *bias;
  float lo, hi;
  int64_t channels, groups, out_per_group;
};

// Pixels of `channels` int32 sums each (NHWC), turned into floats in place (each int32 read before its float is
// written); `sums`: `groups` window sums per pixel, or nullptr when every z_w is 0. Eight channels at a time with
// the compilers' vector extensions, compiled for AVX2, which every CPU this path runs on has (VNNI).
__attribute__((target("avx2"))) void finish_pixels(int32_t* data, int64_t pixels, const int32_t* sums,
                                                   const Finish& f) {
  const int64_t lanes_end = f.groups == 1 || f.out_per_group == 1 ? f.channels / 8 * 8 : 0;
  const Float8Lanes lo = Float8Lanes{} + f.lo, hi = Float8Lanes{} + f.hi;
  for (int64_t p = 0; p < pixels; ++p) {
    int32_t* acc = data + p * f.channels;
    const int32_t* sum = sums != nullptr ? sums + p * f.groups : nullptr;
    int64_t c = 0;
    for (; c < lanes_end; c += 8) {
      Int8Lanes a, zw;
      std::memcpy(&a, acc + c, sizeof a);
      if (sum != nullptr) {
        Int8Lanes s;
        if (f.groups == 1) {
          s = Int8Lanes{} + sum[0];
        } else {
          std::memcpy(&s, sum + c, sizeof s);  // one output channel per group: the group is the channel
        }
        std::memcpy(&zw, f.weight_zero + c, sizeof zw);
        a -= zw * s;
      }
      Float8Lanes scale, bias;
      std::memcpy(&scale, f.scale + c, sizeof scale);
      std::memcpy(&bias, f.bias + c, sizeof bias);
      Float8Lanes v = __builtin_convertvector(a, Float8Lanes) * scale + bias;
      v = v < lo ? lo : v;
      v = v > hi ? hi : v;
      std::memcpy(acc + c, &v, sizeof v);
    }
    for (; c < f.channels; ++c) {
      const int32_t a = sum != nullptr ? acc[c] - f.weight_zero[c] * sum[c / f.out_per_group] : acc[c];
      const float v = std::min(std::max(static_cast<float>(a) * f.scale[c] + f.bias[c], f.lo), f.hi);
      std::memcpy(acc + c, &v, sizeof v);
    }
  }
}

// Eight floats quantized to int32: x / s_x rounded to the nearest integer, ties to even (the default rounding of
// the conversion), NaN read as 0, clamped to [lo, hi], plus the zero point.
[[gnu::always_inline]] __attribute__((target("avx2"))) inline __m256i quantize8(__m256 x, __m256 inverse_scale,
                                                                                __m256 lo, __m256 hi, __m256i zero) {
  __m256 v = _mm256_mul_ps(x, inverse_scale);
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
  v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
  return _mm256_add_epi32(_mm256_cvtps_epi32(v), zero);
}

// Eight floats at x, of which the first `count` are read; the other lanes hold 0.
[[gnu::always_inline]] __attribute__((target("avx2"))) inline __m256 load_first(const float* x, int64_t count) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return count >= 8 ? _mm256_loadu_ps(x)
                    : _mm256_maskload_ps(x, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane));
}

// Sixteen floats quantized to sixteen bytes in order, `count` of them read (the lanes from count on read 0): two
// conversions to int32, packed to int16 within each 128-bit half, the quarters put back in order, packed to bytes.
[[gnu::always_inline]] __attribute__((target("avx2"))) inline __m128i
quantize16(const float* x, int64_t count, __m256 inverse_scale, __m256 lo, __m256 hi, __m256i zero) {
  const __m256i low = quantize8(load_first(x, count), inverse_scale, lo, hi, zero);
  const __m256i high = quantize8(load_first(x + 8, count - 8), inverse_scale, lo, hi, zero);
  const __m256i halves = _mm256_permute4x64_epi64(_mm256_packs_epi32(low, high), 0xd8);
  return _mm_packus_epi16(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
}

// The first `count` (at most 16) bytes of v stored at out.
[[gnu::always_inline]] __attribute__((target("avx2"))) inline void store_bytes(uint8_t* out, __m128i v, int64_t count) {
  if (count == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
    return;
  }
  alignas(16) uint8_t bytes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(bytes), v);
  int64_t at = 0;  // in copies of fixed sizes, which compile to moves
  if ((count & 8) != 0) {
    std::memcpy(out + at, bytes + at, 8);
    at += 8;
  }
  if ((count & 4) != 0) {
    std::memcpy(out + at, bytes + at, 4);
    at += 4;
  }
  if ((count & 2) != 0) {
    std::memcpy(out + at, bytes + at, 2);
    at += 2;
  }
  if ((count & 1) != 0) out[at] = bytes[at];
}

// A run of NHWC floats (a row of a kept input) quantized into u: x / s_x + z rounded to the nearest integer (exact
// for grid values; NaN reads as the zero point). 32 at a time with AVX2 (as finish_pixels): four conversions to
// int32, then two packs to bytes, whose lanes a permutation puts back in order; the rest sixteen at a time.
__attribute__((target("avx2"))) void quantize_nhwc_row(const float* x, int64_t count, uint8_t* out, float inverse_scale,
                                                       int32_t zero) {
  const __m256 vinv = _mm256_set1_ps(inverse_scale), vlo = _mm256_set1_ps(static_cast<float>(-zero)),
               vhi = _mm256_set1_ps(static_cast<float>(255 - zero));
  const __m256i vzero = _mm256_set1_epi32(zero), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i low =
        _mm256_packs_epi32(quantize8(_mm256_loadu_ps(x + i), vinv, vlo, vhi, vzero),  // int16, per 128-bit half
                           quantize8(_mm256_loadu_ps(x + i + 8), vinv, vlo, vhi, vzero));
    const __m256i high = _mm256_packs_epi32(quantize8(_mm256_loadu_ps(x + i + 16), vinv, vlo, vhi, vzero),
                                            quantize8(_mm256_loadu_ps(x + i + 24), vinv, vlo, vhi, vzero));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(low, high), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), bytes);
  }
  for (; i < count; i += 16) {
    const int64_t n = std::min<int64_t>(16, count - i);
    store_bytes(out + i, quantize16(x + i, n, vinv, vlo, vhi, vzero), n);
  }
}

// A 16 x 16 tile of bytes transposed in four rounds of unpacks, each interleaving pairs of rows in units twice as
// wide as the round before (1, 2, 4 then 8 bytes). Byte i of row r ends up as byte r of row reversed_bits[i].
[[gnu::always_inline]] __attribute__((target("avx2"))) inline void transpose16(__m128i (&rows)[16]) {
  __m128i t[16];
  const auto round = [&](auto low, auto high) {
    for (int i = 0; i < 8; ++i) {
      t[i] = low(rows[2 * i], rows[2 * i + 1]);
      t[i + 8] = high(rows[2 * i], rows[2 * i + 1]);
    }
    for (int i = 0; i < 16; ++i) rows[i] = t[i];
  };
  round([](__m128i a, __m128i b) { return _mm_unpacklo_epi8(a, b); },
        [](__m128i a, __m128i b) { return _mm_unpackhi_epi8(a, b); });
  round([](__m128i a, __m128i b) { return _mm_unpacklo_epi16(a, b); },
        [](__m128i a, __m128i b) { return _mm_unpackhi_epi16(a, b); });
  round([](__m128i a, __m128i b) { return _mm_unpacklo_epi32(a, b); },
        [](__m128i a, __m128i b) { return _mm_unpackhi_epi32(a, b); });
  round([](__m128i a, __m128i b) { return _mm_unpacklo_epi64(a, b); },
        [](__m128i a, __m128i b) { return _mm_unpackhi_epi64(a, b); });
}

// One input row of `channels` planes (`plane` floats apart) quantized into u, written NHWC (pixel after pixel,
// `channels` bytes each). In tiles of 16 channels by 16 pixels: each channel's pixels quantized into a row of
// bytes, the tile transposed, each pixel's channels stored at once. The planes of a network's later Convs are
// narrow (7 to 28 pixels a row): there most tiles are partial, read with masked loads.
__attribute__((target("avx2"))) void quantize_planes_row(const float* x, int64_t plane, int64_t channels, int64_t width,
                                                         uint8_t* out, float inverse_scale, int32_t zero) {
  constexpr int64_t tile = 16;
  constexpr std::array<uint8_t, tile> reversed_bits{0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  const __m256 vinv = _mm256_set1_ps(inverse_scale), vlo = _mm256_set1_ps(static_cast<float>(-zero)),
               vhi = _mm256_set1_ps(static_cast<float>(255 - zero));
  const __m256i vzero = _mm256_set1_epi32(zero);
  for (int64_t c0 = 0; c0 < channels; c0 += tile) {
    const int64_t cn = std::min(tile, channels - c0);
    for (int64_t w0 = 0; w0 < width; w0 += tile) {
      const int64_t wn = std::min(tile, width - w0);
      __m128i rows[tile];
      for (int64_t c = 0; c < tile; ++c)
        rows[c] = c < cn ? quantize16(x + (c0 + c) * plane + w0, wn, vinv, vlo, vhi, vzero) : _mm_setzero_si128();
      transpose16(rows);
      for (int64_t w = 0; w < wn; ++w) store_bytes(out + (w0 + w) * channels + c0, rows[reversed_bits[w]], cn);
    }
  }
}

// Whether each output pixel's window is its own input pixel, all channels: 1x1, stride 1, no padding, one group
// (a pointwise Conv, and the 1x1 Conv a Gemm runs as).
bool pointwise(const WindowGeometry& g, int64_t group) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
      g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0 && group == 1;
}

// The sum of `count` bytes: vpsadbw adds 32 at a time, then 8 (a group of eight channels), then one by one. At most
// 2^15 bytes (max_window): the sum fits in int32.
[[gnu::always_inline]] __attribute__((target("avx2"))) inline int32_t sum_of_bytes(const uint8_t* bytes,
                                                                                   int64_t count) {
  __m256i wide = _mm256_setzero_si256();
  int64_t c = 0;
  for (; c + 32 <= count; c += 32)
    wide = _mm256_add_epi64(
        wide, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes + c)), _mm256_setzero_si256()));
  int64_t sum = _mm256_extract_epi64(wide, 0) + _mm256_extract_epi64(wide, 1) + _mm256_extract_epi64(wide, 2) +
      _mm256_extract_epi64(wide, 3);
  for (; c + 8 <= count; c += 8)
    sum += _mm_cvtsi128_si32(
        _mm_sad_epu8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + c)), _mm_setzero_si128()));
  for (; c < count; ++c) sum += bytes[c];
  return static_cast<int32_t>(sum);
}

// A pointwise Conv's window sums S[p] = sum over channels of (u - zero), from the u just quantized, instead of a
// second convolution: that was a primitive call a band (2 to 3 µs on MobileNetV3-small's 1x1 Convs) for a few
// hundred additions a pixel.
__attribute__((target("avx2"))) void pixel_sums(const uint8_t* u, int64_t pixels, int64_t channels, int32_t zero,
                                                int32_t* sums) {
  const auto channels_zero = static_cast<int32_t>(channels) * zero;  // channels below max_window
  for (int64_t p = 0; p < pixels; ++p) sums[p] = sum_of_bytes(u + p * channels, channels) - channels_zero;
}

// A grouped Conv's window sums S[p, group] from the band's u (input rows in_first on): each input pixel's sum of
// (u - zero) over each group's channels, then those added over each output pixel's taps inside the image (a padded
// tap is the zero point: it adds 0). oneDNN ran them as a convolution of one output channel a group through a gemm,
// 15 to 160 times the time of the Conv itself (regnet_y_400mf's 3x3 Convs of 8 channels a group).
// `group_sums` holds in_rows * in_w * groups int32.
__attribute__((target("avx2"))) void grouped_window_sums(const uint8_t* u, int64_t in_first, int64_t in_rows,
                                                         int64_t first_row, int64_t rows, const WindowGeometry& g,
                                                         int64_t groups, int32_t zero, int32_t* group_sums,
                                                         int32_t* sums) {
  const int64_t per_group = g.channels / groups, in_pixels = in_rows * g.in_w;
  const auto group_zero = static_cast<int32_t>(per_group) * zero;  // per_group below max_window
  for (int64_t p = 0; p < in_pixels; ++p)
    for (int64_t k = 0; k < groups; ++k)
      group_sums[p * groups + k] = sum_of_bytes(u + p * g.channels + k * per_group, per_group) - group_zero;
  for (int64_t oh = first_row; oh < first_row + rows; ++oh) {
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      int32_t* out = sums + ((oh - first_row) * g.out_w + ow) * groups;
      std::fill(out, out + groups, 0);
      for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
        const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
        if (ih < 0 || ih >= g.in_h) continue;
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
          if (iw < 0 || iw >= g.in_w) continue;
          const int32_t* in = group_sums + ((ih - in_first) * g.in_w + iw) * groups;
          for (int64_t k = 0; k < groups; ++k) out[k] += in[k];
        }
      }
    }
  }
}

// A band of output rows, all channels: its own primitives (the padding differs at the top and the bottom).
struct Int8Band {
  int64_t first_row = 0, rows = 0;    // output rows
  int64_t in_first = 0, in_rows = 0;  // the input rows it reads
  dnnl::convolution_forward conv, sums;
  dnnl::memory::desc src, dst, sums_dst, scratchpad;
  dnnl::memory weights, ones;   // reordered once, shared by the bands where oneDNN picks one format
  dnnl::memory::desc finished;  // dst's floats after finish_pixels (NHWC)
  dnnl::memory::desc planes;    // the band's rows of the NCHW output, strided by the whole planes
  std::optional<dnnl::reorder> to_planes;
};

struct Int8Conv {
  WindowGeometry g;
  int64_t out_channels = 0, out_per_group = 0, groups = 1;
  bool has_bias = false;
  float act_min = -std::numeric_limits<float>::infinity(), act_max = std::numeric_limits<float>::infinity();
  int32_t input_zero = 0;            // z_x + 128: u's zero point
  float input_inverse_scale = 1.0f;  // 1 / s_x
  std::vector<float> scale;          // s_x * s_w[m]
  std::vector<int32_t> weight_zero;  // z_w[m]
  std::vector<float> no_bias;        // zeros, when the Conv has none
  bool needs_sums = false;           // some z_w[m] is not 0
  // Where they come from: oneDNN (a Conv of weights of ones), or added up from u for a pointwise Conv (pixel_sums)
  // and a grouped one (grouped_window_sums).
  enum class Sums { convolved, by_pixel, by_group } sums_from = Sums::convolved;
  std::vector<Int8Band> bands;
  // Input and output kept NHWC by blocked_layout.hpp: no transposition, the output's band written in place.
  bool kept_src = false, kept_dst = false;
  std::size_t worker_bytes = 0;  // per worker: u | dst | sums | scratchpad
  std::size_t dst_offset = 0, sums_offset = 0, scratchpad_offset = 0;
  std::size_t scratch_bytes = 0;  // PreparedOp::scratch_bytes

  // Per band: source, destination, sums, scratchpad, finished floats, output planes.
  static constexpr std::size_t band_slots = 6;
  std::optional<OnednnWorkers> workers;  // made once the bands are known

  void run(KernelContext& k) const {
    const float* x = k.input(0).data<float>();
    const float* bias = has_bias ? k.input(2).data<float>() : no_bias.data();
    float* y = k.output(0).data<float>();
    const int64_t in_image = g.channels * g.in_size(), out_image = out_channels * g.out_size();
    const int64_t in_row = g.channels * g.in_w, out_row = out_channels * g.out_w;
    const Finish finish{weight_zero.data(), scale.data(), bias, act_min, act_max, out_channels, groups, out_per_group};
    const auto count = static_cast<int64_t>(bands.size());
    // Each band quantizes the input rows it reads into its worker's u, then convolves them: one loop a Conv, and
    // a thread reads rows that the same band of the step before wrote, from its own cache (a band's few rows of
    // overlap with its neighbour are quantized by both).
    k.pool.parallel_for(g.batch * count, 1, [&](int64_t begin, int64_t end, std::size_t worker) {
      SerialOpenmp serial;
      OnednnWorkers::Objects& w = workers->of(worker);
      dnnl::stream& stream = w.stream;
      int32_t zero = input_zero;
      dnnl::memory& zero_memory = w.point(0, {{1}, dt::s32, tag::x}, &zero);
      std::byte* region = k.scratch + worker_bytes * worker;
      auto* u = reinterpret_cast<uint8_t*>(region);
      for (int64_t t = begin; t < end; ++t) {
        const int64_t n = t / count;
        const auto band = static_cast<std::size_t>(t - n * count);
        const Int8Band& b = bands[band];
        const auto slot = [&](std::size_t k, const dnnl::memory::desc& desc, const void* data) -> dnnl::memory& {
          return w.point(1 + band * band_slots + k, desc, data);
        };
        for (int64_t h = 0; h < b.in_rows; ++h) {
          const int64_t row = b.in_first + h;
          if (kept_src) {
            quantize_nhwc_row(x + n * in_image + row * in_row, in_row, u + h * in_row, input_inverse_scale, input_zero);
          } else {
            quantize_planes_row(x + n * in_image + row * g.in_w, g.in_size(), g.channels, g.in_w, u + h * in_row,
                                input_inverse_scale, input_zero);
          }
        }
        const dnnl::memory& src = slot(0, b.src, u);
        float* band_out = y + n * out_image + b.first_row * (kept_dst ? out_row : g.out_w);
        auto* acc = kept_dst ? reinterpret_cast<int32_t*>(band_out) : reinterpret_cast<int32_t*>(region + dst_offset);
        const dnnl::memory& scratchpad = slot(3, b.scratchpad, region + scratchpad_offset);
        // The band's input under `weights` into `dst`: the products, then (weights of ones) the window sums.
        const auto convolve = [&](const dnnl::primitive& conv, const dnnl::memory& weights, const dnnl::memory& dst) {
          execute_primitive(conv, stream,
                            {{DNNL_ARG_SRC, &src},
                             {DNNL_ARG_WEIGHTS, &weights},
                             {DNNL_ARG_DST, &dst},
                             {DNNL_ARG_SCRATCHPAD, &scratchpad},
                             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, &zero_memory}});
        };
        const int32_t* sums = nullptr;
        if (needs_sums) {
          auto* band_sums = reinterpret_cast<int32_t*>(region + sums_offset);
          if (sums_from == Sums::by_pixel) {
            pixel_sums(u, b.rows * g.out_w, g.channels, input_zero, band_sums);
          } else if (sums_from == Sums::by_group) {
            // Before the Conv, whose scratchpad holds the pixels' group sums meanwhile.
            grouped_window_sums(u, b.in_first, b.in_rows, b.first_row, b.rows, g, groups, input_zero,
                                reinterpret_cast<int32_t*>(region + scratchpad_offset), band_sums);
          } else {
            convolve(b.sums, b.ones, slot(2, b.sums_dst, band_sums));
          }
          sums = band_sums;
        }
        convolve(b.conv, b.weights, slot(1, b.dst, acc));
        stream.wait();
        const int64_t pixels = b.rows * g.out_w;
        if (kept_dst) {  // turned into floats and rounded a piece at a time, while it is in the first-level cache
          const int64_t piece = std::max<int64_t>(1, finish_piece / out_channels);
          for (int64_t p = 0; p < pixels; p += piece) {
            const int64_t count = std::min(piece, pixels - p);
            finish_pixels(acc + p * out_channels, count, sums != nullptr ? sums + p * groups : nullptr, finish);
            if (k.finish_output)
              k.finish_output(band_out + p * out_channels, static_cast<std::size_t>(count * out_channels));
          }
          continue;
        }
        finish_pixels(acc, pixels, sums, finish);
        execute_primitive(*b.to_planes, stream,
                          {{DNNL_ARG_FROM, &slot(4, b.finished, acc)}, {DNNL_ARG_TO, &slot(5, b.planes, band_out)}});
        stream.wait();
        if (k.finish_output) {
          // A band of every row (one thread, or a plane of one pixel) has its planes end to end: one run of values.
          const bool whole = pixels == g.out_size();
          for (int64_t m = 0; m < (whole ? 1 : out_channels); ++m)
            k.finish_output(band_out + m * g.out_size(),
                            static_cast<std::size_t>(whole ? out_channels * pixels : pixels));
        }
      }
    });
  }
};

// What the integer kernel needs besides the geometry: the weights [out_channels, channels / group, kernel_h,
// kernel_w] (in that order of elements) with their grid (axis 0), the input's grid, the bias (input 2) and the
// fused clamp.
struct Int8Operands {
  const Tensor& weights;
  const IntegerGrid& weight_grid;
  const IntegerGrid& input_grid;
  bool has_bias = false;
  float act_min = -std::numeric_limits<float>::infinity(), act_max = std::numeric_limits<float>::infinity();
};

// The integer kernel of this convolution, its primitives and int8 weights made here once; nullptr where it does
// not run on integers (the rule, a window too wide, weights off their grid, oneDNN without a fast kernel).
std::shared_ptr<Int8Conv> make_int8_conv(const OpContext& ctx, const WindowGeometry& g, int64_t out_channels,
                                         int64_t group, const Int8Operands& o) {
  auto impl = std::make_shared<Int8Conv>();
  Int8Conv& c = *impl;
  c.g = g;
  c.out_channels = out_channels;
  c.groups = group;
  const int64_t in_per_group = g.channels / group;
  c.out_per_group = out_channels / group;
  if (in_per_group * g.kernel_h * g.kernel_w > max_window) return nullptr;
  const Mode chosen = mode(ctx);
  if (chosen == Mode::off || (chosen == Mode::rule && !worth_integers(g, out_channels, group))) return nullptr;
  std::vector<int8_t> q;
  std::vector<float> weight_scale;
  if (!int8_weights(o.weights, o.weight_grid, out_channels, q, weight_scale, c.weight_zero)) return nullptr;
  c.has_bias = o.has_bias;
  if (!c.has_bias) c.no_bias.assign(static_cast<std::size_t>(out_channels), 0.0f);
  c.act_min = o.act_min;
  c.act_max = o.act_max;
  const float input_scale = o.input_grid.scale[0];
  c.input_zero = o.input_grid.zero_point[0] + 128;
  c.input_inverse_scale = 1.0f / input_scale;
  for (const float s : weight_scale) c.scale.push_back(static_cast<float>(static_cast<double>(input_scale) * s));
  c.needs_sums = std::any_of(c.weight_zero.begin(), c.weight_zero.end(), [](int32_t z) { return z != 0; });
  c.sums_from = pointwise(g, group) ? Int8Conv::Sums::by_pixel
      : group > 1                   ? Int8Conv::Sums::by_group
                                    : Int8Conv::Sums::convolved;
  const std::vector<int8_t> ones(static_cast<std::size_t>(g.channels * g.kernel_h * g.kernel_w), 1);
  SerialOpenmp serial;  // primitives made for one thread run on one thread
  const dnnl::engine& engine = onednn_cpu_engine();
  dnnl::stream stream(engine);
  const dnnl::memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dilation_h - 1, g.dilation_w - 1};
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  const bool grouped = group > 1;
  const dnnl::memory::dims w_dims = grouped
      ? dnnl::memory::dims{group, c.out_per_group, in_per_group, g.kernel_h, g.kernel_w}
      : dnnl::memory::dims{out_channels, g.channels, g.kernel_h, g.kernel_w};
  const dnnl::memory::dims ones_dims = grouped ? dnnl::memory::dims{group, 1, in_per_group, g.kernel_h, g.kernel_w}
                                               : dnnl::memory::dims{1, g.channels, g.kernel_h, g.kernel_w};
  const tag w_tag = grouped ? tag::goihw : tag::oihw;
  // Bands of output rows, all channels each, for the pool's threads: NHWC in and out is then one layout
  // whatever the thread count (as conv_onednn.cpp's bands).
  const std::vector<int64_t> bounds = row_bands(g, ctx.threads());
  const auto fast = [](const auto& pd) {
    return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;  // oneDNN's reference loops: slower than floats
  };
  std::size_t u_bytes = 0, dst_bytes = 0, sums_bytes = 0, scratchpad_bytes = 0;
  try {
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      Int8Band b;
      b.first_row = bounds[i];
      b.rows = bounds[i + 1] - bounds[i];
      const Band in = band_rows(g, b.first_row, bounds[i + 1]);
      b.in_first = in.first;
      b.in_rows = in.rows;
      u_bytes = std::max(u_bytes,
                         aligned(static_cast<std::size_t>(checked_mul(checked_mul(in.rows, g.in_w, "the scratch size"),
                                                                      g.channels, "the scratch size"))));
      b.src = dnnl::memory::desc({1, g.channels, in.rows, g.in_w}, dt::u8, tag::nhwc);
      b.dst = dnnl::memory::desc({1, out_channels, b.rows, g.out_w}, dt::s32, tag::nhwc);
      b.finished = dnnl::memory::desc({1, out_channels, b.rows, g.out_w}, dt::f32, tag::nhwc);
      b.planes = dnnl::memory::desc({1, out_channels, b.rows, g.out_w}, dt::f32,
                                    dnnl::memory::dims{out_channels * g.out_size(), g.out_size(), g.out_w, 1});
      const dnnl::memory::dims pad_l{in.pad_top, g.pad_left}, pad_r{in.pad_bottom, g.pad_right};
      const dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, b.src,
          dnnl::memory::desc(w_dims, dt::s8, tag::any), b.dst, strides, dilates, pad_l, pad_r);
      // Each output's window of every input channel of its group, for every output channel.
      const int64_t window_products = checked_mul(checked_mul(b.rows, g.out_w, "the products"),
                                                  in_per_group * g.kernel_h * g.kernel_w, "the products");
      const auto pd = int8_primitive(desc, attr, engine, checked_mul(window_products, out_channels, "the products"),
                                     c.out_per_group);
      if (!fast(pd)) return nullptr;
      b.scratchpad = pd.scratchpad_desc();
      b.conv = dnnl::convolution_forward(pd);
      if (i > 0 && pd.weights_desc() == c.bands[0].weights.get_desc()) {
        b.weights = c.bands[0].weights;
      } else {
        b.weights = dnnl::memory(pd.weights_desc(), engine);
        dnnl::memory user(dnnl::memory::desc(w_dims, dt::s8, w_tag), engine, q.data());
        dnnl::reorder(user, b.weights).execute(stream, user, b.weights);
      }
      b.to_planes = dnnl::reorder(dnnl::reorder::primitive_desc(engine, b.finished, engine, b.planes));
      dst_bytes = std::max(dst_bytes, aligned(b.dst.get_size()));
      scratchpad_bytes = std::max(scratchpad_bytes, aligned(b.scratchpad.get_size()));
      if (c.needs_sums) {
        // S per group: the same Conv with weights of ones and one output channel per group.
        b.sums_dst = dnnl::memory::desc({1, group, b.rows, g.out_w}, dt::s32, tag::nhwc);
        sums_bytes = std::max(sums_bytes, aligned(b.sums_dst.get_size()));
      }
      if (c.needs_sums && c.sums_from == Int8Conv::Sums::by_group) {
        // The input pixels' group sums, in the scratchpad's place.
        const int64_t group_sums =
            checked_mul(checked_mul(in.rows, g.in_w, "the scratch size"), group, "the scratch size");
        scratchpad_bytes = std::max(scratchpad_bytes, aligned(static_cast<std::size_t>(group_sums) * sizeof(int32_t)));
      }
      if (c.needs_sums && c.sums_from == Int8Conv::Sums::convolved) {
        const dnnl::convolution_forward::desc sums_desc(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, b.src,
            dnnl::memory::desc(ones_dims, dt::s8, tag::any), b.sums_dst, strides, dilates, pad_l, pad_r);
        const auto sums_pd =
            int8_primitive(sums_desc, attr, engine, checked_mul(window_products, group, "the products"), 1);
        if (!fast(sums_pd)) return nullptr;
        b.sums = dnnl::convolution_forward(sums_pd);
        if (i > 0 && sums_pd.weights_desc() == c.bands[0].ones.get_desc()) {
          b.ones = c.bands[0].ones;
        } else {
          b.ones = dnnl::memory(sums_pd.weights_desc(), engine);
          dnnl::memory user(dnnl::memory::desc(ones_dims, dt::s8, w_tag), engine, const_cast<int8_t*>(ones.data()));
          dnnl::reorder(user, b.ones).execute(stream, user, b.ones);
        }
        scratchpad_bytes = std::max(scratchpad_bytes, aligned(sums_pd.scratchpad_desc().get_size()));
      }
      c.bands.push_back(std::move(b));
    }
    stream.wait();
  } catch (const dnnl::error&) {
    return nullptr;  // a Conv oneDNN does not take on integers stays on the float kernels
  }
  const auto add = [](std::size_t a, std::size_t b) {  // a worker's region: u | dst | sums | scratchpad
    return static_cast<std::size_t>(checked_add(static_cast<int64_t>(a), static_cast<int64_t>(b), "the scratch size"));
  };
  c.dst_offset = u_bytes;
  c.sums_offset = add(c.dst_offset, dst_bytes);
  c.scratchpad_offset = add(c.sums_offset, sums_bytes);
  c.worker_bytes = aligned(add(c.scratchpad_offset, scratchpad_bytes));
  c.workers.emplace(ctx.threads(), 1 + c.bands.size() * Int8Conv::band_slots);
  c.scratch_bytes = static_cast<std::size_t>(
      checked_mul(static_cast<int64_t>(c.worker_bytes), static_cast<int64_t>(ctx.threads()), "the scratch size"));
  return impl;
}

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
  Int8Operands operands{*weights, *weight_grid, *input_grid, ctx.has_input(2)};
  if (r.epilogue.is_clamp()) {
    operands.act_min = r.epilogue.steps[0].a;
    operands.act_max = r.epilogue.steps[0].b;
  }
  const std::shared_ptr<Int8Conv> impl = make_int8_conv(ctx, g, r.out_channels, r.group, operands);
  if (impl == nullptr) return false;
  op.scratch_bytes = impl->scratch_bytes;
  // Bands make plain NHWC on both sides, which blocked_layout.hpp may keep between Convs.
  auto ports = std::make_shared<BlockedPorts>();
  ports->input_layout = ports->output_layout = nhwc_layout;
  ports->input = 0;
  ports->keep_input = [impl](std::size_t) { impl->kept_src = true; };
  ports->output_bytes = static_cast<std::size_t>(
      checked_mul(checked_mul(checked_mul(r.out_channels, g.out_size(), "the output size"), g.batch, "the output size"),
                  static_cast<int64_t>(sizeof(float)), "the output size"));
  ports->keep_output = [impl] { impl->kept_dst = true; };
  op.blocked = std::move(ports);
  op.kernel = [impl](KernelContext& k) { impl->run(k); };
  op.finishes_output = true;
  return true;
}

bool prepare_int8_gemm(const OpContext& ctx, const Int8GemmRequest& r, PreparedOp& op) {
  const Tensor* b = ctx.constant(1);
  const IntegerGrid* input_grid = ctx.input_grid(0);
  const IntegerGrid* b_grid = ctx.input_grid(1);
  if (b == nullptr || b_grid == nullptr || b->dtype() != DataType::float32 || !int8_activation(input_grid) ||
      !int8_conv_available() || r.rows <= 0 || r.inner <= 0 || r.columns <= 0)
    return false;
  // B as the weights of a 1x1 Conv, [columns, inner]: transposed when it is [inner, columns], its per-column grid
  // (axis 1) then along axis 0.
  Tensor transposed;
  IntegerGrid grid = *b_grid;
  if (!r.b_transposed) {
    if (grid.scale.size() != 1 && grid.axis != 1) return false;
    transposed = Tensor(DataType::float32, {r.columns, r.inner});
    const float* from = b->data<float>();
    float* to = transposed.data<float>();
    for (int64_t k = 0; k < r.inner; ++k)
      for (int64_t n = 0; n < r.columns; ++n) to[n * r.inner + k] = from[k * r.columns + n];
    grid.axis = 0;
  }
  WindowGeometry g;  // A's rows as the rows of an image one pixel wide, its columns as channels: NHWC
  g.batch = 1;
  g.channels = r.inner;
  g.in_h = g.out_h = r.rows;
  const Int8Operands operands{r.b_transposed ? *b : transposed, grid, *input_grid, r.has_bias};
  const std::shared_ptr<Int8Conv> impl = make_int8_conv(ctx, g, r.columns, 1, operands);
  if (impl == nullptr) return false;
  impl->kept_src = impl->kept_dst = true;
  op.scratch_bytes = impl->scratch_bytes;
  op.kernel = [impl](KernelContext& k) { impl->run(k); };
  op.finishes_output = true;
  return true;
}

#endif

}  // namespace rknnxx::host
