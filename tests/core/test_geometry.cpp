#include <doctest/doctest.h>
#include <rknnxx/core/geometry.hpp>

using namespace rknnxx;

TEST_CASE("geometry: the documented cases (docs/c-interface.md: NC1HWC2, strides and sizes)") {
  // RK3568, int8 model, 255 output channels: native [1, 32, 80, 80, 8] (rknn_model_zoo #156).
  constexpr auto out = geometry<Platform::rk3568, std::int8_t, layout::NC1HWC2>({1, 255, 80, 80});
  static_assert(out.dims == Dims{1, 32, 80, 80, 8});
  static_assert(out.n_elems == 255 * 80 * 80 && out.size == 255 * 80 * 80);
  static_assert(out.size_with_stride == 32 * 80 * 80 * 8);
  static_assert(out.size_with_stride == out.mapping<layout::NC1HWC2>().required_span_size());
  // FP16 [2, 224, 224, 3]: n_elems 301056, size 602112 (rknn-toolkit2 #62).
  constexpr auto fp16 = geometry<Platform::rk3588, Float16, layout::NHWC>({2, 224, 224, 3});
  static_assert(fp16.n_elems == 301056 && fp16.size == 602112);
  static_assert(fp16.w_stride == 224 && fp16.size_with_stride == 602112);
  // The same 255 channels on RK3588: C2 = 16, C1 = 16.
  static_assert(geometry<Platform::rk3588, std::int8_t, layout::NC1HWC2>({1, 255, 80, 80}).dims ==
                Dims{1, 16, 80, 80, 16});
  static_assert(geometry<Platform::rk3588, Float16, layout::NC1HWC2>({1, 255, 80, 80}).dims == Dims{1, 32, 80, 80, 8});
  CHECK(out.channels == 255);
}

TEST_CASE("geometry: zero-copy width alignment per platform") {
  // 8 pixels on RK3566/RK3568, 16 on RK3588/RK3562/RV1106.
  constexpr auto rk3568 = geometry<Platform::rk3568, std::uint8_t, layout::NHWC>({1, 100, 300, 3});
  static_assert(rk3568.w_stride == 304 && rk3568.size == 90000 && rk3568.size_with_stride == 100 * 304 * 3);
  constexpr auto rk3588 = geometry<Platform::rk3588, std::uint8_t, layout::NHWC>({1, 100, 300, 3});
  static_assert(rk3588.w_stride == 304);
  static_assert(geometry<Platform::rk3588, std::uint8_t, layout::NHWC>({1, 100, 324, 3}).w_stride == 336);
  static_assert(geometry<Platform::rk3568, std::uint8_t, layout::NHWC>({1, 100, 324, 3}).w_stride == 328);
  // Undocumented alignment: no padding assumed.
  static_assert(geometry<Platform::rv1126b, std::uint8_t, layout::NHWC>({1, 100, 300, 3}).w_stride == 300);
  // Requested strides, N = 3 batches.
  constexpr auto batched =
      geometry<Platform::rk3588, std::int8_t, layout::NHWC>({3, 5, 20, 4}, {.w_stride = 32, .h_stride = 6});
  static_assert(batched.w_stride == 32 && batched.h_stride == 6);
  static_assert(batched.size_with_stride == 3 * 6 * 32 * 4);
  static_assert(batched.size_with_stride == batched.mapping<layout::NHWC>().required_span_size());
}

TEST_CASE("geometry: NC1HWC2 with N >= 3 and C not a multiple of C2; span equals size_with_stride") {
  for (std::uint32_t c : {1u, 3u, 7u, 8u, 9u, 17u, 255u}) {
    CAPTURE(c);
    const auto g = geometry(Platform::rk3566, TensorType::int8, TensorFormat::nc1hwc2, {3, c, 5, 6});
    const std::uint32_t c1 = (c + 7) / 8;
    CHECK(g.dims == Dims{3, c1, 5, 6, 8});
    CHECK(g.n_elems == 3 * c * 5 * 6);
    CHECK(g.size_with_stride == 3 * c1 * 5 * 6 * 8);
    CHECK(g.mapping<layout::NC1HWC2>().required_span_size() == g.size_with_stride);
    CHECK(g.mapping<layout::NC1HWC2>().extents() == Extents4{3, c, 5, 6});
    const auto f16 = geometry(Platform::rk3566, TensorType::float16, TensorFormat::nc1hwc2, {3, c, 5, 6});
    CHECK(f16.dims[4] == 4);
    CHECK(f16.size_with_stride == 2 * f16.mapping<layout::NC1HWC2>().required_span_size());
  }
}

TEST_CASE("geometry: dense layouts, sub-byte types, any rank") {
  constexpr auto nchw = geometry<Platform::rk3588, float, layout::NCHW>({3, 255, 20, 20});
  static_assert(nchw.size == 3 * 255 * 20 * 20 * 4 && nchw.size_with_stride == nchw.size);
  static_assert(nchw.w_stride == 20 && nchw.h_stride == 20);
  constexpr auto undefined = geometry<Platform::rk3562, std::int64_t, layout::Undefined>({1, 77});
  static_assert(undefined.size == 616 && undefined.w_stride == 0 && undefined.dims == Dims{1, 77});
  constexpr auto int4 = geometry<Platform::rk3576, Int4, layout::Undefined>({3, 5});
  static_assert(int4.n_elems == 15 && int4.size == 8);
  rknn_tensor_attr attr{};
  nchw.fill(attr);
  CHECK(attr.n_dims == 4);
  CHECK(attr.fmt == RKNN_TENSOR_NCHW);
  CHECK(attr.type == RKNN_TENSOR_FLOAT32);
  CHECK(attr.size_with_stride == nchw.size);
}

TEST_CASE("geometry: nonsense is refused with the value named") {
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::uint8, TensorFormat::nchw, {65536, 65536, 1, 1}),
                       doctest::Contains("n_elems = 4294967296 overflows the 32-bit field"), Error);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::float32, TensorFormat::nchw, {1024, 1024, 1024, 1}),
                       doctest::Contains("size = 4294967296 overflows"), Error);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::uint8, TensorFormat::nhwc, {1, 65535, 65535, 1},
                                      {.w_stride = 65600}),
                       doctest::Contains("size_with_stride = 4299096000 overflows"), Error);
  // The 16-pixel alignment of a width just below 2^32 needs a w_stride of 2^32: refused, never truncated to 0.
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::uint8, TensorFormat::nhwc, {1, 1, 0xfffffff9u, 1}),
                       doctest::Contains("w_stride = 4294967296 overflows the 32-bit field"), Error);
  CHECK(geometry(Platform::rk3588, TensorType::uint8, TensorFormat::nhwc, {1, 1, 0xfffffff0u, 1}).w_stride ==
        0xfffffff0u);
  // A padded span of 2^61 bytes wraps a 64-bit bit count to 0: refused, never a size_with_stride of 0.
  // (On 32-bit targets the span itself is refused first; both messages name it.)
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::uint8, TensorFormat::nhwc, {1, 1, 1, 1u << 29},
                                      {.w_stride = 1u << 16, .h_stride = 1u << 16}),
                       doctest::Contains("2305843009213693952"), Error);
  CHECK_THROWS_WITH_AS(
      (void)geometry(Platform::rk3588, TensorType::int8, TensorFormat::nc1hwc2, {1, 255, 80, 80}, {.c2 = 8}),
      doctest::Contains("C2 8 is not RK3588's C2 for INT8 (16)"), Error);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rv1106b, TensorType::int8, TensorFormat::nc1hwc2, {1, 255, 80, 80}),
                       doctest::Contains("RV1106B has no documented NC1HWC2 C2 for INT8"), Error);
  CHECK(geometry(Platform::rv1106b, TensorType::int8, TensorFormat::nc1hwc2, {1, 255, 80, 80}, {.c2 = 16}).dims[4] ==
        16);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::float32, TensorFormat::nc1hwc2, {1, 3, 4, 4}),
                       doctest::Contains("RK3588 has no documented NC1HWC2 C2 for FP32"), Error);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::int8, TensorFormat::nhwc, {1, 224, 224}),
                       doctest::Contains("NHWC geometries take 4 dims, given 3"), Error);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, static_cast<TensorType>(20), TensorFormat::nhwc, {1, 2, 2, 1}),
                       doctest::Contains("tensor type value 20"), Error);
  CHECK_THROWS_WITH_AS((void)geometry(Platform::rk3588, TensorType::int8, static_cast<TensorFormat>(4), {1, 2, 2, 1}),
                       doctest::Contains("format value 4"), Error);
  CHECK_THROWS_WITH_AS(
      (void)geometry(Platform::rk3588, TensorType::int8, TensorFormat::nhwc, {1, 2, 20, 1}, {.w_stride = 10}),
      doctest::Contains("w_stride 10 is smaller than the width 20"), Error);
}

TEST_CASE("geometry: comparing with what the runtime reported") {
  constexpr auto g = geometry<Platform::rk3568, std::int8_t, layout::NC1HWC2>({1, 255, 80, 80});
  rknn_tensor_attr attr{};
  g.fill(attr);
  CHECK(geometry_mismatch(g, attr).empty());
  attr.w_stride = 0;  // "0 means equal to the width"
  CHECK(geometry_mismatch(g, attr).empty());
  attr.size_with_stride = 0;  // observed for some inputs: read as size
  CHECK(geometry_mismatch(g, attr) == "size_with_stride: computed 1638400, reported 1632000");
  g.fill(attr);
  attr.dims[4] = 16;
  attr.type = RKNN_TENSOR_FLOAT16;
  CHECK(geometry_mismatch(g, attr) ==
        "type: computed INT8, reported FP16; dims: computed [1, 32, 80, 80, 8], reported [1, 32, 80, 80, 16]");
  attr.n_dims = 99;
  CHECK(geometry_mismatch(g, attr).find("n_dims: computed 5, reported 99") != std::string::npos);
}
