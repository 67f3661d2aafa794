#pragma once
// Conversions between tensor buffers: copy(source view, destination view) moves every logical
// element (n, c, h, w) from one layout, element type and quantization into another:
//  - NHWC with w_stride/h_stride padding rows (the zero-copy input layout; docs/c-interface.md#strides-and-sizes),
//  - NC1HWC2 blocking and unblocking (docs/c-interface.md#nc1hwc2; per-batch base offsets, any C % C2),
//  - NCHW and UNDEFINED (dense, any rank in the model's order),
//  - element types, with affine quantization q = clamp(round(x / scale) + zp) and
//    dequantization x = (q - zp) * scale (docs/c-interface.md#quantization); integers round to nearest, ties to
//    even (detail::round_half_even), and saturate; NaN becomes 0.
// Same type, same quantization and the same blocking take the fast path: one memcpy per row (or
// one for the whole tensor when both are dense); the same values in another order move as bytes,
// one load and store per element. Padding (stride pixels, lanes c >= C) is never written, except
// that a row copy between two NC1HWC2 buffers moves the source's padding lanes with the row.
// Free functions, usable without a Context (the host runtime's codec may share them).
//
//   copy(nhwc_view(rgb, {1, 3, h, w}), bound_input_view);     // the demos' w_stride row copy
//   copy(native_nc1hwc2_output, nchw_view(floats.data(), e)); // unblock + dequantize

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...
#include <rknnxx/tensor/view.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace rknnxx {

namespace detail {

// Element offsets of logical (n, c, h, w), for every layout at once: c splits into a block
// c / c2 (stride c1) and a lane c % c2 (stride lane); c2 == 1 for the unblocked layouts.
struct Walk {
  Extents4 e;
  std::size_t n = 0, c1 = 0, lane = 0, h = 0, w = 0;
  std::uint32_t c2 = 1;
  bool dense = false;                       // rows of every (n, c, h) follow each other without gaps
  TensorFormat order = TensorFormat::nchw;  // the memory order the fast path follows

  [[nodiscard]] std::size_t offset(std::size_t in, std::size_t ic, std::size_t ih, std::size_t iw) const noexcept {
    return in * n + (ic / c2) * c1 + (ic % c2) * lane + ih * h + iw * w;
  }
};

// A mapping's steps, read from the mapping itself: every layout is affine in n, h, w, and in c
// within a block of c2 channels, so the offset of one unit step from the origin is its stride.
template <class Mapping> Walk walk_of_mapping(const Mapping& m, std::uint32_t c2, TensorFormat order) {
  Walk k;
  k.e = m.extents();
  k.c2 = c2;
  k.n = m(1, 0, 0, 0);
  k.c1 = m(0, c2, 0, 0);
  k.lane = c2 > 1 ? m(0, 1, 0, 0) : 0;
  k.h = m(0, 0, 1, 0);
  k.w = m(0, 0, 0, 1);
  k.dense = m.is_exhaustive();
  k.order = order;
  return k;
}

// walk_of, load_fn, store_fn, move_elements and copy are templates of nothing (`template <class = void>`):
// a translation unit compiles the conversions (their element types, tiles and tables) only when it copies a
// tensor, not whenever it includes the umbrella (docs/separate-compilation.md#compile-cost).
template <class = void> Walk walk_of(const RuntimeLayout& l, std::string_view who) {
  const Dims& d = l.dims();
  switch (l.format()) {
    case TensorFormat::nhwc: return walk_of_mapping(l.mapping<layout::NHWC>(), 1, TensorFormat::nhwc);
    case TensorFormat::nc1hwc2: {
      const auto m = l.mapping<layout::NC1HWC2>();
      return walk_of_mapping(m, m.c2(), TensorFormat::nc1hwc2);
    }
    case TensorFormat::nchw:
    case TensorFormat::undefined: {
      // UNDEFINED is the model's own order: a 4-D one is (n, c, h, w) like NCHW; other ranks are one row.
      if (d.rank() == 4)
        return walk_of_mapping(layout::NCHW::mapping(Extents4{d[0], d[1], d[2], d[3]}), 1, TensorFormat::nchw);
      const std::uint64_t n = d.elements();
      if (n > std::numeric_limits<std::uint32_t>::max()) fail(who, "{} elements exceed 32 bits", n);
      return walk_of_mapping(layout::NCHW::mapping(Extents4{1, 1, 1, static_cast<std::uint32_t>(n)}), 1,
                             TensorFormat::nchw);
    }
  }
  fail(who, "format value {} is not an rknn_tensor_format", static_cast<unsigned>(l.format()));
}

using LoadFn = double (*)(const std::byte*, std::size_t) noexcept;
using StoreFn = void (*)(std::byte*, std::size_t, double) noexcept;

// Element i of a buffer of T, as double (exact for every element type).
template <class T> double load_as(const std::byte* p, std::size_t i) noexcept {
  if constexpr (std::is_same_v<T, bool>) {
    // A byte, not a bool: a buffer from C may hold any non-zero byte for true.
    std::uint8_t b;
    std::memcpy(&b, p + i, 1);
    return b != 0 ? 1.0 : 0.0;
  } else {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return static_cast<double>(static_cast<std::conditional_t<std::is_integral_v<T>, T, float>>(v));
  }
}

template <class T> void store_as(std::byte* p, std::size_t i, double x) noexcept {
  T v;
  if constexpr (std::is_same_v<T, bool>) {
    v = x != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    // Round to nearest, ties to even, then saturate; NaN becomes 0.
    const double r = __builtin_isnan(x) ? 0.0 : round_half_even(x);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    v = r <= lo ? std::numeric_limits<T>::lowest() : r >= hi ? std::numeric_limits<T>::max() : static_cast<T>(r);
  } else if constexpr (std::is_same_v<T, float>) {
    v = static_cast<float>(x);
  } else {
    v = T(x);  // Float16 / BFloat16: one rounding from double
  }
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

inline std::size_t element_bytes(TensorType t, std::string_view who) {
  const std::size_t bits = bits_of(t);
  if (bits % 8 != 0)
    fail(who, "{} tensors are packed below one byte per element: convert them with the int4 helpers", name_of(t));
  return bits / 8;
}

template <class F> auto visit_byte_type(TensorType t, F&& f) {
  switch (t) {
    case TensorType::float32: return f(static_cast<float*>(nullptr));
    case TensorType::float16: return f(static_cast<Float16*>(nullptr));
    case TensorType::bfloat16: return f(static_cast<BFloat16*>(nullptr));
    case TensorType::int8: return f(static_cast<std::int8_t*>(nullptr));
    case TensorType::uint8: return f(static_cast<std::uint8_t*>(nullptr));
    case TensorType::int16: return f(static_cast<std::int16_t*>(nullptr));
    case TensorType::uint16: return f(static_cast<std::uint16_t*>(nullptr));
    case TensorType::int32: return f(static_cast<std::int32_t*>(nullptr));
    case TensorType::uint32: return f(static_cast<std::uint32_t*>(nullptr));
    case TensorType::int64: return f(static_cast<std::int64_t*>(nullptr));
    case TensorType::boolean: return f(static_cast<bool*>(nullptr));
    case TensorType::int4: break;
  }
  fail("rknnxx::copy", "no element conversion for {}", name_of(t));
}

// The load and store of one element type, resolved once per tensor rather than per element.
template <class = void> LoadFn load_fn(TensorType t) {
  return visit_byte_type(t, [](auto* p) -> LoadFn { return &load_as<std::remove_pointer_t<decltype(p)>>; });
}
template <class = void> StoreFn store_fn(TensorType t) {
  return visit_byte_type(t, [](auto* p) -> StoreFn { return &store_as<std::remove_pointer_t<decltype(p)>>; });
}

inline std::size_t last_offset(const Walk& k) { return k.offset(k.e.n - 1, k.e.c - 1, k.e.h - 1, k.e.w - 1); }

// Calls f(source offset, destination offset) for every logical element, in runs of 16 pixels of
// every channel: both sides' lines stay in the cache whichever side is strided (unblocking NC1HWC2
// reads C2 apart, NCHW -> NHWC writes C apart). Channel c sits at block c / c2 and lane c % c2 of
// each side; both advance by counting, without a division per element.
template <class F> void for_each_element(const Walk& s, const Walk& d, F&& f) {
  constexpr std::size_t run = 16;
  const Extents4 e = s.e;
  for (std::size_t n = 0; n < e.n; ++n)
    for (std::size_t h = 0; h < e.h; ++h)
      for (std::size_t w0 = 0; w0 < e.w; w0 += run) {
        const std::size_t w_count = std::min<std::size_t>(run, e.w - w0);
        std::size_t s_row = s.offset(n, 0, h, w0), d_row = d.offset(n, 0, h, w0);
        std::size_t s_lane = 0, d_lane = 0;
        for (std::size_t c = 0; c < e.c; ++c) {
          for (std::size_t w = 0; w < w_count; ++w) f(s_row + w * s.w, d_row + w * d.w);
          s_row += ++s_lane == s.c2 ? (s_lane = 0, s.c1 - (s.c2 - 1) * s.lane) : s.lane;
          d_row += ++d_lane == d.c2 ? (d_lane = 0, d.c1 - (d.c2 - 1) * d.lane) : d.lane;
        }
      }
}

#if defined(__GNUC__)  // g++ and clang: vector extensions, compiled to SSE2 on x86-64 and NEON on aarch64
// Sixteen bytes as lanes of the unsigned integer E.
template <class E> struct Lanes16;
template <> struct Lanes16<std::uint8_t> {
  typedef std::uint8_t type __attribute__((vector_size(16)));
};
template <> struct Lanes16<std::uint16_t> {
  typedef std::uint16_t type __attribute__((vector_size(16)));
};
template <> struct Lanes16<std::uint32_t> {
  typedef std::uint32_t type __attribute__((vector_size(16)));
};
template <> struct Lanes16<std::uint64_t> {
  typedef std::uint64_t type __attribute__((vector_size(16)));
};

// The first (second) halves of a and b, lane by lane: a0 b0 a1 b1 ... (the unpack instructions).
template <class V, std::size_t... I> V interleave_low(V a, V b, std::index_sequence<I...>) noexcept {
  return __builtin_shufflevector(a, b, (I % 2 ? sizeof...(I) + I / 2 : I / 2)...);
}
template <class V, std::size_t... I> V interleave_high(V a, V b, std::index_sequence<I...>) noexcept {
  constexpr std::size_t n = sizeof...(I);
  return __builtin_shufflevector(a, b, (I % 2 ? n + n / 2 + I / 2 : n / 2 + I / 2)...);
}

// Transposes the N x N matrix of E held in N rows of 16 bytes (N = 16 / sizeof(E)): log2(N)
// rounds of the same interleave, row i with row i + N/2, make row k hold column k.
template <class E> void transpose_in_registers(typename Lanes16<E>::type* rows) noexcept {
  using V = typename Lanes16<E>::type;
  constexpr std::size_t n = 16 / sizeof(E);
  for (std::size_t round = 1; round < n; round *= 2) {
    V next[n];
    for (std::size_t i = 0; i < n / 2; ++i) {
      next[2 * i] = interleave_low(rows[i], rows[i + n / 2], std::make_index_sequence<n>{});
      next[2 * i + 1] = interleave_high(rows[i], rows[i + n / 2], std::make_index_sequence<n>{});
    }
    for (std::size_t i = 0; i < n; ++i) rows[i] = next[i];
  }
}

// The steps of a side's channels within a block (lanes of NC1HWC2, or all of NHWC's channels).
inline std::size_t channel_step(const Walk& k) noexcept { return k.c2 > 1 ? k.lane : k.c1; }

// Moves the same values in N x N tiles (N elements of 16 bytes) between a side whose channels
// are adjacent (NC1HWC2's lanes, NHWC) and one whose pixels are (NCHW): unblocking a native output
// and its inverse, NHWC <-> NCHW. Returns false, having moved nothing, when the pair is not one
// of those or no whole tile fits; otherwise moves the whole tensor, the edges element by element.
// Only whole tiles of real channels are loaded and stored: padding is neither read nor written.
template <class E> bool move_in_tiles(const Walk& s, const Walk& d, const std::byte* src, std::byte* dst) noexcept {
  using V = typename Lanes16<E>::type;
  constexpr std::size_t n = 16 / sizeof(E);
  const bool unblock = channel_step(s) == 1 && d.w == 1;  // source rows are pixels, destination rows channels
  const bool block = s.w == 1 && channel_step(d) == 1;    // the reverse
  if (!unblock && !block) return false;
  const Walk& packed = unblock ? s : d;  // the side whose channels are adjacent
  if (packed.c2 > 1 && packed.c2 % n != 0) return false;
  const Extents4 e = s.e;
  const std::size_t full_c = e.c / n * n, full_w = e.w / n * n;
  if (full_c == 0 || full_w == 0) return false;
  // Row strides in elements: along w for the pixel rows, along c for the channel rows.
  const std::size_t s_step = unblock ? s.w : channel_step(s);
  const std::size_t d_step = unblock ? channel_step(d) : d.w;
  for (std::size_t b = 0; b < e.n; ++b)
    for (std::size_t h = 0; h < e.h; ++h)
      for (std::size_t c0 = 0; c0 < full_c; c0 += n)
        for (std::size_t w0 = 0; w0 < full_w; w0 += n) {
          V rows[n];
          const std::byte* from = src + s.offset(b, c0, h, w0) * sizeof(E);
          std::byte* to = dst + d.offset(b, c0, h, w0) * sizeof(E);
          for (std::size_t i = 0; i < n; ++i) std::memcpy(&rows[i], from + i * s_step * sizeof(E), 16);
          transpose_in_registers<E>(rows);
          for (std::size_t i = 0; i < n; ++i) std::memcpy(to + i * d_step * sizeof(E), &rows[i], 16);
        }
  // The edges: channels past the last whole tile, and the pixels past the last whole tile.
  auto move_one = [&](std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
    std::memcpy(dst + d.offset(b, c, h, w) * sizeof(E), src + s.offset(b, c, h, w) * sizeof(E), sizeof(E));
  };
  for (std::size_t b = 0; b < e.n; ++b)
    for (std::size_t h = 0; h < e.h; ++h) {
      for (std::size_t c = 0; c < full_c; ++c)
        for (std::size_t w = full_w; w < e.w; ++w) move_one(b, c, h, w);
      for (std::size_t c = full_c; c < e.c; ++c)
        for (std::size_t w = 0; w < e.w; ++w) move_one(b, c, h, w);
    }
  return true;
}
#else
template <class E> bool move_in_tiles(const Walk&, const Walk&, const std::byte*, std::byte*) noexcept { return false; }
#endif

// The same values in another order: one load and one store of an unsigned integer E of the
// element's size per element, instead of a conversion through double.
template <class E> void move_elements(const Walk& s, const Walk& d, const std::byte* src, std::byte* dst) noexcept {
  if (move_in_tiles<E>(s, d, src, dst)) return;
  for_each_element(s, d, [&](std::size_t from, std::size_t to) {
    E v;
    std::memcpy(&v, src + from * sizeof(E), sizeof(E));
    std::memcpy(dst + to * sizeof(E), &v, sizeof(E));
  });
}

template <class = void>
void move_elements(std::size_t bytes, const Walk& s, const Walk& d, const std::byte* src, std::byte* dst) noexcept {
  switch (bytes) {
    case 1: return move_elements<std::uint8_t>(s, d, src, dst);
    case 2: return move_elements<std::uint16_t>(s, d, src, dst);
    case 4: return move_elements<std::uint32_t>(s, d, src, dst);
    default: return move_elements<std::uint64_t>(s, d, src, dst);  // element_bytes() allows 1, 2, 4 and 8
  }
}

}  // namespace detail

// Copies src into dst, converting layout, element type and quantization (see the top of this
// file). The logical extents must agree; both buffers must be large enough for their mappings.
// A template of nothing, like walk_of above.
template <class = void> void copy(const ErasedView& src, const ErasedView& dst) {
  constexpr std::string_view who = "rknnxx::copy";
  if (!dst.writable)
    detail::fail(who, "the destination view is read-only ({} {})", name_of(dst.type), name_of(dst.layout.format()));
  const detail::Walk s = detail::walk_of(src.layout, who);
  const detail::Walk d = detail::walk_of(dst.layout, who);
  if (!(s.e == d.e))
    detail::fail(who, "the source {} n={} c={} h={} w={} and the destination {} n={} c={} h={} w={} differ in extents",
                 name_of(src.layout.format()), s.e.n, s.e.c, s.e.h, s.e.w, name_of(dst.layout.format()), d.e.n, d.e.c,
                 d.e.h, d.e.w);
  const std::size_t sb = detail::element_bytes(src.type, who);
  const std::size_t db = detail::element_bytes(dst.type, who);
  if (s.e.elements() == 0) return;  // an empty tensor: nothing to move, whatever the buffers
  if ((detail::last_offset(s) + 1) * sb > src.bytes)
    detail::fail(who, "the source {} view needs {} bytes, its buffer has {}", name_of(src.layout.format()),
                 (detail::last_offset(s) + 1) * sb, src.bytes);
  if ((detail::last_offset(d) + 1) * db > dst.bytes)
    detail::fail(who, "the destination {} view needs {} bytes, its buffer has {}", name_of(dst.layout.format()),
                 (detail::last_offset(d) + 1) * db, dst.bytes);

  const Extents4 e = s.e;
  const bool same_values = src.type == dst.type &&
      (src.quantization == dst.quantization || (!src.quantization.affine && !dst.quantization.affine));
  if (same_values && s.order == d.order && s.c2 == d.c2) {
    // Fast path: rows of the common memory order are contiguous on both sides.
    if (s.dense && d.dense) {
      std::memmove(dst.data, src.data, (detail::last_offset(s) + 1) * sb);
      return;
    }
    if (s.order == TensorFormat::nhwc) {  // rows (n, h) of W * C elements
      const std::size_t row = std::size_t{e.w} * e.c * sb;
      for (std::size_t n = 0; n < e.n; ++n)
        for (std::size_t h = 0; h < e.h; ++h)
          std::memcpy(dst.data + d.offset(n, 0, h, 0) * sb, src.data + s.offset(n, 0, h, 0) * sb, row);
      return;
    }
    if (s.order == TensorFormat::nc1hwc2) {  // rows (n, c1, h) of W * C2 elements, padding lanes included
      const std::size_t row = std::size_t{e.w} * s.c2 * sb;
      for (std::size_t n = 0; n < e.n; ++n)
        for (std::size_t c = 0; c < e.c; c += s.c2)
          for (std::size_t h = 0; h < e.h; ++h)
            std::memcpy(dst.data + d.offset(n, c, h, 0) * sb, src.data + s.offset(n, c, h, 0) * sb, row);
      return;
    }
  }
  if (same_values) {  // the same values in another order: move the bytes
    detail::move_elements(sb, s, d, src.data, dst.data);
    return;
  }
  // General path: one element at a time through double, dequantizing and quantizing.
  const detail::LoadFn load = detail::load_fn(src.type);
  const detail::StoreFn store = detail::store_fn(dst.type);
  const Quantization sq = src.quantization;
  const Quantization dq = dst.quantization;
  // Rows of w in (n, c, h) order: measured faster here than for_each_element's runs, whose order
  // pays off only for the byte moves (benchmarks/README.md, tensor_copy).
  for (std::size_t n = 0; n < e.n; ++n)
    for (std::size_t c = 0; c < e.c; ++c)
      for (std::size_t h = 0; h < e.h; ++h) {
        const std::size_t so = s.offset(n, c, h, 0);
        const std::size_t dof = d.offset(n, c, h, 0);
        for (std::size_t w = 0; w < e.w; ++w) {
          double x = load(src.data, so + w * s.w);
          if (sq.affine) x = (x - sq.zero_point) * static_cast<double>(sq.scale);
          if (dq.affine) x = dq.quantize(x);
          store(dst.data, dof + w * d.w, x);
        }
      }
}

template <class S, class SL, class D, class DL> void copy(const TensorView<S, SL>& src, const TensorView<D, DL>& dst) {
  static_assert(!std::is_const_v<D>, "the destination of rknnxx::copy must be a view of mutable elements");
  copy(erase(src), erase(dst));
}

}  // namespace rknnxx
