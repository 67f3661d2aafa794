#pragma once
// TensorInfo: a tensor attribute as a C++ value (what RKNN_QUERY_*_ATTR reports), and
// Quantization, the affine parameters of int8/uint8/int16 tensors (docs/c-interface.md#quantization).
//
//   TensorInfo in = ctx.input_info(0);            // never a raw struct to fill
//   in.dims(), in.type(), in.format(), in.layout(), in.quantization(), in.alloc_size()
//   in.abi()                                      // the rknn_tensor_attr, for interop

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace rknnxx {

// Input or output: the enum core/error.hpp's TensorId uses.
using TensorIo = decltype(TensorId::io);

namespace detail {

// The one rounding of values to integers in rknnxx (quantization, float to integer conversion):
// to nearest, ties to even, as ONNX QuantizeLinear specifies, numpy.round (the vendor's toolkit)
// does and the NPU's ARM CPU does in its default FP mode. std::round (ties away from zero) with
// ties moved to the even neighbour, rather than std::nearbyint, so that the result does not
// depend on the caller's current FP rounding mode. The math here and in this header is the
// compilers' builtins (g++ and clang), not <cmath>: its special functions alone cost a translation
// unit a tenth of the umbrella's compile time (docs/separate-compilation.md#compile-cost).
[[nodiscard]] inline double round_half_even(double x) noexcept {
  const double r = __builtin_round(x);
  // A tie went away from zero; if that made it odd, the even neighbour is one step back (|r| < 2^53 here).
  if (__builtin_fabs(x - r) == 0.5 && (static_cast<std::int64_t>(r) & 1) != 0) return r - __builtin_copysign(1.0, x);
  return r;
}

}  // namespace detail

// Affine asymmetric quantization: x = (q - zero_point) * scale; q = clamp(round(x / scale) + zero_point).
// `affine == false` means the tensor holds plain values (float tensors, or integers taken as they are).
// Dynamic fixed point (RKNN_TENSOR_QNT_DFP, x = q * 2^-fl) is its case scale = 2^-fl, zero_point = 0
// (docs/c-interface.md#quantization): every rule here serves both.
struct Quantization {
  bool affine = false;
  float scale = 1.0f;
  std::int32_t zero_point = 0;

  [[nodiscard]] static constexpr Quantization none() noexcept { return {}; }
  [[nodiscard]] static constexpr Quantization affine_asymmetric(float scale, std::int32_t zero_point) noexcept {
    return {true, scale, zero_point};
  }
  // x = q * 2^-fraction_length; exact for the int8 fl of rknn_tensor_attr.
  [[nodiscard]] static Quantization dynamic_fixed_point(int fraction_length) noexcept {
    return {true, __builtin_ldexpf(1.0f, -fraction_length), 0};
  }
  // fl when this is dynamic fixed point (zero point 0, scale exactly 2^-fl); nullopt otherwise.
  [[nodiscard]] std::optional<int> fraction_length() const noexcept {
    if (!affine || zero_point != 0 || !__builtin_isfinite(scale) || !(scale > 0.0f)) return std::nullopt;
    int exponent = 0;
    if (__builtin_frexpf(scale, &exponent) != 0.5f)
      return std::nullopt;  // scale = 0.5 * 2^exponent = 2^-(1 - exponent)
    return 1 - exponent;
  }
  [[nodiscard]] constexpr float dequantize(double q) const noexcept {
    return affine ? static_cast<float>((q - zero_point) * scale) : static_cast<float>(q);
  }
  // round(x / scale) + zero_point, ties to even (detail::round_half_even), not yet clamped.
  [[nodiscard]] double quantize(double x) const noexcept {
    return affine ? detail::round_half_even(x / static_cast<double>(scale)) + zero_point : x;
  }
  friend constexpr bool operator==(const Quantization&, const Quantization&) noexcept = default;
};

class TensorInfo {
public:
  TensorInfo() = default;
  TensorInfo(const rknn_tensor_attr& attr, TensorIo io) : attr_(attr), io_(io) {}

  [[nodiscard]] TensorIo io() const noexcept { return io_; }
  [[nodiscard]] std::uint32_t index() const noexcept { return attr_.index; }
  [[nodiscard]] std::string_view name() const noexcept {
    return {attr_.name, ::strnlen(attr_.name, RKNN_MAX_NAME_LEN)};
  }
  [[nodiscard]] Dims dims() const { return Dims::from_abi(attr_.n_dims, attr_.dims); }
  [[nodiscard]] TensorType type() const noexcept { return static_cast<TensorType>(attr_.type); }
  [[nodiscard]] TensorFormat format() const noexcept { return static_cast<TensorFormat>(attr_.fmt); }
  [[nodiscard]] std::uint32_t n_elems() const noexcept { return attr_.n_elems; }
  [[nodiscard]] std::uint32_t size() const noexcept { return attr_.size; }
  [[nodiscard]] std::uint32_t w_stride() const noexcept { return attr_.w_stride; }
  [[nodiscard]] std::uint32_t h_stride() const noexcept { return attr_.h_stride; }
  [[nodiscard]] std::uint32_t size_with_stride() const noexcept { return attr_.size_with_stride; }
  [[nodiscard]] bool pass_through() const noexcept { return attr_.pass_through != 0; }
  // Bytes to allocate for zero-copy memory: size_with_stride, or size where the runtime reports 0
  // (fp16 and undefined-layout tensors on some runtimes, docs/c-interface.md#strides-and-sizes).
  [[nodiscard]] std::uint32_t alloc_size() const noexcept { return std::max(attr_.size_with_stride, attr_.size); }
  // NONE, AFFINE_ASYMMETRIC or DFP (w16a16i_dfp's int16 tensors), as the runtime reports it.
  [[nodiscard]] rknn_tensor_qnt_type qnt_type() const noexcept {
    return static_cast<rknn_tensor_qnt_type>(attr_.qnt_type);
  }
  [[nodiscard]] Quantization quantization() const noexcept {
    if (attr_.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC)
      return Quantization::affine_asymmetric(attr_.scale, attr_.zp);
    if (attr_.qnt_type == RKNN_TENSOR_QNT_DFP) return Quantization::dynamic_fixed_point(attr_.fl);
    return Quantization::none();
  }
  // The layout with its strides; for 4-D NHWC/NCHW/NC1HWC2 tensors a mapping over (n, c, h, w).
  [[nodiscard]] RuntimeLayout layout() const { return RuntimeLayout::from_attr(attr_); }

  // The same tensor with another element type and/or format, sized accordingly (the attrs passed
  // to rknn_set_io_mem when the application chooses its own buffer type, docs/c-interface.md#outputs):
  //  - NHWC <-> NCHW swaps the dims' order; strides are dropped (dense rows) except the w_stride
  //    of NHWC, which the runtime dictates and which is kept when the format stays NHWC;
  //  - tensors that are not 4-D keep their UNDEFINED format whatever 4-D format is asked for
  //    (the dynamic-shape demo sets fmt = NCHW on every output, [1, 10] ones included);
  //  - NC1HWC2 is a native layout: it cannot be asked for here (query AttrQuery::native);
  //  - another element type drops the quantization (the runtime normalises and quantizes, or
  //    dequantizes, between the buffer type and the model's).
  [[nodiscard]] TensorInfo with(TensorType type, TensorFormat format) const {
    rknn_tensor_attr a = attr_;
    const auto from = this->format();
    const auto is_4d_order = [](TensorFormat f) { return f == TensorFormat::nchw || f == TensorFormat::nhwc; };
    if (from != format) {
      if (is_4d_order(from) && is_4d_order(format) && a.n_dims == 4) {
        const Dims d = dims();
        (format == TensorFormat::nhwc ? nchw_to_nhwc(d) : nhwc_to_nchw(d)).to_abi(a.n_dims, a.dims);
        a.fmt = static_cast<rknn_tensor_format>(format);
        a.w_stride = 0;
      } else if (!(from == TensorFormat::undefined && is_4d_order(format))) {
        detail::fail("rknnxx::TensorInfo::with", "{} {} \"{}\" is {} with {} dims: it cannot be described as {}",
                     io_ == TensorIo::input ? "input" : "output", a.index, name(), name_of(from), a.n_dims,
                     name_of(format));
      }
    }
    if (type != this->type()) {
      a.qnt_type = RKNN_TENSOR_QNT_NONE;
      a.fl = 0;
      a.zp = 0;
      a.scale = 1.0f;
    }
    a.type = static_cast<rknn_tensor_type>(type);
    // Sizes of the new type in the attr's 32-bit fields: a tensor too large for them is refused.
    const auto bytes32 = [&](std::string_view field, std::initializer_list<std::uint64_t> extents) {
      std::uint64_t elements = 1;
      for (std::uint64_t e : extents) elements = detail::checked_mul(elements, e, field);
      const std::uint64_t bytes = bytes_for(type, elements);
      if (bytes > UINT32_MAX)
        detail::fail("rknnxx::TensorInfo::with", "{} {} \"{}\" as {}: {} of {} bytes exceeds the 32-bit field",
                     io_ == TensorIo::input ? "input" : "output", a.index, name(), name_of(type), field, bytes);
      return static_cast<std::uint32_t>(bytes);
    };
    a.size = bytes32("size", {a.n_elems});
    if (a.fmt == RKNN_TENSOR_NHWC && a.w_stride != 0 && a.n_dims == 4) {
      a.size_with_stride =
          bytes32("size_with_stride", {a.dims[0], std::max(a.h_stride, a.dims[1]), a.w_stride, a.dims[3]});
    } else if (a.fmt == RKNN_TENSOR_NC1HWC2) {
      a.size_with_stride =
          bytes32("size_with_stride", {a.dims[0], a.dims[1], a.dims[2], std::max(a.w_stride, a.dims[3]), a.dims[4]});
    } else {
      a.size_with_stride = a.size;
      a.w_stride = 0;
    }
    return {a, io_};
  }

  [[nodiscard]] const rknn_tensor_attr& abi() const noexcept { return attr_; }
  [[nodiscard]] rknn_tensor_attr& abi() noexcept { return attr_; }
  [[nodiscard]] TensorId id() const {
    return io_ == TensorIo::input ? TensorId::input(attr_.index, std::string(name()))
                                  : TensorId::output(attr_.index, std::string(name()));
  }

  friend bool operator==(const TensorInfo& a, const TensorInfo& b) noexcept {
    const auto& x = a.attr_;
    const auto& y = b.attr_;
    return a.io_ == b.io_ && x.index == y.index && x.n_dims == y.n_dims &&
        std::equal(x.dims, x.dims + RKNN_MAX_DIMS, y.dims) && a.name() == b.name() && x.n_elems == y.n_elems &&
        x.size == y.size && x.fmt == y.fmt && x.type == y.type && x.qnt_type == y.qnt_type && x.fl == y.fl &&
        x.zp == y.zp && x.scale == y.scale && x.w_stride == y.w_stride && x.size_with_stride == y.size_with_stride &&
        x.pass_through == y.pass_through && x.h_stride == y.h_stride;
  }

private:
  rknn_tensor_attr attr_{};
  TensorIo io_ = TensorIo::none;
};

}  // namespace rknnxx
