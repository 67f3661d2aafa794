#include <doctest/doctest.h>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/input_conversion.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace rknnxx;

// Exact references computed independently of PackedFloat: a binary16 decoded by arithmetic.
static double decode_half(std::uint16_t b) {
  const int e = (b >> 10) & 0x1f;
  const int m = b & 0x3ff;
  const double s = (b & 0x8000) ? -1.0 : 1.0;
  if (e == 0) return s * std::ldexp(m, -24);
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : s * INFINITY;
  return s * std::ldexp(1024 + m, e - 25);
}

TEST_CASE("float16: widening is exact for all 65536 bit patterns") {
  int mismatches = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = Float16::from_bits(static_cast<std::uint16_t>(b));
    const double want = decode_half(static_cast<std::uint16_t>(b));
    const float got = h;
    if (std::isnan(want) ? !std::isnan(got) : double(got) != want) ++mismatches;
    if (std::isnan(want) != h.is_nan()) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("float16: narrowing round-trips and rounds to nearest, ties to even") {
  int mismatches = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto h = Float16::from_bits(static_cast<std::uint16_t>(b));
    if (h.is_nan()) continue;
    if (Float16(float(h)).bits() != b) ++mismatches;
    if (Float16(h.to_double()).bits() != b) ++mismatches;
  }
  CHECK(mismatches == 0);
  // Midpoints between consecutive positive finite halves round to the even neighbour.
  int wrong_ties = 0;
  for (std::uint16_t b = 0; b < 0x7bff; ++b) {
    const double mid = (decode_half(b) + decode_half(static_cast<std::uint16_t>(b + 1))) / 2;
    const std::uint16_t even = (b & 1) ? static_cast<std::uint16_t>(b + 1) : b;
    if (Float16(mid).bits() != even) ++wrong_ties;
    if (Float16(static_cast<float>(mid)).bits() != even) ++wrong_ties;  // mid is exact in float
    // Just above the midpoint goes up, just below goes down.
    if (Float16(std::nextafter(mid, 1e9)).bits() != b + 1) ++wrong_ties;
    if (Float16(std::nextafter(mid, -1e9)).bits() != b) ++wrong_ties;
  }
  CHECK(wrong_ties == 0);
}

TEST_CASE("float16: specials, overflow, underflow and no double rounding through float") {
  static_assert(Float16(1.0f).bits() == 0x3c00);
  static_assert(Float16(-2.0f).bits() == 0xc000);
  static_assert(Float16(65504.0f).bits() == 0x7bff);
  static_assert(Float16(65520.0f).is_inf());  // the midpoint to 2^16 rounds up to infinity
  static_assert(!Float16(65519.99f).is_inf());
  static_assert(Float16(1e-8f).bits() == 0);  // below half the smallest subnormal
  static_assert(Float16(3e-8f).bits() == 1);  // above it
  static_assert(Float16(-0.0f).bits() == 0x8000);
  CHECK(Float16(std::numeric_limits<float>::quiet_NaN()).is_nan());
  CHECK(Float16(-std::numeric_limits<float>::infinity()).bits() == 0xfc00);
  // 1 + 2^-11 + 2^-30: as a double it is just above a tie and must round up; through float it
  // would first become the tie 1 + 2^-11 and round down to even.
  const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30);
  CHECK(Float16(above_tie).bits() == 0x3c01);
  CHECK(Float16(static_cast<float>(1.0 + std::ldexp(1.0, -11))).bits() == 0x3c00);
  // IEEE comparison.
  CHECK(Float16(0.0f) == Float16(-0.0f));
  CHECK_FALSE(Float16::quiet_nan() == Float16::quiet_nan());
  CHECK(Float16(1.0f) < Float16(1.5f));
  CHECK(std::numeric_limits<Float16>::max() == Float16(65504.0f));
  CHECK(float(std::numeric_limits<Float16>::epsilon()) == std::ldexp(1.0f, -10));
}

TEST_CASE("bfloat16: the upper half of binary32, rounded to nearest even") {
  int mismatches = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto v = BFloat16::from_bits(static_cast<std::uint16_t>(b));
    const float f = v;
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if (u != (b << 16)) ++mismatches;
    if (!v.is_nan() && BFloat16(f).bits() != b) ++mismatches;
  }
  CHECK(mismatches == 0);
  static_assert(BFloat16(1.0f).bits() == 0x3f80);
  // 1 + 2^-8 is the tie between 0x3f80 and 0x3f81: to even. 1 + 3*2^-8 ties to 0x3f82.
  CHECK(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits() == 0x3f80);
  CHECK(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits() == 0x3f82);
  CHECK(BFloat16(std::numeric_limits<float>::max()).is_inf());  // rounds past the largest bfloat16
  CHECK(BFloat16(std::numeric_limits<float>::quiet_NaN()).is_nan());
  CHECK(BFloat16(std::numeric_limits<float>::denorm_min()).bits() == 0);
}

TEST_CASE("int4: exact range, packing low nibble first") {
  static_assert(Int4(-8).value() == -8 && Int4(7).value() == 7);
  for (int v = -8; v <= 7; ++v) {
    CHECK(Int4::from_nibble(Int4(v).nibble()).value() == v);
  }
  constexpr Int4x2 byte{Int4(-1), Int4(3)};
  static_assert(byte.byte() == 0x3f);
  static_assert(byte.even() == Int4(-1) && byte.odd() == Int4(3));
  Int4x2 b;
  b.set(1, Int4(-8));
  b.set(0, Int4(5));
  CHECK(b.byte() == 0x85);
  CHECK(b[0] == Int4(5));
  CHECK(b[1] == Int4(-8));
  CHECK_THROWS_WITH_AS(Int4(8), doctest::Contains("int4 value 8 is outside [-8, 7]"), Error);
  CHECK_THROWS_AS(Int4(-9), Error);
}

TEST_CASE("element traits: size, name and ABI value per type") {
  static_assert(element_traits<float>::type == TensorType::float32);
  static_assert(std::is_same_v<element_t<TensorType::float16>, Float16>);
  static_assert(std::is_same_v<element_t<TensorType::int8>, std::int8_t>);
  static_assert(std::is_same_v<element_t<TensorType::boolean>, bool>);
  static_assert(std::is_same_v<element_t<TensorType::int4>, Int4>);
  static_assert(TensorElement<const BFloat16> && TensorElement<std::int64_t>);
  static_assert(!TensorElement<double> && !TensorElement<char> && !TensorElement<Int4x2>);
  static_assert(ByteAddressableElement<std::uint8_t> && !ByteAddressableElement<Int4>);
  static_assert(tensor_type_of<std::uint16_t> == TensorType::uint16);
  CHECK(bits_of(TensorType::int64) == 64);
  CHECK(bits_of(TensorType::boolean) == 8);
  CHECK(bytes_for(TensorType::int4, 7) == 4);
  CHECK(bytes_for(TensorType::float16, 7) == 14);
  CHECK(bytes_for(TensorType::int4, UINT64_MAX / 4) == UINT64_MAX / 8 + 1);  // rounded up, no overflow
  CHECK_THROWS_WITH_AS((void)bytes_for(TensorType::float32, std::uint64_t{1} << 59),
                       doctest::Contains("the bit count of the elements overflows 64 bits (576460752303423488 x 32)"),
                       Error);
  CHECK_THROWS_AS((void)bytes_for<std::uint8_t>(std::uint64_t{1} << 61), Error);
  CHECK(name_of(TensorType::bfloat16) == "BF16");
  CHECK(name_of(static_cast<TensorType>(12)) == "UNKNOW");
  CHECK(tensor_type_from_name("INT4") == TensorType::int4);
  CHECK_FALSE(tensor_type_from_name("FP64").has_value());
  // Each enum value maps to a type whose traits map back to it.
  for (auto t : all_tensor_types) CHECK(visit_element_type(t, [](auto tr) { return decltype(tr)::type; }) == t);
  CHECK_THROWS_WITH_AS((void)bits_of(static_cast<TensorType>(42)), doctest::Contains("tensor type value 42"), Error);
}

TEST_CASE("input conversions: the table of docs/c-interface.md#input-conversions") {
  using T = TensorType;
  static_assert(input_accepts(T::int8, T::uint8) && input_accepts(T::int8, T::float32) &&
                input_accepts(T::int8, T::int8));
  static_assert(!input_accepts(T::int8, T::float16) && !input_accepts(T::int8, T::int16));
  static_assert(input_accepts(T::int16, T::uint8) && input_accepts(T::int16, T::float32) &&
                !input_accepts(T::int16, T::int8));
  static_assert(input_accepts(T::float16, T::uint8) && input_accepts(T::float16, T::float16) &&
                input_accepts(T::float16, T::float32));
  static_assert(!input_accepts(T::float16, T::int8) && !input_accepts(T::float16, T::int32));
  static_assert(input_accepts(T::int64, T::int64) && !input_accepts(T::int64, T::int32));
  static_assert(input_accepts(T::boolean, T::boolean) && !input_accepts(T::boolean, T::uint8));
}
