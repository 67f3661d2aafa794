#pragma once
// Layouts: NCHW, NHWC, NC1HWC2 and UNDEFINED as layout policies in the manner of std::mdspan's:
// each has a `template <class Extents> class mapping` meeting the standard's LayoutMapping
// requirements (checked in tests/core/test_layout.cpp, not in every translation unit), from a
// logical index (n, c, h, w) to an element offset. NCHW is
// layout_right, NHWC a strided layout with w_stride and h_stride, NC1HWC2 the one custom policy,
// UNDEFINED layout_right at any rank. Extents4 (the logical extents) is the default extents type;
// any std::extents-like type works. RuntimeLayout is the layout of an attribute read at run time,
// which converts to a static mapping with a checked, explained failure.
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
#include <span>
#include <string_view>
#include <type_traits>

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

// The logical extents of a 4-D tensor, whatever order its memory uses, with the interface of
// std::extents (rank 4, every extent dynamic), so that the layouts' mappings follow the standard's
// LayoutMapping requirements: `layout::NHWC::mapping<Extents4>` is what `mapping<std::dextents<
// std::size_t, 4>>` is where the standard library has <mdspan>.
struct Extents4 {
  using index_type = std::size_t;
  using size_type = std::size_t;
  using rank_type = std::size_t;

  std::uint32_t n = 1;
  std::uint32_t c = 1;
  std::uint32_t h = 1;
  std::uint32_t w = 1;

  [[nodiscard]] static constexpr rank_type rank() noexcept { return 4; }
  [[nodiscard]] static constexpr rank_type rank_dynamic() noexcept { return 4; }
  [[nodiscard]] static constexpr std::size_t static_extent(rank_type) noexcept { return std::dynamic_extent; }
  [[nodiscard]] constexpr index_type extent(rank_type r) const noexcept {
    return r == 0 ? n : r == 1 ? c : r == 2 ? h : w;
  }
  [[nodiscard]] constexpr std::uint64_t elements() const {
    return detail::checked_mul(detail::checked_mul(std::uint64_t{n} * c, h, "n*c*h"), w, "n*c*h*w");
  }
  friend constexpr bool operator==(const Extents4&, const Extents4&) noexcept = default;
};

// What a mapping needs of its extents: std::extents' members (Extents4, Dims, std::extents).
template <class E>
concept ExtentsLike = requires(const E& e, typename E::rank_type r) {
  typename E::index_type;
  { e.rank() } -> std::convertible_to<std::size_t>;
  { e.extent(r) } -> std::convertible_to<typename E::index_type>;
};

namespace detail {
// The logical (n, c, h, w) of rank-4 extents, each extent checked to fit the ABI's 32 bits.
template <ExtentsLike E> constexpr Extents4 extents4_of(std::string_view who, const E& e) {
  if constexpr (std::is_same_v<E, Extents4>) {
    return e;
  } else {
    std::uint32_t x[4]{};
    for (std::size_t r = 0; r < 4; ++r) {
      const auto v = static_cast<std::uint64_t>(e.extent(r));
      if (v > std::numeric_limits<std::uint32_t>::max()) fail(who, "extent {} is {}: more than 32 bits", r, v);
      x[r] = static_cast<std::uint32_t>(v);
    }
    return {x[0], x[1], x[2], x[3]};
  }
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

// The members every mapping shares: its extents as given and as (n, c, h, w), and the span. A
// mapping is regular (default-constructible, copyable, equality-comparable) like the standard's.
template <class Layout, class Extents> class mapping_base {
public:
  using extents_type = Extents;
  using index_type = typename Extents::index_type;
  using size_type = std::size_t;
  using rank_type = typename Extents::rank_type;
  using layout_type = Layout;

  [[nodiscard]] constexpr const extents_type& extents() const noexcept { return extents_; }
  [[nodiscard]] constexpr index_type required_span_size() const noexcept { return span_; }
  [[nodiscard]] static constexpr bool is_always_unique() noexcept { return true; }
  [[nodiscard]] static constexpr bool is_unique() noexcept { return true; }
  friend constexpr bool operator==(const mapping_base&, const mapping_base&) noexcept = default;

protected:
  constexpr mapping_base() noexcept = default;
  constexpr explicit mapping_base(const Extents& e) : extents_(e) {}
  extents_type extents_{};
  Extents4 e_{};  // the logical (n, c, h, w)
  index_type span_ = 1;
};
}  // namespace detail

namespace layout {

// Dense (n, c, h, w), w fastest: the standard's layout_right over the logical extents; the layout
// of outputs with want_float and of NCHW inputs.
struct NCHW {
  static constexpr TensorFormat format = TensorFormat::nchw;
  static constexpr std::string_view name = "NCHW";

  template <ExtentsLike Extents = Extents4> class mapping : public detail::mapping_base<NCHW, Extents> {
    static_assert(Extents::rank() == 4, "an NCHW mapping takes the four logical extents (n, c, h, w)");
    using base = detail::mapping_base<NCHW, Extents>;

  public:
    using typename base::index_type;
    using typename base::rank_type;
    constexpr mapping() noexcept = default;
    constexpr explicit mapping(const Extents& e) : base(e) {
      this->e_ = detail::extents4_of("layout::NCHW::mapping", e);
      this->span_ = detail::checked_span("layout::NCHW::mapping", {this->e_.n, this->e_.c, this->e_.h, this->e_.w});
    }

    [[nodiscard]] constexpr Dims dims() const { return {this->e_.n, this->e_.c, this->e_.h, this->e_.w}; }
    [[nodiscard]] constexpr index_type operator()(index_type n, index_type c, index_type h,
                                                  index_type w) const noexcept {
      return ((n * this->e_.c + c) * this->e_.h + h) * this->e_.w + w;
    }
    // Strides in logical (n, c, h, w) order.
    [[nodiscard]] constexpr index_type stride(rank_type r) const noexcept {
      const index_type s[4] = {index_type{this->e_.c} * this->e_.h * this->e_.w, index_type{this->e_.h} * this->e_.w,
                               this->e_.w, 1};
      return s[r];
    }
    [[nodiscard]] static constexpr bool is_always_exhaustive() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_always_strided() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_exhaustive() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return true; }
  };
  // Braced extents ({1, 3, 224, 224}) are Extents4: clang 16 derives no guide from the constructors of a
  // member template (and calls a non-template guide unused, hence the template parameter).
  template <class = void> mapping(const Extents4&) -> mapping<Extents4>;
  template <class E> mapping(const E&) -> mapping<E>;
};

// (n, h, w, c), c fastest; a row holds w_stride >= W pixels and a batch h_stride >= H rows (the
// zero-copy input layout: padding pixels hold no data). A strided layout, like the standard's
// layout_stride with the strides of a padded NHWC buffer.
struct NHWC {
  static constexpr TensorFormat format = TensorFormat::nhwc;
  static constexpr std::string_view name = "NHWC";

  template <ExtentsLike Extents = Extents4> class mapping : public detail::mapping_base<NHWC, Extents> {
    static_assert(Extents::rank() == 4, "an NHWC mapping takes the four logical extents (n, c, h, w)");
    using base = detail::mapping_base<NHWC, Extents>;

  public:
    using typename base::index_type;
    using typename base::rank_type;
    constexpr mapping() noexcept = default;
    constexpr explicit mapping(const Extents& e, std::uint32_t w_stride = 0, std::uint32_t h_stride = 0) : base(e) {
      constexpr std::string_view who = "layout::NHWC::mapping";
      this->e_ = detail::extents4_of(who, e);
      ws_ = detail::checked_w_stride(who, this->e_, w_stride);
      hs_ = detail::checked_h_stride(who, this->e_, h_stride);
      this->span_ = detail::checked_span(who, {this->e_.n, hs_, ws_, this->e_.c});
    }

    [[nodiscard]] constexpr Dims dims() const { return {this->e_.n, this->e_.h, this->e_.w, this->e_.c}; }
    [[nodiscard]] constexpr std::uint32_t w_stride() const noexcept { return ws_; }
    [[nodiscard]] constexpr std::uint32_t h_stride() const noexcept { return hs_; }
    [[nodiscard]] constexpr index_type operator()(index_type n, index_type c, index_type h,
                                                  index_type w) const noexcept {
      return ((n * hs_ + h) * ws_ + w) * this->e_.c + c;
    }
    [[nodiscard]] constexpr index_type stride(rank_type r) const noexcept {
      const index_type s[4] = {index_type{hs_} * ws_ * this->e_.c, 1, index_type{ws_} * this->e_.c, this->e_.c};
      return s[r];
    }
    [[nodiscard]] static constexpr bool is_always_exhaustive() noexcept { return false; }
    [[nodiscard]] static constexpr bool is_always_strided() noexcept { return true; }
    [[nodiscard]] constexpr bool is_exhaustive() const noexcept { return ws_ == this->e_.w && hs_ == this->e_.h; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return true; }
    friend constexpr bool operator==(const mapping&, const mapping&) noexcept = default;

  private:
    std::uint32_t ws_ = 1;
    std::uint32_t hs_ = 1;
  };
  template <class = void> mapping(const Extents4&, std::uint32_t = 0, std::uint32_t = 0) -> mapping<Extents4>;
  template <class E> mapping(const E&, std::uint32_t = 0, std::uint32_t = 0) -> mapping<E>;
};

// The NPU's native blocking, the one layout no standard mapping describes: dims [N, C1, H, W, C2]
// with C1 = ceil(C / C2); from the lowest address C2 varies fastest, then W (row pitch w_stride),
// H, C1, N. The lanes c >= C of the last C1 block are padding, so the mapping is exhaustive only
// when C2 divides C and w_stride == W; a channel's step depends on whether it crosses a block,
// so it is not strided (no stride()).
struct NC1HWC2 {
  static constexpr TensorFormat format = TensorFormat::nc1hwc2;
  static constexpr std::string_view name = "NC1HWC2";

  template <ExtentsLike Extents = Extents4> class mapping : public detail::mapping_base<NC1HWC2, Extents> {
    static_assert(Extents::rank() == 4, "an NC1HWC2 mapping takes the four logical extents (n, c, h, w)");
    using base = detail::mapping_base<NC1HWC2, Extents>;

  public:
    using typename base::index_type;
    constexpr mapping() noexcept = default;
    constexpr mapping(const Extents& e, std::uint32_t c2, std::uint32_t w_stride = 0) : base(e) {
      constexpr std::string_view who = "layout::NC1HWC2::mapping";
      this->e_ = detail::extents4_of(who, e);
      if (c2 == 0) detail::fail(who, "C2 is {}: it must be at least 1", c2);
      c2_ = c2;
      ws_ = detail::checked_w_stride(who, this->e_, w_stride);
      c1_ = static_cast<std::uint32_t>((std::uint64_t{this->e_.c} + c2 - 1) / c2);
      this->span_ = detail::checked_span(who, {this->e_.n, c1_, this->e_.h, ws_, c2_});
    }

    // The native dims as the runtime reports them: [N, C1, H, W, C2].
    [[nodiscard]] constexpr Dims dims() const { return {this->e_.n, c1_, this->e_.h, this->e_.w, c2_}; }
    [[nodiscard]] constexpr std::uint32_t c1() const noexcept { return c1_; }
    [[nodiscard]] constexpr std::uint32_t c2() const noexcept { return c2_; }
    [[nodiscard]] constexpr std::uint32_t w_stride() const noexcept { return ws_; }
    [[nodiscard]] constexpr index_type operator()(index_type n, index_type c, index_type h,
                                                  index_type w) const noexcept {
      return (((n * c1_ + c / c2_) * this->e_.h + h) * ws_ + w) * c2_ + c % c2_;
    }
    [[nodiscard]] static constexpr bool is_always_exhaustive() noexcept { return false; }
    [[nodiscard]] static constexpr bool is_always_strided() noexcept { return false; }
    [[nodiscard]] constexpr bool is_exhaustive() const noexcept { return this->e_.c % c2_ == 0 && ws_ == this->e_.w; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return false; }
    friend constexpr bool operator==(const mapping&, const mapping&) noexcept = default;

  private:
    std::uint32_t c2_ = 1;
    std::uint32_t ws_ = 1;
    std::uint32_t c1_ = 1;
  };
  template <class = void> mapping(const Extents4&, std::uint32_t, std::uint32_t = 0) -> mapping<Extents4>;
  template <class E> mapping(const E&, std::uint32_t, std::uint32_t = 0) -> mapping<E>;
};

// Any rank, in the model's own order, dense and row-major: the standard's layout_right (non-4-D
// tensors; no mean/std). With Dims as its extents (the default) the rank is known at run time,
// as an attribute gives it; with static extents it is fixed when compiling.
struct Undefined {
  static constexpr TensorFormat format = TensorFormat::undefined;
  static constexpr std::string_view name = "UNDEFINED";

  template <ExtentsLike Extents = Dims> class mapping : public detail::mapping_base<Undefined, Extents> {
    using base = detail::mapping_base<Undefined, Extents>;

  public:
    using typename base::index_type;
    using typename base::rank_type;
    constexpr mapping() noexcept = default;
    constexpr explicit mapping(const Extents& e) : base(e) {
      std::uint64_t span = 1;
      for (rank_type r = 0; r < e.rank(); ++r)
        span = detail::checked_mul(span, static_cast<std::uint64_t>(e.extent(r)), "the span of the mapping");
      if (span > std::numeric_limits<std::size_t>::max())
        detail::fail("layout::Undefined::mapping", "the span of {} elements does not fit std::size_t on this target",
                     span);
      this->span_ = static_cast<index_type>(span);
    }

    [[nodiscard]] constexpr Dims dims() const {
      if constexpr (std::is_same_v<Extents, Dims>) {
        return this->extents_;
      } else {
        std::uint32_t d[Extents::rank() == 0 ? 1 : Extents::rank()]{};
        for (rank_type r = 0; r < Extents::rank(); ++r) d[r] = static_cast<std::uint32_t>(this->extents_.extent(r));
        return Dims(std::span<const std::uint32_t>(d, Extents::rank()));
      }
    }
    // Row-major over the extents. With static extents exactly rank() indices compile; with Dims
    // a different count is refused when called.
    template <std::convertible_to<index_type>... I> [[nodiscard]] constexpr index_type operator()(I... idx) const {
      if constexpr (requires { std::integral_constant<std::size_t, Extents::rank()>{}; }) {
        static_assert(sizeof...(I) == Extents::rank(), "an UNDEFINED mapping takes one index per extent");
      } else if (sizeof...(I) != this->extents_.rank()) {
        detail::fail("layout::Undefined::mapping", "{} indices for rank {}", sizeof...(I), this->extents_.rank());
      }
      const index_type index[] = {static_cast<index_type>(idx)..., 0};
      index_type off = 0;
      for (std::size_t r = 0; r < sizeof...(I); ++r) off = off * this->extents_.extent(r) + index[r];
      return off;
    }
    [[nodiscard]] constexpr index_type stride(rank_type r) const noexcept {
      index_type s = 1;
      for (rank_type k = r + 1; k < this->extents_.rank(); ++k) s *= this->extents_.extent(k);
      return s;
    }
    [[nodiscard]] static constexpr bool is_always_exhaustive() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_always_strided() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_exhaustive() noexcept { return true; }
    [[nodiscard]] static constexpr bool is_strided() noexcept { return true; }
  };
  template <class E> mapping(const E&) -> mapping<E>;
};

}  // namespace layout

// A layout type: its ABI format, its name, and a mapping template whose default instance maps
// the logical (n, c, h, w) (or, for UNDEFINED, the model's indices) to an element offset.
template <class L>
concept Layout = requires {
  { L::format } -> std::convertible_to<TensorFormat>;
  { L::name } -> std::convertible_to<std::string_view>;
  typename L::template mapping<>;
} && std::regular<typename L::template mapping<>> && requires(const typename L::template mapping<>& m, std::size_t i) {
  { m(i, i, i, i) } -> std::same_as<std::size_t>;
  { m.required_span_size() } -> std::same_as<std::size_t>;
  { m.dims() } -> std::same_as<Dims>;
  { m.is_exhaustive() } -> std::same_as<bool>;
  { m.is_unique() } -> std::same_as<bool>;
};

// The standard's LayoutMapping requirements ([mdspan.layout.reqmts]) that a mapping type meets.
template <class M>
concept LayoutMapping =
    std::copyable<M> && std::equality_comparable<M> && requires(const M& m, typename M::rank_type r) {
      typename M::extents_type;
      typename M::index_type;
      typename M::rank_type;
      typename M::layout_type;
      { m.extents() } -> std::same_as<const typename M::extents_type&>;
      { m.required_span_size() } -> std::same_as<typename M::index_type>;
      { m.is_unique() } -> std::same_as<bool>;
      { m.is_exhaustive() } -> std::same_as<bool>;
      { m.is_strided() } -> std::same_as<bool>;
      { M::is_always_unique() } -> std::same_as<bool>;
      { M::is_always_exhaustive() } -> std::same_as<bool>;
      { M::is_always_strided() } -> std::same_as<bool>;
      std::bool_constant<M::is_always_unique()>::value;
      std::bool_constant<M::is_always_exhaustive()>::value;
      std::bool_constant<M::is_always_strided()>::value;
    } && (!M::is_always_strided() || requires(const M& m, typename M::rank_type r) {
      { m.stride(r) } -> std::same_as<typename M::index_type>;
    });

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
  // Returns L's default mapping; declared auto so that a non-layout L fails the Layout constraint
  // (the diagnostic users read) before the signature names L::mapping.
  template <Layout L> [[nodiscard]] constexpr auto mapping() const {
    if (L::format != format_)
      detail::fail("rknnxx::RuntimeLayout::mapping", "expected layout {}, the tensor is {} with {} dims", L::name,
                   name_of(format_), dims_.rank());
    if constexpr (L::format == TensorFormat::nchw) {
      return typename L::template mapping<>(Extents4{dims_[0], dims_[1], dims_[2], dims_[3]});
    } else if constexpr (L::format == TensorFormat::nhwc) {
      return typename L::template mapping<>(Extents4{dims_[0], dims_[3], dims_[1], dims_[2]}, w_stride_, h_stride_);
    } else if constexpr (L::format == TensorFormat::nc1hwc2) {
      return typename L::template mapping<>(Extents4{dims_[0], channels_, dims_[2], dims_[3]}, dims_[4], w_stride_);
    } else {
      return typename L::template mapping<>(dims_);
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
