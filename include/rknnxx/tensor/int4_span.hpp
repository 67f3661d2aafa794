#pragma once
// Int4Span: a view of packed int4 elements, two to a byte (element 2k in the low nibble of byte k,
// 2k + 1 in the high one: docs/c-interface.md#int4-packing), read and written by element index,
// never by byte. What TensorView is for whole-byte elements, for RKNN_TENSOR_INT4 buffers (the
// matmul's int4 A and B).
//
//   std::vector<Int4x2> bytes(bytes_for<Int4>(5));
//   Int4Span q(bytes.data(), 5);
//   q.set(3, Int4(-2));  q[3] == Int4(-2);  q.size_bytes() == 3

#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/int4.hpp>

#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>

namespace rknnxx {

template <class B>
  requires std::same_as<std::remove_const_t<B>, Int4x2>
class Int4Span {
public:
  constexpr Int4Span() noexcept = default;
  constexpr Int4Span(B* bytes, std::size_t count) noexcept : bytes_(bytes), count_(count) {}
  // Over a buffer, refusing one too short for `count` elements.
  constexpr Int4Span(std::span<B> bytes, std::size_t count) : Int4Span(bytes.data(), count) {
    if (bytes.size() < bytes_for<Int4>(count))
      detail::fail("rknnxx::Int4Span", "{} int4 elements need {} bytes, the buffer holds {}", count,
                   bytes_for<Int4>(count), bytes.size());
  }
  // Views of const bytes from views of mutable ones.
  template <class U>
    requires(std::is_same_v<const U, B> && !std::is_same_v<U, B>)
  constexpr Int4Span(const Int4Span<U>& other) noexcept  // NOLINT: implicit, as span<T> to span<const T>
      : Int4Span(other.data(), other.size()) {}

  [[nodiscard]] constexpr B* data() const noexcept { return bytes_; }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return count_; }
  [[nodiscard]] constexpr std::size_t size_bytes() const noexcept { return bytes_for<Int4>(count_); }

  [[nodiscard]] constexpr Int4 operator[](std::size_t i) const noexcept { return bytes_[i / 2][i]; }
  // Writes one element; its neighbour in the same byte keeps its value.
  constexpr void set(std::size_t i, Int4 v) const noexcept
    requires(!std::is_const_v<B>)
  {
    bytes_[i / 2].set(i, v);
  }

private:
  B* bytes_ = nullptr;
  std::size_t count_ = 0;
};

template <class B> Int4Span(B*, std::size_t) -> Int4Span<B>;
template <class B> Int4Span(std::span<B>, std::size_t) -> Int4Span<B>;

}  // namespace rknnxx
