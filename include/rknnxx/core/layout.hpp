#pragma once
// Layouts: NCHW, NHWC, NC1HWC2 and UNDEFINED as types satisfying the concept Layout, each with an
// mdspan-style mapping from a logical index (n, c, h, w) to an element offset; and RuntimeLayout,
// the layout of an attribute read at run time, which converts to a static mapping with a checked,
// explained failure.
//
//   layout::NHWC::mapping m{{.n = 1, .c = 3, .h = 224, .w = 225}, /*w_stride=*/232};
//   m(0, 2, 1, 0) == (1 * 232 + 0) * 3 + 2;  m.required_span_size() == 224 * 232 * 3
//   auto nc = RuntimeLayout::from_attr(native_attr).mapping<layout::NC1HWC2>(); // or Error
//
// required_span_size() times the element size is the attribute's size_with_stride.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/platform.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>

namespace rknnxx {

enum class TensorFormat : std::uint32_t {
  nchw = RKNN_TENSOR_NCHW,
  nhwc = RKNN_TENSOR_NHWC,
  nc1hwc2 = RKNN_TENSOR_NC1HWC2,
  undefined = RKNN_TENSOR_UNDEFINED,
};

[[nodiscard]] constexpr bool is_valid(TensorFormat f) noexcept {
  return static_cast<std::uint32_t>(f) < RKNN_TENSOR_FORMAT_MAX;
}
[[nodiscard]] constexpr std::string_view name_of(TensorFormat f) noexcept {
  switch (f) {
    case TensorFormat::nchw: return "NCHW";
    case TensorFormat::nhwc: return "NHWC";
    case TensorFormat::nc1hwc2: return "NC1HWC2";
    case TensorFormat::undefined: return "UNDEFINED";
  }
  return "UNKNOW";
}

// The logical extents of a 4-D tensor, whatever order its memory uses.
struct Extents4 {
  std::uint32_t n = 1;
  std::uint32_t c = 1;
  std::uint32_t h = 1;
  std::uint32_t w = 1;
  [[nodiscard]] constexpr std::uint64_t elements() const {
    return detail::checked_mul(detail::checked_mul(std::uint64_t{n} * c, h, "n*c*h"), w, "n*c*h*w");
  }
  friend constexpr bool operator==(const Extents4&, const Extents4&) noexcept = default;
};

namespace detail {
constexpr void check_extents(std::string_view who, const Extents4& e) {
  if (e.n == 0 || e.c == 0 || e.h == 0 || e.w == 0)
    fail(who, "extents n={} c={} h={} w={}: every extent must be at least 1", e.n, e.c, e.h, e.w);
}
constexpr std::uint32_t checked_w_stride(std::string_view who, const Extents4& e, std::uint32_t w_stride) {
  if (w_stride == 0) return e.w;  // the ABI's "0 means equal to the width"
  if (w_stride < e.w) fail(who, "w_stride {} is smaller than the width {}", w_stride, e.w);
  return w_stride;
}
// The number of elements a mapping spans must be addressable with std::size_t (32 bits on armhf).
constexpr std::size_t checked_span(std::string_view who, std::initializer_list<std::uint64_t> factors) {
  std::uint64_t span = 1;
  for (auto f : factors) span = checked_mul(span, f, "the span of the mapping");
  if (span > std::numeric_limits<std::size_t>::max())
    fail(who, "the span of {} elements does not fit std::size_t on this target", span);
  return static_cast<std::size_t>(span);
}
constexpr std::uint32_t checked_h_stride(std::string_view who, const Extents4& e, std::uint32_t h_stride) {
  if (h_stride == 0) return e.h;
  if (h_stride < e.h) fail(who, "h_stride {} is smaller than the height {}", h_stride, e.h);
  return h_stride;
}
}  // namespace detail

namespace layout {

// Dense (n, c, h, w), w fastest: the layout of outputs with want_float and of NCHW inputs.
struct NCHW {
  static constexpr TensorFormat format = TensorFormat::nchw;
  static constexpr std::string_view name = "NCHW";

  class mapping {
  public:
    using layout_type = NCHW;
    constexpr mapping() noexcept = default;
    constexpr explicit mapping(Extents4 e) : e_(e) {
      detail::check_extents("layout::NCHW::mapping", e);
      span_ = detail::checked_span("layout::NCHW::mapping", {e.n, e.c, e.h, e.w});
    }

    [[nodiscard]] constexpr Extents4 extents() const noexcept { return e_; }
    [[nodiscard]] constexpr Dims dims() const { return {e_.n, e_.c, e_.h, e_.w}; }
    [[nodiscard]] constexpr std::size_t operator()(std::size_t n, std::size_t c, std::size_t h,
                                                   std::size_t w) const noexcept {
      return ((n * e_.c + c) * e_.h + h) * e_.w + w;
    }
    [[nodiscard]] constexpr std::size_t required_span_size() const noexcept { return span_; }
    // Strides in logical (n, c, h, w) order.
    [[nodiscard]] constexpr std::size_t stride(std::size_t r) const noexcept {
      const std::size_t s[4] = {std::size_t{e_.c} * e_.h * e_.w, std::size_t{e_.h} * e_.w, e_.w, 1};
      return s[r];
    }
    [[nodiscard]] static constexpr bool is_unique() noexcept { return true; }
    [[nodiscard]] constexpr bool is_exhaustive() const noexcept { return true; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return true; }
    friend constexpr bool operator==(const mapping&, const mapping&) noexcept = default;

  private:
    Extents4 e_{};
    std::size_t span_ = 1;
  };
};

// (n, h, w, c), c fastest; a row holds w_stride >= W pixels and a batch h_stride >= H rows
// (the zero-copy input layout: padding pixels hold no data).
struct NHWC {
  static constexpr TensorFormat format = TensorFormat::nhwc;
  static constexpr std::string_view name = "NHWC";

  class mapping {
  public:
    using layout_type = NHWC;
    constexpr mapping() noexcept = default;
    constexpr explicit mapping(Extents4 e, std::uint32_t w_stride = 0, std::uint32_t h_stride = 0)
        : e_(e), ws_(detail::checked_w_stride("layout::NHWC::mapping", e, w_stride)),
          hs_(detail::checked_h_stride("layout::NHWC::mapping", e, h_stride)) {
      detail::check_extents("layout::NHWC::mapping", e);
      span_ = detail::checked_span("layout::NHWC::mapping", {e.n, hs_, ws_, e.c});
    }

    [[nodiscard]] constexpr Extents4 extents() const noexcept { return e_; }
    [[nodiscard]] constexpr Dims dims() const { return {e_.n, e_.h, e_.w, e_.c}; }
    [[nodiscard]] constexpr std::uint32_t w_stride() const noexcept { return ws_; }
    [[nodiscard]] constexpr std::uint32_t h_stride() const noexcept { return hs_; }
    [[nodiscard]] constexpr std::size_t operator()(std::size_t n, std::size_t c, std::size_t h,
                                                   std::size_t w) const noexcept {
      return ((n * hs_ + h) * ws_ + w) * e_.c + c;
    }
    [[nodiscard]] constexpr std::size_t required_span_size() const noexcept { return span_; }
    [[nodiscard]] constexpr std::size_t stride(std::size_t r) const noexcept {
      const std::size_t s[4] = {std::size_t{hs_} * ws_ * e_.c, 1, std::size_t{ws_} * e_.c, e_.c};
      return s[r];
    }
    [[nodiscard]] static constexpr bool is_unique() noexcept { return true; }
    [[nodiscard]] constexpr bool is_exhaustive() const noexcept { return ws_ == e_.w && hs_ == e_.h; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return true; }
    friend constexpr bool operator==(const mapping&, const mapping&) noexcept = default;

  private:
    Extents4 e_{};
    std::uint32_t ws_ = 1;
    std::uint32_t hs_ = 1;
    std::size_t span_ = 1;
  };
};

// The NPU's native blocking: dims [N, C1, H, W, C2] with C1 = ceil(C / C2); from the lowest
// address C2 varies fastest, then W (row pitch w_stride), H, C1, N. The lanes c >= C of the last
// C1 block are padding, so the mapping is exhaustive only when C2 divides C and w_stride == W.
struct NC1HWC2 {
  static constexpr TensorFormat format = TensorFormat::nc1hwc2;
  static constexpr std::string_view name = "NC1HWC2";

  class mapping {
  public:
    using layout_type = NC1HWC2;
    constexpr mapping() noexcept = default;
    constexpr mapping(Extents4 e, std::uint32_t c2, std::uint32_t w_stride = 0)
        : e_(e), c2_(c2), ws_(detail::checked_w_stride("layout::NC1HWC2::mapping", e, w_stride)) {
      detail::check_extents("layout::NC1HWC2::mapping", e);
      if (c2 == 0) detail::fail("layout::NC1HWC2::mapping", "C2 is {}: it must be at least 1", c2);
      c1_ = static_cast<std::uint32_t>((std::uint64_t{e.c} + c2 - 1) / c2);
      span_ = detail::checked_span("layout::NC1HWC2::mapping", {e.n, c1_, e.h, ws_, c2_});
    }

    [[nodiscard]] constexpr Extents4 extents() const noexcept { return e_; }
    // The native dims as the runtime reports them: [N, C1, H, W, C2].
    [[nodiscard]] constexpr Dims dims() const { return {e_.n, c1_, e_.h, e_.w, c2_}; }
    [[nodiscard]] constexpr std::uint32_t c1() const noexcept { return c1_; }
    [[nodiscard]] constexpr std::uint32_t c2() const noexcept { return c2_; }
    [[nodiscard]] constexpr std::uint32_t w_stride() const noexcept { return ws_; }
    [[nodiscard]] constexpr std::size_t operator()(std::size_t n, std::size_t c, std::size_t h,
                                                   std::size_t w) const noexcept {
      return (((n * c1_ + c / c2_) * e_.h + h) * ws_ + w) * c2_ + c % c2_;
    }
    [[nodiscard]] constexpr std::size_t required_span_size() const noexcept { return span_; }
    [[nodiscard]] static constexpr bool is_unique() noexcept { return true; }
    [[nodiscard]] constexpr bool is_exhaustive() const noexcept { return e_.c % c2_ == 0 && ws_ == e_.w; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return false; }
    friend constexpr bool operator==(const mapping&, const mapping&) noexcept = default;

  private:
    Extents4 e_{};
    std::uint32_t c2_ = 1;
    std::uint32_t ws_ = 1;
    std::uint32_t c1_ = 1;
    std::size_t span_ = 1;
  };
};

// Any rank, in the model's own order, dense and row-major (non-4-D tensors; no mean/std).
struct Undefined {
  static constexpr TensorFormat format = TensorFormat::undefined;
  static constexpr std::string_view name = "UNDEFINED";

  class mapping {
  public:
    using layout_type = Undefined;
    constexpr mapping() noexcept = default;
    constexpr explicit mapping(Dims d) : d_(d) {
      if (d.elements() > std::numeric_limits<std::size_t>::max())
        detail::fail("layout::Undefined::mapping", "the span of {} elements does not fit std::size_t on this target",
                     d.elements());
    }

    [[nodiscard]] constexpr Dims dims() const noexcept { return d_; }
    // Row-major over the dims; with four indices on a rank-4 tensor, (n, c, h, w) are simply
    // the four dims in order.
    template <std::convertible_to<std::size_t>... I>
    [[nodiscard]] constexpr std::size_t operator()(I... idx) const noexcept {
      const std::size_t index[] = {static_cast<std::size_t>(idx)..., 0};
      std::size_t off = 0;
      for (std::size_t r = 0; r < sizeof...(I) && r < d_.rank(); ++r) off = off * d_[r] + index[r];
      return off;
    }
    [[nodiscard]] constexpr std::size_t required_span_size() const { return static_cast<std::size_t>(d_.elements()); }
    [[nodiscard]] static constexpr bool is_unique() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_exhaustive() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return true; }
    friend constexpr bool operator==(const mapping&, const mapping&) noexcept = default;

  private:
    Dims d_{};
  };
};

}  // namespace layout

// A layout type: its ABI format, its name, and a mapping from (n, c, h, w) to an element offset.
template <class L>
concept Layout = requires {
  { L::format } -> std::convertible_to<TensorFormat>;
  { L::name } -> std::convertible_to<std::string_view>;
  typename L::mapping;
} && std::regular<typename L::mapping> && requires(const typename L::mapping& m, std::size_t i) {
  { m(i, i, i, i) } -> std::same_as<std::size_t>;
  { m.required_span_size() } -> std::same_as<std::size_t>;
  { m.dims() } -> std::same_as<Dims>;
  { m.is_exhaustive() } -> std::same_as<bool>;
  { m.is_unique() } -> std::same_as<bool>;
};

static_assert(Layout<layout::NCHW> && Layout<layout::NHWC> && Layout<layout::NC1HWC2> && Layout<layout::Undefined>);

namespace detail {
template <TensorFormat> struct layout_of;
template <> struct layout_of<TensorFormat::nchw> {
  using type = layout::NCHW;
};
template <> struct layout_of<TensorFormat::nhwc> {
  using type = layout::NHWC;
};
template <> struct layout_of<TensorFormat::nc1hwc2> {
  using type = layout::NC1HWC2;
};
template <> struct layout_of<TensorFormat::undefined> {
  using type = layout::Undefined;
};
}  // namespace detail

// The layout type of a TensorFormat value.
template <TensorFormat F> using layout_t = typename detail::layout_of<F>::type;

// The layout part of a tensor attribute read at run time: format, dims in that format's order,
// w_stride and h_stride (0 = none), and for NC1HWC2 the logical channel count. Constructing it
// validates the combination; mapping<L>() converts it to a static layout or says why not.
class RuntimeLayout {
public:
  constexpr RuntimeLayout(TensorFormat format, Dims dims, std::uint32_t w_stride = 0, std::uint32_t h_stride = 0,
                          std::uint32_t channels = 0)
      : format_(format), dims_(dims), w_stride_(w_stride), h_stride_(h_stride), channels_(channels) {
    constexpr std::string_view who = "rknnxx::RuntimeLayout";
    if (!is_valid(format))
      detail::fail(who, "format value {} is not an rknn_tensor_format (0..3)", static_cast<std::uint32_t>(format));
    const std::size_t want = format == TensorFormat::nc1hwc2 ? 5 : 4;
    if (format != TensorFormat::undefined && dims.rank() != want)
      detail::fail(who, "{} tensors have {} dims, given {}", name_of(format), want, dims.rank());
    if (format == TensorFormat::nc1hwc2) {
      const std::uint64_t padded = std::uint64_t{dims[1]} * dims[4];
      if (padded > std::numeric_limits<std::uint32_t>::max())
        detail::fail(who, "C1={} x C2={} channels overflow 32 bits", dims[1], dims[4]);
      if (channels_ == 0) channels_ = static_cast<std::uint32_t>(padded);
      if (channels_ > padded || channels_ + std::uint64_t{dims[4]} <= padded)
        detail::fail(who, "{} channels do not fill C1={} blocks of C2={}", channels_, dims[1], dims[4]);
    }
    if (format != TensorFormat::undefined && w_stride != 0 && w_stride < dims[format == TensorFormat::nhwc ? 2 : 3])
      detail::fail(who, "w_stride {} is smaller than the width {}", w_stride,
                   dims[format == TensorFormat::nhwc ? 2 : 3]);
  }

  // From an attribute of any query. For native NC1HWC2 attributes the logical channel count is
  // n_elems / (N*H*W) when that is consistent (INFERRED: the runtime's n_elems excludes the
  // padding lanes), else C1*C2. With a platform, C2 must be the platform's for attr.type.
  [[nodiscard]] static constexpr RuntimeLayout from_attr(const rknn_tensor_attr& attr,
                                                         std::optional<Platform> platform = std::nullopt) {
    const auto format = static_cast<TensorFormat>(attr.fmt);
    const Dims dims = Dims::from_abi(attr.n_dims, attr.dims);
    std::uint32_t channels = 0;
    if (format == TensorFormat::nc1hwc2 && dims.rank() == 5) {
      // Checked: N*H*W of crafted dims can wrap to 0, and n_elems % 0 would trap.
      const std::uint64_t nhw =
          detail::checked_mul(std::uint64_t{dims[0]} * dims[2], dims[3], "N*H*W of the NC1HWC2 dims");
      const std::uint64_t padded = std::uint64_t{dims[1]} * dims[4];
      if (attr.n_elems % nhw == 0 && attr.n_elems / nhw <= padded && attr.n_elems / nhw + dims[4] > padded)
        channels = static_cast<std::uint32_t>(attr.n_elems / nhw);
      if (platform) {
        const auto& info = platform_info(*platform);
        const auto type = static_cast<TensorType>(attr.type);
        const std::uint32_t c2 = info.c2(type);
        if (c2 != 0 && dims[4] != c2)
          detail::fail("rknnxx::RuntimeLayout", "C2 {} is not {}'s C2 for {} ({})", dims[4], info.name, name_of(type),
                       c2);
      }
    }
    return RuntimeLayout(format, dims, attr.w_stride, attr.h_stride, channels);
  }

  [[nodiscard]] constexpr TensorFormat format() const noexcept { return format_; }
  [[nodiscard]] constexpr const Dims& dims() const noexcept { return dims_; }
  [[nodiscard]] constexpr std::uint32_t w_stride() const noexcept { return w_stride_; }
  [[nodiscard]] constexpr std::uint32_t h_stride() const noexcept { return h_stride_; }

  template <Layout L> [[nodiscard]] constexpr bool is() const noexcept { return L::format == format_; }

  // The static mapping, or an Error: "expected layout NHWC, the tensor is NC1HWC2 [1, 32, 80, 80, 8]".
  // Returns L::mapping; declared auto so that a non-layout L fails the Layout constraint (the
  // diagnostic users read) before the signature names L::mapping.
  template <Layout L> [[nodiscard]] constexpr auto mapping() const {
    if (L::format != format_)
      detail::fail("rknnxx::RuntimeLayout::mapping", "expected layout {}, the tensor is {} with {} dims", L::name,
                   name_of(format_), dims_.rank());
    if constexpr (L::format == TensorFormat::nchw) {
      return typename L::mapping(Extents4{dims_[0], dims_[1], dims_[2], dims_[3]});
    } else if constexpr (L::format == TensorFormat::nhwc) {
      return typename L::mapping(Extents4{dims_[0], dims_[3], dims_[1], dims_[2]}, w_stride_, h_stride_);
    } else if constexpr (L::format == TensorFormat::nc1hwc2) {
      return typename L::mapping(Extents4{dims_[0], channels_, dims_[2], dims_[3]}, dims_[4], w_stride_);
    } else {
      return typename L::mapping(dims_);
    }
  }

  friend constexpr bool operator==(const RuntimeLayout&, const RuntimeLayout&) noexcept = default;

private:
  TensorFormat format_;
  Dims dims_;
  std::uint32_t w_stride_;
  std::uint32_t h_stride_;
  std::uint32_t channels_;
};

}  // namespace rknnxx
