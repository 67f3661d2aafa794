#pragma once
// Typed tensor views: a pointer, a layout mapping (core/layout.hpp) and the quantization of the
// values, like std::mdspan with a layout policy and a dequantizing accessor. A view owns nothing.
//
//   std::vector<std::uint8_t> rgb(h * w * 3);
//   auto in = nhwc_view(rgb.data(), {.n = 1, .c = 3, .h = h, .w = w});   // TensorView<uint8_t, layout::NHWC>
//   in(0, c, y, x) = 255;                                               // logical (n, c, h, w) index
//   auto q = TensorView<std::int8_t, layout::NCHW>(p, m, Quantization::affine_asymmetric(0.1f, -3));
//   float v = q.value(0, 1, 2, 3);                                      // dequantized
//
// ErasedView is the same with the element type and layout known only at run time (what a bound
// buffer or an attribute describes); every TensorView converts to it.

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/tensor/attr.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace rknnxx {

// Elements of whole bytes only: int4 is packed two to a byte and has a view of its own
// (tensor/int4_span.hpp), so a TensorView<Int4, ...> does not compile.
template <class T, Layout L>
  requires ByteAddressableElement<std::remove_const_t<T>>
class TensorView {
public:
  using element_type = T;
  using value_type = std::remove_const_t<T>;
  using layout_type = L;
  using mapping_type = typename L::template mapping<>;
  using extents_type = typename mapping_type::extents_type;

  constexpr TensorView() noexcept = default;
  constexpr TensorView(T* data, const mapping_type& mapping, Quantization quantization = {}) noexcept
      : data_(data), mapping_(mapping), quantization_(quantization) {}
  // A view over a span, refusing a span shorter than the mapping needs.
  constexpr TensorView(std::span<T> data, const mapping_type& mapping, Quantization quantization = {})
      : TensorView(data.data(), mapping, quantization) {
    if (data.size() < mapping.required_span_size())
      detail::fail("rknnxx::TensorView", "a {} view of dims {} spans {} elements, the buffer holds {}", L::name,
                   mapping.dims().rank(), mapping.required_span_size(), data.size());
  }
  // Views of const elements from views of mutable ones.
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  constexpr TensorView(const TensorView<U, L>& other) noexcept  // NOLINT: implicit, as span<T> to span<const T>
      : TensorView(other.data(), other.mapping(), other.quantization()) {}

  [[nodiscard]] constexpr T* data() const noexcept { return data_; }
  [[nodiscard]] constexpr const mapping_type& mapping() const noexcept { return mapping_; }
  [[nodiscard]] constexpr Quantization quantization() const noexcept { return quantization_; }
  [[nodiscard]] constexpr Dims dims() const { return mapping_.dims(); }
  // Elements spanned, padding included.
  [[nodiscard]] constexpr std::size_t span_size() const noexcept { return mapping_.required_span_size(); }
  [[nodiscard]] std::span<T> span() const noexcept { return {data_, span_size()}; }

  // The element at a logical index (an UNDEFINED view of Dims refuses a wrong number of indices).
  template <std::convertible_to<std::size_t>... I> [[nodiscard]] constexpr T& operator()(I... idx) const
      noexcept(noexcept(mapping_(static_cast<std::size_t>(idx)...))) {
    return data_[mapping_(static_cast<std::size_t>(idx)...)];
  }
  // The value at a logical index, dequantized when the view carries affine quantization.
  template <std::convertible_to<std::size_t>... I> [[nodiscard]] constexpr float value(I... idx) const
      noexcept(noexcept((*this)(idx...))) {
    const auto v = (*this)(idx...);
    if constexpr (std::is_same_v<value_type, bool>) return v ? 1.0f : 0.0f;
    else return quantization_.dequantize(static_cast<double>(static_cast<float>(v)));
  }

private:
  T* data_ = nullptr;
  mapping_type mapping_{};
  Quantization quantization_{};
};

// Shorthands for the common layouts (logical extents as Extents4 {n, c, h, w}).
template <class T> [[nodiscard]] constexpr auto nhwc_view(T* data, Extents4 e, std::uint32_t w_stride = 0) {
  return TensorView<T, layout::NHWC>(data, layout::NHWC::mapping(e, w_stride));
}
template <class T> [[nodiscard]] constexpr auto nchw_view(T* data, Extents4 e) {
  return TensorView<T, layout::NCHW>(data, layout::NCHW::mapping(e));
}
template <class T>
[[nodiscard]] constexpr auto nc1hwc2_view(T* data, Extents4 e, std::uint32_t c2, std::uint32_t w_stride = 0) {
  return TensorView<T, layout::NC1HWC2>(data, layout::NC1HWC2::mapping(e, c2, w_stride));
}
// Any rank, dense, in the model's order (UNDEFINED).
template <class T> [[nodiscard]] constexpr auto flat_view(T* data, const Dims& dims) {
  return TensorView<T, layout::Undefined>(data, layout::Undefined::mapping(dims));
}
template <class T> [[nodiscard]] auto flat_view(std::span<T> data, const Dims& dims) {
  return TensorView<T, layout::Undefined>(data, layout::Undefined::mapping(dims));
}
template <class T> [[nodiscard]] auto nhwc_view(std::span<T> data, Extents4 e, std::uint32_t w_stride = 0) {
  return TensorView<T, layout::NHWC>(data, layout::NHWC::mapping(e, w_stride));
}
template <class T> [[nodiscard]] auto nchw_view(std::span<T> data, Extents4 e) {
  return TensorView<T, layout::NCHW>(data, layout::NCHW::mapping(e));
}

template <class V> struct is_tensor_view : std::false_type {};
template <class T, class L> struct is_tensor_view<TensorView<T, L>> : std::true_type {};
template <class V>
concept AnyTensorView = is_tensor_view<std::remove_cvref_t<V>>::value;

// The run-time description of a layout mapping: what a static mapping becomes when erased.
template <Layout L> [[nodiscard]] constexpr RuntimeLayout runtime_layout_of(const typename L::template mapping<>& m) {
  if constexpr (L::format == TensorFormat::nhwc) {
    return RuntimeLayout(TensorFormat::nhwc, m.dims(), m.w_stride(), m.h_stride());
  } else if constexpr (L::format == TensorFormat::nc1hwc2) {
    return RuntimeLayout(TensorFormat::nc1hwc2, m.dims(), m.w_stride(), 0, m.extents().c);
  } else {
    return RuntimeLayout(L::format, m.dims());
  }
}

// A view whose element type and layout are run-time values. `data` is writable only when the
// view was made from a mutable buffer (`writable`).
struct ErasedView {
  std::byte* data = nullptr;
  std::size_t bytes = 0;  // capacity of the buffer (bounds check)
  TensorType type = TensorType::float32;
  RuntimeLayout layout{TensorFormat::undefined, Dims{1}};
  Quantization quantization{};
  bool writable = false;

  // The view of a buffer described by a tensor attribute (the bound memory of a binding).
  [[nodiscard]] static ErasedView of(void* data, std::size_t bytes, const TensorInfo& info, bool writable) {
    return {static_cast<std::byte*>(data), bytes, info.type(), info.layout(), info.quantization(), writable};
  }
};

template <class T, class L> [[nodiscard]] ErasedView erase(const TensorView<T, L>& v) {
  using V = std::remove_const_t<T>;
  return {const_cast<std::byte*>(reinterpret_cast<const std::byte*>(v.data())),
          bytes_for<V>(v.span_size()),
          tensor_type_of<V>,
          runtime_layout_of<L>(v.mapping()),
          v.quantization(),
          !std::is_const_v<T>};
}

}  // namespace rknnxx
