#pragma once
// Element types: one C++ type per rknn_tensor_type, their traits (bits, name, ABI value), the
// concept TensorElement, and the run-time enum TensorType with the same values as the ABI.
//
//   static_assert(element_traits<Float16>::type == TensorType::float16);
//   using T = element_t<TensorType::int8>;            // std::int8_t
//   bytes_for<Int4>(5) == 3                            // two int4 per byte, rounded up

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/bfloat16.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/float16.hpp>
#include <rknnxx/core/int4.hpp>

#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rknnxx {

enum class TensorType : std::uint32_t {
  float32 = RKNN_TENSOR_FLOAT32,
  float16 = RKNN_TENSOR_FLOAT16,
  int8 = RKNN_TENSOR_INT8,
  uint8 = RKNN_TENSOR_UINT8,
  int16 = RKNN_TENSOR_INT16,
  uint16 = RKNN_TENSOR_UINT16,
  int32 = RKNN_TENSOR_INT32,
  uint32 = RKNN_TENSOR_UINT32,
  int64 = RKNN_TENSOR_INT64,
  boolean = RKNN_TENSOR_BOOL,
  int4 = RKNN_TENSOR_INT4,
  bfloat16 = RKNN_TENSOR_BFLOAT16,
};

inline constexpr std::array all_tensor_types{
    TensorType::float32, TensorType::float16, TensorType::int8,  TensorType::uint8,
    TensorType::int16,   TensorType::uint16,  TensorType::int32, TensorType::uint32,
    TensorType::int64,   TensorType::boolean, TensorType::int4,  TensorType::bfloat16,
};

// Per element type: its ABI value, its width in bits and the name the runtime's dumps print.
template <class T> struct element_traits;  // undefined for anything that is not a tensor element

#define RKNNXX_ELEMENT(cpp_type, enumerator, width, display)                                                           \
  template <> struct element_traits<cpp_type> {                                                                        \
    using type_t = cpp_type;                                                                                           \
    static constexpr TensorType type = TensorType::enumerator;                                                         \
    static constexpr std::size_t bits = width;                                                                         \
    static constexpr std::string_view name = display;                                                                  \
  }
RKNNXX_ELEMENT(float, float32, 32, "FP32");
RKNNXX_ELEMENT(Float16, float16, 16, "FP16");
RKNNXX_ELEMENT(std::int8_t, int8, 8, "INT8");
RKNNXX_ELEMENT(std::uint8_t, uint8, 8, "UINT8");
RKNNXX_ELEMENT(std::int16_t, int16, 16, "INT16");
RKNNXX_ELEMENT(std::uint16_t, uint16, 16, "UINT16");
RKNNXX_ELEMENT(std::int32_t, int32, 32, "INT32");
RKNNXX_ELEMENT(std::uint32_t, uint32, 32, "UINT32");
RKNNXX_ELEMENT(std::int64_t, int64, 64, "INT64");
RKNNXX_ELEMENT(bool, boolean, 8, "BOOL");
RKNNXX_ELEMENT(Int4, int4, 4, "INT4");
RKNNXX_ELEMENT(BFloat16, bfloat16, 16, "BF16");
#undef RKNNXX_ELEMENT

// A tensor element: one of the twelve types above (cv-qualifiers ignored).
template <class T>
concept TensorElement = requires {
  { element_traits<std::remove_cv_t<T>>::type } -> std::convertible_to<TensorType>;
};

// Addressable elements occupy whole bytes; Int4 does not (two share a byte: see Int4x2).
template <class T>
concept ByteAddressableElement = TensorElement<T> && element_traits<std::remove_cv_t<T>>::bits % 8 == 0;

namespace detail {
template <TensorType> struct element_of;
template <> struct element_of<TensorType::float32> {
  using type = float;
};
template <> struct element_of<TensorType::float16> {
  using type = Float16;
};
template <> struct element_of<TensorType::int8> {
  using type = std::int8_t;
};
template <> struct element_of<TensorType::uint8> {
  using type = std::uint8_t;
};
template <> struct element_of<TensorType::int16> {
  using type = std::int16_t;
};
template <> struct element_of<TensorType::uint16> {
  using type = std::uint16_t;
};
template <> struct element_of<TensorType::int32> {
  using type = std::int32_t;
};
template <> struct element_of<TensorType::uint32> {
  using type = std::uint32_t;
};
template <> struct element_of<TensorType::int64> {
  using type = std::int64_t;
};
template <> struct element_of<TensorType::boolean> {
  using type = bool;
};
template <> struct element_of<TensorType::int4> {
  using type = Int4;
};
template <> struct element_of<TensorType::bfloat16> {
  using type = BFloat16;
};
}  // namespace detail

// The C++ element type of a TensorType value.
template <TensorType T> using element_t = typename detail::element_of<T>::type;

template <TensorElement T> inline constexpr TensorType tensor_type_of = element_traits<std::remove_cv_t<T>>::type;

// Run-time traits of a TensorType value.
[[nodiscard]] constexpr bool is_valid(TensorType t) noexcept {
  return static_cast<std::uint32_t>(t) < RKNN_TENSOR_TYPE_MAX;
}

namespace detail {
template <class F> constexpr decltype(auto) visit_type(TensorType t, F&& f) {
  switch (t) {
    case TensorType::float32: return f(element_traits<float>{});
    case TensorType::float16: return f(element_traits<Float16>{});
    case TensorType::int8: return f(element_traits<std::int8_t>{});
    case TensorType::uint8: return f(element_traits<std::uint8_t>{});
    case TensorType::int16: return f(element_traits<std::int16_t>{});
    case TensorType::uint16: return f(element_traits<std::uint16_t>{});
    case TensorType::int32: return f(element_traits<std::int32_t>{});
    case TensorType::uint32: return f(element_traits<std::uint32_t>{});
    case TensorType::int64: return f(element_traits<std::int64_t>{});
    case TensorType::boolean: return f(element_traits<bool>{});
    case TensorType::int4: return f(element_traits<Int4>{});
    case TensorType::bfloat16: return f(element_traits<BFloat16>{});
  }
  fail("rknnxx::TensorType", "tensor type value {} is not an rknn_tensor_type (0..{})", static_cast<std::uint32_t>(t),
       RKNN_TENSOR_TYPE_MAX - 1);
}
}  // namespace detail

// Calls f(element_traits<T>{}) for the element type T of a run-time TensorType; refuses values
// outside the enum with an error naming the value.
template <class F> constexpr decltype(auto) visit_element_type(TensorType t, F&& f) { return detail::visit_type(t, f); }

[[nodiscard]] constexpr std::size_t bits_of(TensorType t) {
  return detail::visit_type(t, [](auto tr) { return decltype(tr)::bits; });
}
[[nodiscard]] constexpr std::string_view name_of(TensorType t) noexcept {
  return is_valid(t) ? detail::visit_type(t, [](auto tr) { return decltype(tr)::name; }) : std::string_view("UNKNOW");
}
namespace detail {
// Checked: a wrapped bit count would turn a huge padded span into a small (even zero) byte size.
constexpr std::uint64_t bytes_for_bits(std::uint64_t n, std::uint64_t bits) {
  const std::uint64_t total = checked_mul(n, bits, "the bit count of the elements");
  return total / 8 + (total % 8 != 0);
}
}  // namespace detail

// Bytes occupied by n elements, sub-byte types packed and rounded up to whole bytes.
[[nodiscard]] constexpr std::uint64_t bytes_for(TensorType t, std::uint64_t n) {
  return detail::bytes_for_bits(n, bits_of(t));
}
template <TensorElement T> [[nodiscard]] constexpr std::uint64_t bytes_for(std::uint64_t n) {
  return detail::bytes_for_bits(n, element_traits<std::remove_cv_t<T>>::bits);
}

// Reads the display name back ("FP16" -> float16), for logs and configuration files.
[[nodiscard]] constexpr std::optional<TensorType> tensor_type_from_name(std::string_view s) noexcept {
  for (auto t : all_tensor_types)
    if (name_of(t) == s) return t;
  return std::nullopt;
}

// Every element type agrees with the ABI and with the C helper's names.
static_assert(sizeof(float) == 4 && sizeof(bool) == 1 && sizeof(Float16) == 2 && sizeof(BFloat16) == 2);
static_assert(element_traits<Int4>::bits == 4 && bytes_for<Int4>(5) == 3);

}  // namespace rknnxx
