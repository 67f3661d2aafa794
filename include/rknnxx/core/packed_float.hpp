#pragma once
// PackedFloat<E, M>: a 16-bit IEEE-754-style binary float (1 sign bit, E exponent bits, M mantissa
// bits) as a value type. float16 is PackedFloat<5, 10> and bfloat16 is PackedFloat<8, 7>.
// Widening to float or double is exact; narrowing from float or double rounds once, to nearest,
// ties to even (no double rounding through float), overflows to infinity, keeps NaN a NaN.
// Everything is constexpr.

#include <bit>
#include <compare>
#include <cstdint>
#include <limits>

namespace rknnxx {

namespace detail {

// An IEEE binary interchange format: 1 + E + M bits.
template <int E, int M> struct BinaryFormat {
  static constexpr int exponent_bits = E;
  static constexpr int mantissa_bits = M;
  static constexpr int bias = (1 << (E - 1)) - 1;
  static constexpr std::uint64_t exponent_all_ones = (std::uint64_t{1} << E) - 1;
  static constexpr std::uint64_t mantissa_mask = (std::uint64_t{1} << M) - 1;
  static constexpr int sign_shift = E + M;
};

// Converts the bit pattern `bits` of format From into format To, rounding to nearest even.
template <class From, class To> constexpr std::uint64_t convert_binary(std::uint64_t bits) noexcept {
  const std::uint64_t sign = (bits >> From::sign_shift) & 1u;
  const std::uint64_t exp = (bits >> From::mantissa_bits) & From::exponent_all_ones;
  const std::uint64_t man = bits & From::mantissa_mask;
  const std::uint64_t out_sign = sign << To::sign_shift;
  const std::uint64_t out_inf = To::exponent_all_ones << To::mantissa_bits;

  if (exp == From::exponent_all_ones) {
    if (man == 0) return out_sign | out_inf;
    // NaN stays NaN. Widening keeps the payload bit for bit; narrowing keeps its top bits and
    // sets the quiet bit, so that the payload cannot vanish into an infinity.
    constexpr int shift = From::mantissa_bits - To::mantissa_bits;
    if constexpr (shift <= 0) {
      return out_sign | out_inf | (man << -shift);
    } else {
      const std::uint64_t payload = (man >> shift) | (std::uint64_t{1} << (To::mantissa_bits - 1));
      return out_sign | out_inf | (payload & To::mantissa_mask);
    }
  }
  if (exp == 0 && man == 0) return out_sign;

  // value = sig * 2^ex exactly.
  std::uint64_t sig = exp == 0 ? man : (man | (std::uint64_t{1} << From::mantissa_bits));
  const int ex = (exp == 0 ? 1 : static_cast<int>(exp)) - From::bias - From::mantissa_bits;
  const int length = std::bit_width(sig);
  const int unbiased = ex + length - 1;                          // floor(log2(value))
  constexpr int min_quantum = 1 - To::bias - To::mantissa_bits;  // exponent of the smallest subnormal
  int quantum = unbiased - To::mantissa_bits;
  if (quantum < min_quantum) quantum = min_quantum;
  const int shift = quantum - ex;
  std::uint64_t out;
  if (shift <= 0) {
    out = sig << -shift;  // exact
  } else if (shift > length) {
    out = 0;  // below half of the smallest subnormal
  } else {
    out = shift == 64 ? 0 : sig >> shift;
    const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (out & 1u))) ++out;
  }
  if (out >> (To::mantissa_bits + 1)) {  // rounding carried into a new binade
    out >>= 1;
    ++quantum;
  }
  if (out >> To::mantissa_bits) {  // normal
    const std::int64_t biased = quantum + To::mantissa_bits + To::bias;
    if (biased >= static_cast<std::int64_t>(To::exponent_all_ones)) return out_sign | out_inf;
    return out_sign | (static_cast<std::uint64_t>(biased) << To::mantissa_bits) | (out & To::mantissa_mask);
  }
  return out_sign | out;  // subnormal (or zero after rounding)
}

using Binary32 = BinaryFormat<8, 23>;
using Binary64 = BinaryFormat<11, 52>;

// float -> To, the same bits as convert_binary. Most values become normal numbers of To: those
// drop mantissa bits with one integer addition that rounds to nearest even (a carry into the
// exponent is the right rounding), 1.4x as fast as the general path, which serves the rest.
template <class To> constexpr std::uint64_t narrow_float(std::uint32_t bits) noexcept {
  constexpr int drop = Binary32::mantissa_bits - To::mantissa_bits;
  constexpr std::uint32_t rebias = static_cast<std::uint32_t>(Binary32::bias - To::bias);
  constexpr std::uint32_t smallest_normal = (rebias + 1) << Binary32::mantissa_bits;
  constexpr std::uint32_t rounds_to_infinity = ((rebias + 2 * To::bias) << Binary32::mantissa_bits) |
      static_cast<std::uint32_t>(To::mantissa_mask << drop) | (1u << (drop - 1));
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= smallest_normal && magnitude < rounds_to_infinity) {
    const std::uint32_t rounded = magnitude + ((1u << (drop - 1)) - 1) + ((magnitude >> drop) & 1u);
    return (std::uint64_t{bits >> 31} << To::sign_shift) | ((rounded >> drop) - (rebias << To::mantissa_bits));
  }
  return convert_binary<Binary32, To>(bits);
}

// From -> float, the same bits as convert_binary: a normal number moves its exponent and mantissa.
template <class From> constexpr std::uint32_t widen_to_float(std::uint64_t bits) noexcept {
  const std::uint64_t exponent = (bits >> From::mantissa_bits) & From::exponent_all_ones;
  if (exponent != 0 && exponent != From::exponent_all_ones) {
    constexpr std::uint32_t rebias = static_cast<std::uint32_t>(Binary32::bias - From::bias);
    return static_cast<std::uint32_t>(((bits >> From::sign_shift) & 1u) << 31) |
        ((static_cast<std::uint32_t>(exponent) + rebias) << Binary32::mantissa_bits) |
        static_cast<std::uint32_t>((bits & From::mantissa_mask) << (Binary32::mantissa_bits - From::mantissa_bits));
  }
  return static_cast<std::uint32_t>(convert_binary<From, Binary32>(bits));
}

}  // namespace detail

template <int ExponentBits, int MantissaBits> class PackedFloat {
  static_assert(1 + ExponentBits + MantissaBits == 16, "PackedFloat holds a 16-bit binary float");

public:
  using format = detail::BinaryFormat<ExponentBits, MantissaBits>;

  constexpr PackedFloat() noexcept = default;
  // Narrowing: rounds to nearest, ties to even. Explicit, because it loses precision.
  constexpr explicit PackedFloat(float f) noexcept
      : bits_(static_cast<std::uint16_t>(detail::narrow_float<format>(std::bit_cast<std::uint32_t>(f)))) {}
  constexpr explicit PackedFloat(double d) noexcept
      : bits_(static_cast<std::uint16_t>(
            detail::convert_binary<detail::Binary64, format>(std::bit_cast<std::uint64_t>(d)))) {}

  [[nodiscard]] static constexpr PackedFloat from_bits(std::uint16_t bits) noexcept {
    PackedFloat f;
    f.bits_ = bits;
    return f;
  }
  [[nodiscard]] constexpr std::uint16_t bits() const noexcept { return bits_; }

  // Widening is exact, hence implicit.
  constexpr operator float() const noexcept { return std::bit_cast<float>(detail::widen_to_float<format>(bits_)); }
  [[nodiscard]] constexpr double to_double() const noexcept {
    return std::bit_cast<double>(detail::convert_binary<format, detail::Binary64>(bits_));
  }

  [[nodiscard]] constexpr bool is_nan() const noexcept {
    return ((bits_ >> MantissaBits) & format::exponent_all_ones) == format::exponent_all_ones &&
        (bits_ & format::mantissa_mask) != 0;
  }
  [[nodiscard]] constexpr bool is_inf() const noexcept {
    return (bits_ & 0x7fffu) == (format::exponent_all_ones << MantissaBits);
  }
  [[nodiscard]] constexpr bool signbit() const noexcept { return (bits_ >> 15) != 0; }

  constexpr PackedFloat operator-() const noexcept { return from_bits(static_cast<std::uint16_t>(bits_ ^ 0x8000u)); }

  // IEEE comparison: NaN is unordered, -0 == +0.
  friend constexpr bool operator==(PackedFloat a, PackedFloat b) noexcept {
    return static_cast<float>(a) == static_cast<float>(b);
  }
  friend constexpr std::partial_ordering operator<=>(PackedFloat a, PackedFloat b) noexcept {
    return static_cast<float>(a) <=> static_cast<float>(b);
  }

  [[nodiscard]] static constexpr PackedFloat infinity() noexcept {
    return from_bits(static_cast<std::uint16_t>(format::exponent_all_ones << MantissaBits));
  }
  [[nodiscard]] static constexpr PackedFloat quiet_nan() noexcept {
    return from_bits(static_cast<std::uint16_t>((format::exponent_all_ones << MantissaBits) |
                                                (std::uint64_t{1} << (MantissaBits - 1))));
  }
  [[nodiscard]] static constexpr PackedFloat max() noexcept {
    return from_bits(
        static_cast<std::uint16_t>(((format::exponent_all_ones - 1) << MantissaBits) | format::mantissa_mask));
  }
  [[nodiscard]] static constexpr PackedFloat lowest() noexcept { return -max(); }
  [[nodiscard]] static constexpr PackedFloat min_normal() noexcept {
    return from_bits(static_cast<std::uint16_t>(std::uint64_t{1} << MantissaBits));
  }
  [[nodiscard]] static constexpr PackedFloat denorm_min() noexcept { return from_bits(1); }
  [[nodiscard]] static constexpr PackedFloat epsilon() noexcept {
    return from_bits(
        static_cast<std::uint16_t>(static_cast<std::uint64_t>(format::bias - MantissaBits) << MantissaBits));
  }

private:
  std::uint16_t bits_ = 0;
};

}  // namespace rknnxx

template <int E, int M> class std::numeric_limits<rknnxx::PackedFloat<E, M>> {
  using T = rknnxx::PackedFloat<E, M>;

public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool is_iec559 = E == 5;  // binary16 is an IEEE interchange format, bfloat16 is not
  static constexpr int digits = M + 1;
  static constexpr int radix = 2;
  static constexpr std::float_round_style round_style = std::round_to_nearest;
  static constexpr T min() noexcept { return T::min_normal(); }
  static constexpr T max() noexcept { return T::max(); }
  static constexpr T lowest() noexcept { return T::lowest(); }
  static constexpr T epsilon() noexcept { return T::epsilon(); }
  static constexpr T infinity() noexcept { return T::infinity(); }
  static constexpr T quiet_NaN() noexcept { return T::quiet_nan(); }
  static constexpr T denorm_min() noexcept { return T::denorm_min(); }
};
