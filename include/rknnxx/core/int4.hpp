#pragma once
// Int4: a signed 4-bit integer (-8..7), the element of RKNN_TENSOR_INT4 tensors, and Int4x2, the
// byte that stores two of them. The runtime packs the even element in the low nibble and the odd
// element in the high nibble (docs/c-interface.md#int4-packing).

#include <rknnxx/core/error.hpp>

#include <cstdint>

namespace rknnxx {

class Int4 {
public:
  static constexpr int min = -8;
  static constexpr int max = 7;

  constexpr Int4() noexcept = default;
  // Exact: a value outside -8..7 is refused (at compile time, it does not compile).
  constexpr explicit Int4(int v) : value_(static_cast<std::int8_t>(v)) {
    if (v < min || v > max) detail::fail("rknnxx::Int4", "int4 value {} is outside [-8, 7]", v);
  }
  // Reads a nibble (two's complement in the low 4 bits).
  [[nodiscard]] static constexpr Int4 from_nibble(std::uint8_t nibble) noexcept {
    Int4 r;
    r.value_ = static_cast<std::int8_t>((nibble & 0x8u) ? int(nibble & 0xfu) - 16 : int(nibble & 0xfu));
    return r;
  }
  [[nodiscard]] constexpr std::uint8_t nibble() const noexcept { return static_cast<std::uint8_t>(value_ & 0xf); }
  [[nodiscard]] constexpr int value() const noexcept { return value_; }
  constexpr operator int() const noexcept { return value_; }  // widening is exact

  friend constexpr bool operator==(Int4, Int4) noexcept = default;
  friend constexpr auto operator<=>(Int4, Int4) noexcept = default;

private:
  std::int8_t value_ = 0;
};

// One byte of a packed int4 tensor: elements 2k (low nibble) and 2k+1 (high nibble).
class Int4x2 {
public:
  constexpr Int4x2() noexcept = default;
  constexpr Int4x2(Int4 even, Int4 odd) noexcept
      : byte_(static_cast<std::uint8_t>(even.nibble() | (odd.nibble() << 4))) {}
  [[nodiscard]] static constexpr Int4x2 from_byte(std::uint8_t b) noexcept {
    Int4x2 r;
    r.byte_ = b;
    return r;
  }
  [[nodiscard]] constexpr std::uint8_t byte() const noexcept { return byte_; }
  [[nodiscard]] constexpr Int4 even() const noexcept { return Int4::from_nibble(byte_ & 0xfu); }
  [[nodiscard]] constexpr Int4 odd() const noexcept { return Int4::from_nibble(static_cast<std::uint8_t>(byte_ >> 4)); }
  [[nodiscard]] constexpr Int4 operator[](std::size_t i) const noexcept { return (i & 1u) ? odd() : even(); }
  constexpr void set(std::size_t i, Int4 v) noexcept {
    byte_ = (i & 1u) ? static_cast<std::uint8_t>((byte_ & 0x0fu) | (v.nibble() << 4))
                     : static_cast<std::uint8_t>((byte_ & 0xf0u) | v.nibble());
  }
  friend constexpr bool operator==(Int4x2, Int4x2) noexcept = default;

private:
  std::uint8_t byte_ = 0;
};
static_assert(sizeof(Int4x2) == 1);

}  // namespace rknnxx
