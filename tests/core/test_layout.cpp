#include <doctest/doctest.h>
#include <rknnxx/core/geometry.hpp>
#include <rknnxx/core/layout.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#if __has_include(<mdspan>)
#include <mdspan>
#endif
#include <vector>

using namespace rknnxx;

// Visits every logical index and checks that offsets are in range and distinct; returns how many
// storage positions were used.
template <class M> static std::size_t check_bijective(const M& m, Extents4 e) {
  std::vector<int> used(m.required_span_size(), 0);
  std::size_t out_of_range = 0, collisions = 0;
  for (std::uint32_t n = 0; n < e.n; ++n)
    for (std::uint32_t c = 0; c < e.c; ++c)
      for (std::uint32_t h = 0; h < e.h; ++h)
        for (std::uint32_t w = 0; w < e.w; ++w) {
          const auto off = m(n, c, h, w);
          if (off >= used.size()) {
            ++out_of_range;
            continue;
          }
          if (used[off]++) ++collisions;
        }
  CHECK(out_of_range == 0);
  CHECK(collisions == 0);
  std::size_t count = 0;
  for (int u : used) count += u != 0;
  return count;
}

TEST_CASE("layout: NCHW is dense and row-major in (n, c, h, w)") {
  constexpr layout::NCHW::mapping m(Extents4{3, 5, 4, 7});
  static_assert(m(0, 0, 0, 1) == 1 && m(0, 0, 1, 0) == 7 && m(0, 1, 0, 0) == 28 && m(1, 0, 0, 0) == 140);
  static_assert(m.dims() == Dims{3, 5, 4, 7});
  CHECK(check_bijective(m, m.extents()) == m.required_span_size());
  CHECK(m.is_exhaustive());
  CHECK(m.stride(1) == 28);
}

TEST_CASE("layout: NHWC padded to w_stride and h_stride, N = 3") {
  constexpr Extents4 e{3, 3, 5, 225};
  constexpr layout::NHWC::mapping m(e, 232, 6);
  static_assert(m(0, 2, 1, 0) == (1 * 232 + 0) * 3 + 2);
  static_assert(m(2, 0, 0, 0) == 2 * 6 * 232 * 3);  // per-batch base, never cumulative
  static_assert(m.required_span_size() == 3 * 6 * 232 * 3);
  static_assert(m.dims() == Dims{3, 5, 225, 3});
  CHECK(check_bijective(m, e) == e.elements());
  CHECK_FALSE(m.is_exhaustive());
  CHECK(layout::NHWC::mapping(e).is_exhaustive());
  CHECK(m.stride(2) == 232 * 3);
  CHECK_THROWS_WITH_AS(layout::NHWC::mapping(e, 224), doctest::Contains("w_stride 224 is smaller than the width 225"),
                       Error);
  CHECK_THROWS_WITH_AS(layout::NHWC::mapping(e, 0, 4), doctest::Contains("h_stride 4 is smaller than the height 5"),
                       Error);
}

TEST_CASE("layout: NC1HWC2 with a channel count that is not a multiple of C2, N = 3") {
  constexpr Extents4 e{3, 19, 4, 5};  // C1 = 3 blocks of 8, the last one with 3 valid lanes
  constexpr layout::NC1HWC2::mapping m(e, 8);
  static_assert(m.c1() == 3);
  static_assert(m.dims() == Dims{3, 3, 4, 5, 8});
  // The reference formula, with a per-batch base.
  for (std::uint32_t n = 0; n < e.n; ++n)
    for (std::uint32_t c = 0; c < e.c; ++c)
      for (std::uint32_t h = 0; h < e.h; ++h)
        for (std::uint32_t w = 0; w < e.w; ++w) {
          const std::size_t want = n * (3 * 4 * 5 * 8) + (c / 8) * (4 * 5 * 8) + h * (5 * 8) + w * 8 + c % 8;
          REQUIRE(m(n, c, h, w) == want);
        }
  CHECK(check_bijective(m, e) == e.elements());
  CHECK(m.required_span_size() == 3u * 3 * 4 * 5 * 8);
  CHECK(m.required_span_size() - e.elements() == 3u * 4 * 5 * (24 - 19));  // the padding lanes
  CHECK_FALSE(m.is_exhaustive());
  CHECK(layout::NC1HWC2::mapping({1, 16, 2, 2}, 8).is_exhaustive());
  // Width padding: dims[3] stays the logical width, rows advance by w_stride.
  const layout::NC1HWC2::mapping padded(e, 8, 16);
  CHECK(padded(0, 0, 1, 0) == 16 * 8);
  CHECK(padded.required_span_size() == 3u * 3 * 4 * 16 * 8);
  CHECK_THROWS_WITH_AS(layout::NC1HWC2::mapping(e, 0), doctest::Contains("C2 is 0"), Error);
  // Spans that do not fit 64 bits (or std::size_t) are refused instead of wrapping.
  CHECK_THROWS_WITH_AS(layout::NCHW::mapping(Extents4{0xffffffffu, 0xffffffffu, 0xffffffffu, 2}),
                       doctest::Contains("the span of the mapping overflows 64 bits"), Error);
  CHECK_THROWS_AS(layout::NHWC::mapping(Extents4{0xffffffffu, 1, 0xffffffffu, 0xffffffffu}), Error);
}

TEST_CASE("layout: UNDEFINED is row-major over any rank") {
  constexpr layout::Undefined::mapping m(Dims{2, 3, 4});
  static_assert(m(1, 2, 3) == 23 && m(0, 0, 1) == 1);
  static_assert(m.required_span_size() == 24);
  CHECK(m.is_exhaustive());
}

TEST_CASE("layout: concept and format round trip") {
  static_assert(Layout<layout::NCHW> && Layout<layout::NHWC> && Layout<layout::NC1HWC2> && Layout<layout::Undefined>);
  static_assert(!Layout<int> && !Layout<TensorFormat>);
  static_assert(std::is_same_v<layout_t<TensorFormat::nc1hwc2>, layout::NC1HWC2>);
  static_assert(layout_t<TensorFormat::nhwc>::format == TensorFormat::nhwc);
  CHECK(name_of(TensorFormat::undefined) == "UNDEFINED");
  CHECK(name_of(static_cast<TensorFormat>(7)) == "UNKNOW");
}

TEST_CASE("runtime layout: converts to the static mapping or explains why not") {
  rknn_tensor_attr attr{};
  geometry(Platform::rk3568, TensorType::int8, TensorFormat::nc1hwc2, {1, 255, 80, 80}).fill(attr);
  const auto rl = RuntimeLayout::from_attr(attr, Platform::rk3568);
  CHECK(rl.is<layout::NC1HWC2>());
  const auto m = rl.mapping<layout::NC1HWC2>();
  CHECK(m.extents() == Extents4{1, 255, 80, 80});  // logical channels recovered from n_elems
  CHECK(m.c2() == 8);
  CHECK(m.required_span_size() == attr.size_with_stride);
  CHECK_THROWS_WITH_AS((void)rl.mapping<layout::NHWC>(),
                       doctest::Contains("expected layout NHWC, the tensor is NC1HWC2 with 5 dims"), Error);
  // The same attribute is not valid on a platform with another C2.
  CHECK_THROWS_WITH_AS((void)RuntimeLayout::from_attr(attr, Platform::rk3588),
                       doctest::Contains("C2 8 is not RK3588's C2 for INT8 (16)"), Error);
  // NHWC dims [N, H, W, C] with a row pitch.
  const RuntimeLayout nhwc(TensorFormat::nhwc, {1, 224, 225, 3}, 232);
  CHECK(nhwc.mapping<layout::NHWC>().extents() == Extents4{1, 3, 224, 225});
  CHECK(nhwc.mapping<layout::NHWC>().w_stride() == 232);
  CHECK_THROWS_WITH_AS(RuntimeLayout(TensorFormat::nhwc, {1, 224, 224}),
                       doctest::Contains("NHWC tensors have 4 dims, given 3"), Error);
  CHECK_THROWS_WITH_AS(RuntimeLayout(static_cast<TensorFormat>(9), {1}), doctest::Contains("format value 9"), Error);
  CHECK_THROWS_WITH_AS(RuntimeLayout(TensorFormat::nhwc, {1, 4, 8, 3}, 6),
                       doctest::Contains("w_stride 6 is smaller than the width 8"), Error);
  CHECK_THROWS_WITH_AS(RuntimeLayout(TensorFormat::nc1hwc2, {1, 2, 4, 4, 8}, 0, 0, 20),
                       doctest::Contains("20 channels do not fill C1=2 blocks of C2=8"), Error);
  CHECK(RuntimeLayout(TensorFormat::undefined, {7, 9}).mapping<layout::Undefined>().required_span_size() == 63);
}

TEST_CASE("runtime layout: nonsense attributes and extents are refused, naming the value") {
  rknn_tensor_attr attr{};
  geometry(Platform::rk3588, TensorType::int8, TensorFormat::nc1hwc2, {1, 255, 80, 80}).fill(attr);
  attr.n_dims = 17;
  CHECK_THROWS_WITH_AS((void)RuntimeLayout::from_attr(attr), doctest::Contains("rank 17 exceeds RKNN_MAX_DIMS (16)"),
                       Error);
  attr.n_dims = 5;
  attr.dims[2] = 0;
  CHECK_THROWS_WITH_AS((void)RuntimeLayout::from_attr(attr), doctest::Contains("dims[2] is 0"), Error);
  // N*H*W of crafted dims wraps 64 bits to exactly 0: refused instead of dividing by zero.
  const std::uint32_t wrapping[5] = {0x80000000u, 1, 0x80000000u, 4, 16};
  std::copy(std::begin(wrapping), std::end(wrapping), attr.dims);
  CHECK_THROWS_WITH_AS((void)RuntimeLayout::from_attr(attr),
                       doctest::Contains("N*H*W of the NC1HWC2 dims overflows 64 bits (4611686018427387904 x 4)"),
                       Error);
  // C1 x C2 beyond the 32-bit channel count.
  CHECK_THROWS_WITH_AS(RuntimeLayout(TensorFormat::nc1hwc2, {1, 0x80000000u, 1, 1, 4}),
                       doctest::Contains("C1=2147483648 x C2=4 channels overflow 32 bits"), Error);
}

TEST_CASE("layout: zero extents map nothing, as the standard's mappings do") {
  constexpr layout::NCHW::mapping nchw(Extents4{1, 0, 2, 2});
  static_assert(nchw.required_span_size() == 0 && nchw.is_exhaustive());
  constexpr layout::NHWC::mapping nhwc(Extents4{1, 3, 0, 2}, 4);
  static_assert(nhwc.required_span_size() == 0 && nhwc.w_stride() == 4);
  constexpr layout::NC1HWC2::mapping none(Extents4{1, 0, 2, 2}, 8);
  static_assert(none.required_span_size() == 0 && none.c1() == 0);
  CHECK(layout::NC1HWC2::mapping(Extents4{0, 3, 2, 2}, 8).required_span_size() == 0);
}

// A static-rank extents type of the std::extents kind, to show the mappings take any extents
// (where the standard library has <mdspan>, std::extents itself: below).
template <std::size_t... E> struct StaticExtents {
  using index_type = std::size_t;
  using size_type = std::size_t;
  using rank_type = std::size_t;
  static constexpr rank_type rank() noexcept { return sizeof...(E); }
  static constexpr rank_type rank_dynamic() noexcept { return 0; }
  static constexpr std::size_t static_extent(rank_type r) noexcept { return std::array{E...}[r]; }
  constexpr index_type extent(rank_type r) const noexcept { return static_extent(r); }
  friend constexpr bool operator==(const StaticExtents&, const StaticExtents&) noexcept = default;
};

TEST_CASE("layout: every mapping meets the standard's LayoutMapping requirements, for any extents type") {
  static_assert(LayoutMapping<layout::NCHW::mapping<>> && LayoutMapping<layout::NHWC::mapping<>> &&
                LayoutMapping<layout::NC1HWC2::mapping<>> && LayoutMapping<layout::Undefined::mapping<>>);
  using E = StaticExtents<2, 3, 4, 5>;
  static_assert(LayoutMapping<layout::NCHW::mapping<E>> && LayoutMapping<layout::NHWC::mapping<E>> &&
                LayoutMapping<layout::NC1HWC2::mapping<E>> && LayoutMapping<layout::Undefined::mapping<E>>);
  static_assert(LayoutMapping<layout::Undefined::mapping<StaticExtents<7>>>);
  static_assert(std::is_same_v<layout::NHWC::mapping<E>::extents_type, E>);
  static_assert(std::is_same_v<layout::NCHW::mapping<>::layout_type, layout::NCHW>);
  // The always- forms: NCHW and UNDEFINED are layout_right; NHWC is strided but padded rows make it
  // non-exhaustive; NC1HWC2 is neither strided nor, in general, exhaustive.
  static_assert(layout::NCHW::mapping<E>::is_always_exhaustive() && layout::NCHW::mapping<E>::is_always_strided());
  static_assert(!layout::NHWC::mapping<E>::is_always_exhaustive() && layout::NHWC::mapping<E>::is_always_strided());
  static_assert(!layout::NC1HWC2::mapping<E>::is_always_strided() && !layout::NC1HWC2::mapping<E>::is_strided());
  static_assert(layout::Undefined::mapping<E>::is_always_unique());

  constexpr layout::NCHW::mapping<E> nchw{E{}};
  static_assert(nchw(1, 2, 3, 4) == 119 && nchw.required_span_size() == 120);
  static_assert(nchw.stride(0) == 60 && nchw.stride(1) == 20 && nchw.stride(2) == 5 && nchw.stride(3) == 1);
  constexpr layout::NHWC::mapping<E> nhwc{E{}, 8};
  static_assert(nhwc.stride(3) == 3 && nhwc.stride(2) == 24 && nhwc(1, 2, 3, 4) == nhwc.stride(0) + 2 + 3 * 24 + 4 * 3);
  static_assert(nhwc.extents() == E{});
  constexpr layout::Undefined::mapping<E> flat{E{}};
  static_assert(flat(1, 2, 3, 4) == nchw(1, 2, 3, 4) && flat.stride(1) == 20);
  static_assert(flat.dims() == Dims{2, 3, 4, 5});
}

TEST_CASE("layout: an UNDEFINED mapping of run-time rank refuses a wrong number of indices") {
  const layout::Undefined::mapping m(Dims{2, 3});
  CHECK(m(1, 2) == 5);
  CHECK(m.stride(0) == 3);
  CHECK_THROWS_WITH_AS((void)m(1, 2, 0), doctest::Contains("3 indices for rank 2"), Error);
}

#if defined(__cpp_lib_mdspan) && __has_include(<mdspan>)
TEST_CASE("layout: the policies work with std::mdspan") {
  std::vector<float> image(2 * 3 * 4 * 8);
  std::mdspan<float, std::dextents<std::size_t, 4>, layout::NHWC> view(image.data(), 2, 3, 4, 5);
  view[1, 2, 3, 4] = 1.0f;
  CHECK(image[layout::NHWC::mapping(Extents4{2, 3, 4, 5})(1, 2, 3, 4)] == 1.0f);
}
#endif
