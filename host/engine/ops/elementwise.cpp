// Elementwise operators: the arithmetic binaries with numpy-style broadcasting (float32, float16,
// bfloat16 and the integer types ONNX allows), PRelu, and the float32 activations.

#include "elementwise.hpp"

#include "../blocked_layout.hpp"
#include "../four_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

namespace rknnxx::host {
namespace {

enum class Arithmetic { add, sub, mul, div };

// Signed overflow wraps (as the integer kernels of ONNX Runtime do) instead of being undefined;
// integer division by zero gives 0 instead of trapping.
template <Arithmetic kind, class T> T arithmetic(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if constexpr (kind == Arithmetic::add) return a + b;
    if constexpr (kind == Arithmetic::sub) return a - b;
    if constexpr (kind == Arithmetic::mul) return a * b;
    if constexpr (kind == Arithmetic::div) return a / b;
  } else {
    using U = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;
    if constexpr (kind == Arithmetic::add) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (kind == Arithmetic::sub) return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
    if constexpr (kind == Arithmetic::mul) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    if constexpr (kind == Arithmetic::div) {
      if (b == 0) return T{0};
      if constexpr (std::is_signed_v<T>) {
        if (b == T{-1}) return static_cast<T>(U{0} - static_cast<U>(a));
      }
      return static_cast<T>(a / b);
    }
  }
}

// Runs write(p, p_end) over pixels [begin, end) of images of `channels` x `plane` values and rounds what it wrote
// as stored (KernelContext::finish_output). In NHWC piece by piece, about finish_piece values each, while in cache;
// in NCHW each channel's row of the pixels after all of them: a piece's row would be a few values (4096 / 512
// channels is 8), and a rounding call for each cost more than the pass (resnet18's mixed-layout Adds: 0.6 -> 1.0 ms).
template <class W> void write_pixels_and_finish(float* out, bool nhwc, int64_t channels, int64_t plane, int64_t begin,
                                                int64_t end, const OutputFinish& finish, W write) {
  if (!finish) {
    write(begin, end);
    return;
  }
  if (!nhwc) {
    write(begin, end);
    for (int64_t p = begin; p < end;) {  // the rows within each image
      const int64_t n = p / plane, i = p - n * plane, count = std::min(end - p, plane - i);
      for (int64_t c = 0; c < channels; ++c)
        finish(out + (n * channels + c) * plane + i, static_cast<std::size_t>(count));
      p += count;
    }
    return;
  }
  const int64_t piece = std::max<int64_t>(1, finish_piece / std::max<int64_t>(1, channels));
  for (int64_t p = begin; p < end; p += piece) {
    const int64_t p_end = std::min(end, p + piece);
    write(p, p_end);
    finish(out + p * channels, static_cast<std::size_t>((p_end - p) * channels));
  }
}

// A float32 Mul of an image [N, C, H, W] by one value per channel ([N, C, 1, 1], [1, C, 1, 1] or [C, 1, 1], either
// input): the scale of a squeeze-excitation block, between the depthwise and the projecting Conv (efficientnet,
// mobilenet_v3). The image may be read in NHWC (blocked_layout.hpp), and the output is then written in NHWC too
// when its readers take it, else in NCHW.
struct ChannelScale {
  std::size_t image = 0;  // the input that is the image
  int64_t channels = 0, plane = 0;
  bool per_image = false;  // the scale has one value per image and channel, else per channel
  bool kept_input = false, kept_output = false;

  // The image's pixels [begin, end) over all images, from NHWC.
  void pixels(const float* a, const float* b, float* out, int64_t begin, int64_t end) const {
    const float* x = image == 0 ? a : b;
    const float* scale = image == 0 ? b : a;
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / plane, i = p % plane;
      const float* px = x + p * channels;
      const float* s = scale + (per_image ? n * channels : 0);
      if (kept_output) {  // four lanes at a time: g++ -O2 leaves a loop of unknown length scalar
        float* po = out + p * channels;
        int64_t c = 0;
        if (image == 0) {
          for (; c + 4 <= channels; c += 4) store4(po + c, load4(px + c) * load4(s + c));
          for (; c < channels; ++c) po[c] = px[c] * s[c];
        } else {
          for (; c + 4 <= channels; c += 4) store4(po + c, load4(s + c) * load4(px + c));
          for (; c < channels; ++c) po[c] = s[c] * px[c];
        }
      } else {
        float* po = out + n * channels * plane + i;
        for (int64_t c = 0; c < channels; ++c) po[c * plane] = image == 0 ? px[c] * s[c] : s[c] * px[c];
      }
    }
  }
};

std::shared_ptr<ChannelScale> channel_scale(const OpContext& ctx) {
  if (ctx.input(0).dtype != DataType::float32) return nullptr;
  for (std::size_t image = 0; image < 2; ++image) {
    const auto& x = ctx.input(image).shape;
    const auto& s = ctx.input(1 - image).shape;
    if (x.size() != 4) continue;
    const bool per_channel = (s.size() == 3 || (s.size() == 4 && s[0] == 1)) && s[s.size() - 3] == x[1] &&
        s[s.size() - 2] == 1 && s[s.size() - 1] == 1;
    const bool per_image = s.size() == 4 && s[0] == x[0] && s[1] == x[1] && s[2] == 1 && s[3] == 1;
    if (!per_channel && !per_image) continue;
    auto scale = std::make_shared<ChannelScale>();
    scale->image = image;
    scale->channels = x[1];
    scale->plane = x[2] * x[3];
    scale->per_image = per_image && !per_channel;
    return scale;
  }
  return nullptr;
}

// A float32 binary of two images of one shape [N, C, H, W] (a residual Add that is not fused into its Conv, as
// in a quantized graph): element by element, so it works in any layout its operands share. Each of them may be
// kept NHWC (blocked_layout.hpp); the output is kept when both inputs are and its readers take it.
struct SameShapeImages {
  int64_t channels = 0, plane = 0;
  bool kept_input[2] = {false, false};
  bool kept_output = false;

  // Operands in different layouts: pixels [begin, end) over all images, each tensor at its own offsets (a
  // channel 1 apart in NHWC, a plane apart in NCHW). In tiles of 64 pixels of one image by 16 channels, walked
  // channel by channel, so that the NCHW side runs along its rows (the planes are often a multiple of 4 KiB apart:
  // 16 channels' rows at one offset would share one set of the cache) and the NHWC side's lines (a pixel's 16
  // channels) stay in the cache across the tile's channels.
  template <class F> void mixed(const float* a, const float* b, float* out, int64_t begin, int64_t end, F f) const {
    // The layouts as template arguments: the NCHW side's loop then has unit strides the compiler vectorizes.
    const auto run = [&]<bool ka, bool kb, bool ko>() { mixed_tiles<ka, kb, ko>(a, b, out, begin, end, f); };
    const int layouts = (kept_input[0] ? 4 : 0) | (kept_input[1] ? 2 : 0) | (kept_output ? 1 : 0);
    switch (layouts) {
      case 1: return run.template operator()<false, false, true>();
      case 2: return run.template operator()<false, true, false>();
      case 3: return run.template operator()<false, true, true>();
      case 4: return run.template operator()<true, false, false>();
      case 5: return run.template operator()<true, false, true>();
      case 6: return run.template operator()<true, true, false>();
      default: return;  // 0 and 7 are one layout: broadcast_binary runs them
    }
  }

  template <bool ka, bool kb, bool ko, class F>
  void mixed_tiles(const float* a, const float* b, float* out, int64_t begin, int64_t end, F f) const {
    constexpr int64_t pixel_tile = 64, channel_tile = 16;
    const auto at = [this](bool kept, int64_t n, int64_t i, int64_t c) {
      return kept ? (n * plane + i) * channels + c : (n * channels + c) * plane + i;
    };
    const int64_t sa = ka ? channels : 1, sb = kb ? channels : 1, so = ko ? channels : 1;
    for (int64_t p0 = begin; p0 < end;) {
      const int64_t n = p0 / plane, i0 = p0 - n * plane;
      const int64_t count = std::min({pixel_tile, end - p0, plane - i0});
      for (int64_t c0 = 0; c0 < channels; c0 += channel_tile) {
        for (int64_t c = c0; c < std::min(channels, c0 + channel_tile); ++c) {
          const float* pa = a + at(ka, n, i0, c);
          const float* pb = b + at(kb, n, i0, c);
          float* po = out + at(ko, n, i0, c);
          for (int64_t i = 0; i < count; ++i) po[i * so] = f(pa[i * sa], pb[i * sb]);  // a stride 1 folds away
        }
      }
      p0 += count;
    }
  }
};

std::shared_ptr<SameShapeImages> same_shape_images(const OpContext& ctx) {
  const auto& a = ctx.input(0).shape;
  if (ctx.input(0).dtype != DataType::float32 || a.size() != 4 || ctx.input(1).shape != a) return nullptr;
  auto images = std::make_shared<SameShapeImages>();
  images->channels = a[1];
  images->plane = a[2] * a[3];
  return images;
}

// The piece-wise form of a float32 binary whose operands have the output's size or one element
// (PreparedOp::tile), or an empty one.
template <Arithmetic kind> ElementwiseTile arithmetic_tile(const OpContext& ctx, int64_t elements) {
  const int64_t a = ctx.input(0).elements(), b = ctx.input(1).elements();
  if (ctx.input(0).dtype != DataType::float32 || (a != elements && a != 1) || (b != elements && b != 1)) return {};
  const bool a_one = a == 1 && elements != 1, b_one = b == 1 && elements != 1;
  return [a_one, b_one](std::span<const float* const> in, float* out, int64_t count) {
    binary_run(in[0], in[1], out, count, a_one ? 0 : 1, b_one ? 0 : 1,
               [](float x, float y) { return arithmetic<kind, float>(x, y); });
  };
}

template <Arithmetic kind> PreparedOp prepare_arithmetic(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0,
                   {DataType::float32, DataType::float16, DataType::bfloat16, DataType::int8, DataType::uint8,
                    DataType::int16, DataType::int32, DataType::int64});
  const DataType dtype = same_dtype(ctx, 0, 1);
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, bc.shape()}};
  if (kind == Arithmetic::mul) {
    if (std::shared_ptr<ChannelScale> scale = channel_scale(ctx)) {
      op.blocked = nhwc_following_ports(
          op.outputs[0].bytes(), scale->image, [scale](std::size_t) { scale->kept_input = true; },
          [scale] { scale->kept_output = true; });
      op.kernel = [bc, scale](KernelContext& k) {
        const float* a = k.input(0).data<float>();
        const float* b = k.input(1).data<float>();
        float* out = k.output(0).data<float>();
        if (!scale->kept_input) {
          broadcast_binary(
              bc, k.pool, a, b, out, [](float x, float y) { return x * y; }, &k.finish_output);
          return;
        }
        const int64_t pixels = k.output(0).elements() / std::max<int64_t>(1, scale->channels);
        k.pool.parallel_for(pixels, std::max<int64_t>(1, elementwise_grain / std::max<int64_t>(1, scale->channels)),
                            [&](int64_t begin, int64_t end) {
                              write_pixels_and_finish(
                                  out, scale->kept_output, scale->channels, scale->plane, begin, end, k.finish_output,
                                  [&](int64_t p, int64_t p_end) { scale->pixels(a, b, out, p, p_end); });
                            });
      };
      op.finishes_output = true;
      return op;
    }
  }
  if (std::shared_ptr<SameShapeImages> images = same_shape_images(ctx)) {
    op.blocked = nhwc_following_ports(
        op.outputs[0].bytes(), every_input, [images](std::size_t i) { images->kept_input[i] = true; },
        [images] { images->kept_output = true; });
    op.kernel = [bc, images](KernelContext& k) {
      const float* a = k.input(0).data<float>();
      const float* b = k.input(1).data<float>();
      float* out = k.output(0).data<float>();
      const auto f = [](float x, float y) { return arithmetic<kind, float>(x, y); };
      const bool kept = images->kept_output;
      if (images->kept_input[0] == kept && images->kept_input[1] == kept) {  // one layout: element by element
        broadcast_binary(bc, k.pool, a, b, out, f, &k.finish_output);
        return;
      }
      const int64_t pixels = k.output(0).elements() / std::max<int64_t>(1, images->channels);
      k.pool.parallel_for(pixels, std::max<int64_t>(1, elementwise_grain / std::max<int64_t>(1, images->channels)),
                          [&](int64_t begin, int64_t end) {
                            write_pixels_and_finish(
                                out, kept, images->channels, images->plane, begin, end, k.finish_output,
                                [&](int64_t p, int64_t p_end) { images->mixed(a, b, out, p, p_end, f); });
                          });
    };
    op.finishes_output = true;
    op.tile = arithmetic_tile<kind>(ctx, op.outputs[0].elements());  // chains take values NCHW only
    return op;
  }
  op.finishes_output = dtype == DataType::float32;
  op.tile = arithmetic_tile<kind>(ctx, op.outputs[0].elements());
  op.kernel = [bc, dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (is_float_bits_v<T>) {
        // Computed in float32 and rounded once (docs/conformance.md "bfloat16"), as ONNX Runtime does.
        broadcast_binary(bc, k.pool, k.input(0).data<T>(), k.input(1).data<T>(), k.output(0).data<T>(),
                         [](T a, T b) { return narrow<T>(arithmetic<kind, float>(widen(a), widen(b))); });
      } else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        // A float32 output rounded as stored in the same runs (finishes_output).
        broadcast_binary(
            bc, k.pool, k.input(0).data<T>(), k.input(1).data<T>(), k.output(0).data<T>(),
            [](T a, T b) { return arithmetic<kind, T>(a, b); }, &k.finish_output);
      }
    });
  };
  return op;
}

template <class T> T integer_power(T base, T exponent) {
  if (exponent < 0) {
    return base == 1 ? T{1} : (base == -1 ? (exponent % 2 == 0 ? T{1} : T{-1}) : T{0});
  }
  using U = std::make_unsigned_t<T>;
  U result = 1;
  U b = static_cast<U>(base);
  for (T e = exponent; e > 0; e /= 2) {
    if (e % 2 != 0) {
      result *= b;
    }
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T> constexpr bool is_pow_type =
    std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>;
template <class E> constexpr bool is_pow_exponent =
    is_pow_type<E> || std::is_same_v<E, uint32_t> || std::is_same_v<E, uint64_t>;

// Base and exponent types are independent (opset 12+); the result has the base's type.
template <class T, class E> T power(T x, E y) {
  if constexpr (std::is_same_v<T, float>) {
    const auto e = static_cast<float>(y);
    if (e == 2.0f) return x * x;
    if (e == 0.5f) return std::sqrt(x);
    return std::pow(x, e);
  } else if constexpr (std::is_same_v<T, E>) {
    return integer_power<T>(x, y);
  } else {
    const double r = std::pow(static_cast<double>(x), static_cast<double>(y));
    return std::isfinite(r) && std::fabs(r) < 9.2e18 ? static_cast<T>(r) : T{0};
  }
}

PreparedOp prepare_pow(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32, DataType::int32, DataType::int64});
  ctx.expect_dtype(1, {DataType::float32, DataType::int32, DataType::int64, DataType::uint32, DataType::uint64});
  const DataType base = ctx.input(0).dtype;
  const DataType exponent = ctx.input(1).dtype;
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{base, bc.shape()}};
  op.kernel = [bc, base, exponent](KernelContext& k) {
    visit_dtype(base, [&]<class T>() {
      visit_dtype(exponent, [&]<class E>() {
        if constexpr (is_pow_type<T> && is_pow_exponent<E>) {
          broadcast_binary(bc, k.pool, k.input(0).data<T>(), k.input(1).data<E>(), k.output(0).data<T>(),
                           [](T x, E y) { return power<T, E>(x, y); });
        }
      });
    });
  };
  return op;
}

PreparedOp prepare_prelu(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  if (bc.shape() != ctx.input(0).shape) {
    ctx.fail("slope '{}' of shape {} does not broadcast to the input shape {}", ctx.input_name(1),
             shape_string(ctx.input(1).shape), shape_string(ctx.input(0).shape));
  }
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [bc](KernelContext& k) {
    broadcast_binary(bc, k.pool, k.input(0).data<float>(), k.input(1).data<float>(), k.output(0).data<float>(),
                     [](float x, float slope) { return x < 0.0f ? x * slope : x; });
  };
  return op;
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float tanh_(float x) { return std::tanh(x); }
float erf_(float x) { return std::erf(x); }
float sqrt_(float x) { return std::sqrt(x); }
float exp_(float x) { return std::exp(x); }
float log_(float x) { return std::log(x); }
float reciprocal(float x) { return 1.0f / x; }
float floor_(float x) { return std::floor(x); }
float ceil_(float x) { return std::ceil(x); }
float hard_swish(float x) { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); }

PreparedOp prepare_leaky_relu(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    return [alpha = c.attr_float("alpha", 0.01f)](float x) { return x < 0.0f ? alpha * x : x; };
  });
}

PreparedOp prepare_hard_sigmoid(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    return [alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f)](float x) {
      return std::clamp(alpha * x + beta, 0.0f, 1.0f);
    };
  });
}

PreparedOp prepare_elu(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    return [alpha = c.attr_float("alpha", 1.0f)](float x) { return x < 0.0f ? alpha * (std::exp(x) - 1.0f) : x; };
  });
}

// Relu and Clip also take integer tensors (opsets 14 and 12).
template <class T> void clamp_piece(const T* in, T* out, int64_t count, T lo, T hi) {
  for (int64_t i = 0; i < count; ++i) out[i] = std::min(std::max(in[i], lo), hi);
}

template <class T> struct ClipBounds {
  T lo, hi;
};

// A float32 output is rounded as stored in the same pieces (PreparedOp::finishes_output: quantized runs).
template <class T> void clamp_kernel(KernelContext& k, T lo, T hi) {
  const T* in = k.input(0).data<T>();
  T* out = k.output(0).data<T>();
  k.pool.parallel_for(k.input(0).elements(), elementwise_grain, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float>) {
      write_and_finish(out, begin, end, k.finish_output,
                       [&](int64_t b, int64_t e) { clamp_piece(in + b, out + b, e - b, lo, hi); });
    } else {
      clamp_piece(in + begin, out + begin, end - begin, lo, hi);
    }
  });
}

// A one-input op on float32 or a signed integer type whose output is shaped and typed as its
// input (Relu, Neg, Abs): the checks and the output, the kernel left to the caller.
PreparedOp prepare_signed_unary(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32, DataType::int8, DataType::int16, DataType::int32, DataType::int64});
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  return op;
}

// A clamp of a float32 image maps each element where it lies, so it reads and writes NHWC as well, tied to its
// input (blocked_layout.hpp): a quantized residual block's Relu after its Add (resnet's), which the quantized graph
// does not fuse, then keeps the block's values NHWC from one Conv to the next.
void offer_nhwc_clamp(OpContext& ctx, PreparedOp& op) {
  if (ctx.input(0).dtype == DataType::float32 && ctx.input(0).shape.size() == 4)
    op.blocked = nhwc_tied_ports(op.outputs[0].bytes(), [] {});
}

PreparedOp prepare_relu(OpContext& ctx) {
  PreparedOp op = prepare_signed_unary(ctx);
  offer_nhwc_clamp(ctx, op);
  op.finishes_output = ctx.input(0).dtype == DataType::float32;  // clamp_kernel
  if (op.finishes_output) {
    op.tile = [](std::span<const float* const> in, float* out, int64_t count) {
      clamp_piece(in[0], out, count, 0.0f, std::numeric_limits<float>::max());
    };
  }
  op.kernel = [dtype = ctx.input(0).dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        clamp_kernel<T>(k, T{0}, std::numeric_limits<T>::max());
      }
    });
  };
  return op;
}

// Neg and Abs: float32 and the signed integers (wrapping at the most negative value).
template <bool absolute> PreparedOp prepare_signed(OpContext& ctx) {
  PreparedOp op = prepare_signed_unary(ctx);
  op.kernel = [dtype = ctx.input(0).dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_signed_v<T> || std::is_floating_point_v<T>) {
        const T* in = k.input(0).data<T>();
        T* out = k.output(0).data<T>();
        k.pool.parallel_for(k.input(0).elements(), elementwise_grain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const T v = in[i];
            if constexpr (std::is_floating_point_v<T>) {
              out[i] = absolute ? std::fabs(v) : -v;
            } else {
              using U = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;
              const T negated = static_cast<T>(U{0} - static_cast<U>(v));
              out[i] = absolute && v >= 0 ? v : negated;
            }
          }
        });
      }
    });
  };
  return op;
}

PreparedOp prepare_clip(OpContext& ctx) {
  ctx.expect_inputs(1, ctx.opset() < 11 ? 1 : 3);
  ctx.expect_dtype(
      0, {DataType::float32, DataType::int8, DataType::uint8, DataType::int16, DataType::int32, DataType::int64});
  const DataType dtype = ctx.input(0).dtype;
  for (std::size_t i = 1; i < 3; ++i) {
    if (ctx.has_input(i)) {
      ctx.expect_dtype(i, {dtype});
      if (ctx.input(i).elements() != 1) {
        ctx.fail("input '{}' (the {} bound) must be a scalar, given shape {}", ctx.input_name(i),
                 i == 1 ? "lower" : "upper", shape_string(ctx.input(i).shape));
      }
    }
  }
  if (ctx.opset() < 11 && dtype != DataType::float32) {
    ctx.fail("integer inputs need opset 12 or later");
  }
  const float attr_min = ctx.attr_float("min", std::numeric_limits<float>::lowest());
  const float attr_max = ctx.attr_float("max", std::numeric_limits<float>::max());
  const bool bounds_from_inputs = ctx.opset() >= 11;
  // The bounds: the attributes before opset 11, else the inputs given (`lo_in`, `hi_in`; nullptr when omitted).
  const auto bounds = [attr_min, attr_max, bounds_from_inputs]<class T>(const T* lo_in, const T* hi_in) {
    T lo = bounds_from_inputs ? std::numeric_limits<T>::lowest() : static_cast<T>(attr_min);
    T hi = bounds_from_inputs ? std::numeric_limits<T>::max() : static_cast<T>(attr_max);
    return ClipBounds<T>{lo_in != nullptr ? *lo_in : lo, hi_in != nullptr ? *hi_in : hi};
  };
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  offer_nhwc_clamp(ctx, op);
  op.finishes_output = dtype == DataType::float32;  // clamp_kernel
  if (op.finishes_output) {
    op.tile = [bounds](std::span<const float* const> in, float* out, int64_t count) {
      const auto [lo, hi] = bounds(in.size() > 1 ? in[1] : nullptr, in.size() > 2 ? in[2] : nullptr);
      clamp_piece(in[0], out, count, lo, hi);
    };
  }
  op.kernel = [dtype, bounds](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        const Tensor* lo = k.optional_input(1);
        const Tensor* hi = k.optional_input(2);
        const auto [low, high] =
            bounds(lo != nullptr ? lo->data<T>() : nullptr, hi != nullptr ? hi->data<T>() : nullptr);
        clamp_kernel<T>(k, low, high);
      }
    });
  };
  return op;
}

const OpRegistrar add_op{"Add", prepare_arithmetic<Arithmetic::add>};
const OpRegistrar sub_op{"Sub", prepare_arithmetic<Arithmetic::sub>};
const OpRegistrar mul_op{"Mul", prepare_arithmetic<Arithmetic::mul>};
const OpRegistrar div_op{"Div", prepare_arithmetic<Arithmetic::div>};
const OpRegistrar pow_op{"Pow", prepare_pow};
const OpRegistrar prelu_op{"PRelu", prepare_prelu};
const OpRegistrar relu_op{"Relu", prepare_relu};
const OpRegistrar clip_op{"Clip", prepare_clip};
const OpRegistrar leaky_relu_op{"LeakyRelu", prepare_leaky_relu};
const OpRegistrar hard_sigmoid_op{"HardSigmoid", prepare_hard_sigmoid};
const OpRegistrar hard_swish_op{"HardSwish", prepare_simple<hard_swish>};
const OpRegistrar elu_op{"Elu", prepare_elu};
const OpRegistrar sigmoid_op{"Sigmoid", prepare_simple<sigmoid>};
const OpRegistrar tanh_op{"Tanh", prepare_simple<tanh_>};
const OpRegistrar erf_op{"Erf", prepare_simple<erf_>};
const OpRegistrar sqrt_op{"Sqrt", prepare_simple<sqrt_>};
const OpRegistrar exp_op{"Exp", prepare_simple<exp_>};
const OpRegistrar log_op{"Log", prepare_simple<log_>};
const OpRegistrar neg_op{"Neg", prepare_signed<false>};
const OpRegistrar abs_op{"Abs", prepare_signed<true>};
const OpRegistrar reciprocal_op{"Reciprocal", prepare_simple<reciprocal>};
const OpRegistrar floor_op{"Floor", prepare_simple<floor_>};
const OpRegistrar ceil_op{"Ceil", prepare_simple<ceil_>};

}  // namespace
}  // namespace rknnxx::host
