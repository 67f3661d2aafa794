// Tensor attributes, typed views and conversions; the loader's pure parts. No model needed.
#include <rknnxx/runtime/api_table.hpp>
#include <rknnxx/runtime/flags.hpp>
#include <rknnxx/runtime/loader.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/int4_span.hpp>
#include <rknnxx/tensor/view.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cfenv>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

using namespace rknnxx;

namespace {
rknn_tensor_attr make_attr(std::initializer_list<std::uint32_t> dims, rknn_tensor_format fmt, rknn_tensor_type type,
                           std::uint32_t w_stride = 0) {
  rknn_tensor_attr a{};
  Dims(dims).to_abi(a.n_dims, a.dims);
  std::strcpy(a.name, "data");
  a.fmt = fmt;
  a.type = type;
  a.n_elems = static_cast<std::uint32_t>(Dims(dims).elements());
  a.size = static_cast<std::uint32_t>(bytes_for(static_cast<TensorType>(type), a.n_elems));
  a.w_stride = w_stride;
  a.size_with_stride = a.size;
  return a;
}
std::string what(const std::exception& e) { return e.what(); }
}  // namespace

TEST_CASE("Quantization: dynamic fixed point is the affine case scale 2^-fl, zero point 0") {
  const auto q = Quantization::dynamic_fixed_point(10);
  CHECK(q == Quantization::affine_asymmetric(1.0f / 1024, 0));
  CHECK(q.fraction_length() == 10);
  CHECK(Quantization::dynamic_fixed_point(-3).fraction_length() == -3);
  CHECK_FALSE(Quantization::affine_asymmetric(0.3f, 0).fraction_length());
  CHECK_FALSE(Quantization::affine_asymmetric(0.25f, 1).fraction_length());
  CHECK_FALSE(Quantization::none().fraction_length());
  CHECK(q.dequantize(-1536) == -1.5f);
  CHECK(q.quantize(0.5) == 512.0);
  // int16 values through copy(): rounded half to even, saturated to int16.
  std::vector<float> x{-100.f, -1.f, 0.f, 2.5f / 1024, 31.99999f, 100.f};
  std::vector<std::int16_t> i16(x.size());
  copy(flat_view(x.data(), Dims{6}),
       TensorView<std::int16_t, layout::Undefined>(i16.data(), layout::Undefined::mapping(Dims{6}), q));
  CHECK(i16 == std::vector<std::int16_t>{-32768, -1024, 0, 2, 32767, 32767});
  // TensorInfo reads DFP from the attr's fl; another type drops it.
  rknn_tensor_attr a = make_attr({1, 4}, RKNN_TENSOR_UNDEFINED, RKNN_TENSOR_INT16);
  a.qnt_type = RKNN_TENSOR_QNT_DFP;
  a.fl = 10;
  a.scale = 1.0f;  // a DFP attr's scale is not read: fl decides
  const TensorInfo info(a, TensorIo::output);
  CHECK(info.quantization() == q);
  const TensorInfo as_float = info.with(TensorType::float32, TensorFormat::undefined);
  CHECK_FALSE(as_float.quantization().affine);
  CHECK(as_float.abi().fl == 0);
}

TEST_CASE("Quantization: affine round trip, and integers saturate") {
  const auto q = Quantization::affine_asymmetric(0.5f, -3);
  CHECK(q.quantize(1.0) == -1.0);  // 1 / 0.5 - 3
  CHECK(q.dequantize(-1) == 1.0f);
  CHECK(Quantization::none().dequantize(7) == 7.0f);
  std::vector<float> x{-100.f, -1.f, 0.f, 1.25f, 100.f};
  std::vector<std::int8_t> i8(x.size());
  auto src = flat_view(x.data(), Dims{5});
  auto dst = TensorView<std::int8_t, layout::Undefined>(i8.data(), layout::Undefined::mapping(Dims{5}), q);
  copy(src, dst);
  CHECK(i8 == std::vector<std::int8_t>{-128, -5, -3, -1, 127});  // 1.25 / 0.5 = 2.5 rounds to even: 2 - 3
  // Ties round to even before the zero point is added (ONNX QuantizeLinear): 3.5 -> 4, 4 - 3 = 1.
  CHECK(q.quantize(1.75) == 1.0);
  CHECK(q.quantize(-1.25) == -5.0);  // -2.5 -> -2, -2 - 3
}

TEST_CASE("copy: float to integer rounds to nearest, ties to even, saturates, and NaN becomes 0") {
  const std::vector<double> x{2.5,
                              3.5,
                              -2.5,
                              -3.5,
                              0.5,
                              -0.5,
                              1.5,
                              2.4999999999999996,
                              2.6,
                              -2.6,
                              127.5,
                              128.0,
                              -128.5,
                              -1e300,
                              1e300,
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()};
  const std::vector<std::int8_t> expected{2, 4, -2, -4, 0, 0, 2, 2, 3, -3, 127, 127, -128, -128, 127, 127, -128, 0};
  std::vector<std::byte> i8(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) detail::store_as<std::int8_t>(i8.data(), i, x[i]);
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("x = ", x[i]);
    CHECK(static_cast<std::int8_t>(i8[i]) == expected[i]);
  }
  // The same through copy() from float32 into uint8 and int32, and the result does not depend on
  // the FP rounding mode of the moment.
  const std::vector<float> f{2.5f, 3.5f, -2.5f, 255.5f, 256.f, -0.5f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<std::uint8_t> u8(f.size());
  std::vector<std::int32_t> i32(f.size());
  const int mode = std::fegetround();
  for (const int m : {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    REQUIRE(std::fesetround(m) == 0);
    copy(flat_view(f.data(), Dims{7}), flat_view(u8.data(), Dims{7}));
    copy(flat_view(f.data(), Dims{7}), flat_view(i32.data(), Dims{7}));
    std::fesetround(mode);
    INFO("rounding mode ", m);
    CHECK(u8 == std::vector<std::uint8_t>{2, 4, 0, 255, 255, 0, 0});
    CHECK(i32 == std::vector<std::int32_t>{2, 4, -2, 256, 256, 0, 0});
  }
  // int64 saturates at its limits instead of overflowing.
  std::vector<std::byte> i64(16);
  detail::store_as<std::int64_t>(i64.data(), 0, 1e19);
  detail::store_as<std::int64_t>(i64.data(), 1, -1e19);
  std::int64_t v[2];
  std::memcpy(v, i64.data(), 16);
  CHECK(v[0] == std::numeric_limits<std::int64_t>::max());
  CHECK(v[1] == std::numeric_limits<std::int64_t>::lowest());
  // bool reads any non-zero byte as true.
  const std::uint8_t bytes[2] = {0, 0xAB};
  CHECK(detail::load_as<bool>(reinterpret_cast<const std::byte*>(bytes), 0) == 0.0);
  CHECK(detail::load_as<bool>(reinterpret_cast<const std::byte*>(bytes), 1) == 1.0);
}

TEST_CASE("TensorInfo: accessors and with() for the buffer the application chooses") {
  rknn_tensor_attr a = make_attr({1, 100, 100, 3}, RKNN_TENSOR_NHWC, RKNN_TENSOR_FLOAT16, 112);
  a.size_with_stride = 1 * 100 * 112 * 3 * 2;
  const TensorInfo info(a, TensorIo::input);
  CHECK(info.name() == "data");
  CHECK(info.dims() == Dims{1, 100, 100, 3});
  CHECK(info.type() == TensorType::float16);
  CHECK(info.alloc_size() == 67200);
  CHECK(info.id().io == TensorIo::input);
  const TensorInfo u8 = info.with(TensorType::uint8, TensorFormat::nhwc);
  CHECK(u8.size() == 30000);
  CHECK(u8.size_with_stride() == 33600);  // the w_stride stays: the runtime dictates it
  CHECK(u8.w_stride() == 112);
  const TensorInfo nchw = info.with(TensorType::float32, TensorFormat::nchw);
  CHECK(nchw.dims() == Dims{1, 3, 100, 100});
  CHECK(nchw.size_with_stride() == 120000);
  CHECK(nchw.w_stride() == 0);
  // A [1, 10] output keeps UNDEFINED whatever 4-D format is asked for.
  const TensorInfo logits(make_attr({1, 10}, RKNN_TENSOR_UNDEFINED, RKNN_TENSOR_FLOAT16), TensorIo::output);
  CHECK(logits.with(TensorType::float32, TensorFormat::nchw).format() == TensorFormat::undefined);
  CHECK(logits.with(TensorType::float32, TensorFormat::nchw).size() == 40);
  // Quantization goes with a type change (the runtime quantizes from the buffer type).
  rknn_tensor_attr qa = make_attr({1, 4}, RKNN_TENSOR_UNDEFINED, RKNN_TENSOR_INT8);
  qa.qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
  qa.scale = 0.25f;
  qa.zp = 5;
  const TensorInfo qi(qa, TensorIo::output);
  CHECK(qi.quantization() == Quantization::affine_asymmetric(0.25f, 5));
  CHECK_FALSE(qi.with(TensorType::uint8, TensorFormat::undefined).quantization().affine);
  CHECK_THROWS_WITH_AS((void)info.with(TensorType::int8, TensorFormat::nc1hwc2),
                       doctest::Contains("cannot be described as NC1HWC2"), Error);
  // Sizes that no longer fit the attr's 32-bit fields are refused, naming the field.
  rknn_tensor_attr big = make_attr({1, 32768, 32768, 3}, RKNN_TENSOR_NHWC, RKNN_TENSOR_UINT8, 32768);
  big.n_elems = 32768u * 32768u * 3u;  // 3 GiB as uint8: fits in 32 bits
  const TensorInfo huge(big, TensorIo::input);
  CHECK_THROWS_WITH_AS((void)huge.with(TensorType::float16, TensorFormat::nhwc),
                       doctest::Contains("size of 6442450944 bytes exceeds the 32-bit field"), Error);
  big.w_stride = 65536;
  big.n_elems = 1024u * 1024u * 3u;
  big.dims[1] = big.dims[2] = 1024;
  big.h_stride = 65536;
  CHECK_THROWS_WITH_AS((void)TensorInfo(big, TensorIo::input).with(TensorType::uint8, TensorFormat::nhwc),
                       doctest::Contains("size_with_stride of 12884901888 bytes exceeds the 32-bit field"), Error);
  CHECK(info == TensorInfo(a, TensorIo::input));
  CHECK_FALSE(info == u8);
}

TEST_CASE("TensorView: logical indexing, span checks, const views, dequantized values") {
  std::vector<std::uint8_t> rgb(2 * 3 * 4 * 3);
  std::iota(rgb.begin(), rgb.end(), 0);
  auto v = nhwc_view(rgb.data(), {.n = 2, .c = 3, .h = 3, .w = 4});
  CHECK(v(1, 2, 1, 3) == rgb[((1 * 3 + 1) * 4 + 3) * 3 + 2]);
  CHECK(v.dims() == Dims{2, 3, 4, 3});
  TensorView<const std::uint8_t, layout::NHWC> c = v;
  CHECK(c.data() == rgb.data());
  CHECK_THROWS_WITH_AS((void)nhwc_view(std::span<std::uint8_t>(rgb).first(10), {.n = 1, .c = 3, .h = 3, .w = 4}),
                       doctest::Contains("the buffer holds 10"), Error);
  std::int8_t q[2] = {10, -10};
  TensorView<std::int8_t, layout::Undefined> qv(q, layout::Undefined::mapping(Dims{2}),
                                                Quantization::affine_asymmetric(0.5f, 0));
  CHECK(qv.value(0) == 5.0f);
  CHECK(qv.value(1) == -5.0f);
  const ErasedView e = erase(c);
  CHECK(e.type == TensorType::uint8);
  CHECK_FALSE(e.writable);
  CHECK(e.bytes == rgb.size());
}

TEST_CASE("copy: the demos' w_stride row copy leaves the padding alone") {
  const std::uint32_t h = 5, w = 100, c = 3, ws = 112;
  std::vector<std::uint8_t> img(h * w * c), padded(h * ws * c, 0xEE);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<std::uint8_t>(i * 7);
  copy(nhwc_view(img.data(), {1, c, h, w}), nhwc_view(padded.data(), {1, c, h, w}, ws));
  for (std::uint32_t y = 0; y < h; ++y) {
    CHECK(std::memcmp(&padded[y * ws * c], &img[y * w * c], w * c) == 0);
    CHECK(padded[(y * ws + w) * c] == 0xEE);
  }
}

TEST_CASE("copy: NC1HWC2 blocking and unblocking, N = 3 and C % C2 != 0, with a row pitch") {
  const Extents4 e{.n = 3, .c = 5, .h = 2, .w = 3};
  std::vector<float> nchw(e.elements());
  std::iota(nchw.begin(), nchw.end(), 1.0f);
  const auto blocked_map = layout::NC1HWC2::mapping(e, 4, 4);
  std::vector<Float16> blocked(blocked_map.required_span_size(), Float16(-1.0f));
  copy(nchw_view(nchw.data(), e), TensorView<Float16, layout::NC1HWC2>(blocked.data(), blocked_map));
  auto src = nchw_view(nchw.data(), e);
  bool same = true;
  for (std::uint32_t n = 0; n < e.n; ++n)
    for (std::uint32_t ch = 0; ch < e.c; ++ch)
      for (std::uint32_t y = 0; y < e.h; ++y)
        for (std::uint32_t x = 0; x < e.w; ++x)
          same = same && static_cast<float>(blocked[blocked_map(n, ch, y, x)]) == src(n, ch, y, x);
  CHECK(same);
  CHECK(static_cast<float>(blocked[blocked_map(0, 5, 0, 0)]) == -1.0f);  // a padding lane is not written
  std::vector<float> back(nchw.size());
  copy(TensorView<const Float16, layout::NC1HWC2>(blocked.data(), blocked_map), nchw_view(back.data(), e));
  CHECK(back == nchw);
  // The fast path: same type and blocking, different row pitch.
  const auto pitch8 = layout::NC1HWC2::mapping(e, 4, 8);
  std::vector<Float16> wide(pitch8.required_span_size());
  copy(TensorView<const Float16, layout::NC1HWC2>(blocked.data(), blocked_map),
       TensorView<Float16, layout::NC1HWC2>(wide.data(), pitch8));
  CHECK(static_cast<float>(wide[pitch8(2, 4, 1, 2)]) == src(2, 4, 1, 2));
}

// Every element lands where the destination's mapping says, whatever the pair of orders: the
// byte-moving path (same type) and the converting path (another type) against the mappings.
template <class T> T element_of_value(int v) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
  else return T(static_cast<float>(v));
}
template <class T> double value_of_element(T v) { return static_cast<double>(static_cast<float>(v)); }

template <class S, class D> void check_every_order(const Extents4& e, std::uint32_t c2, std::uint32_t pitch) {
  const layout::NCHW::mapping nchw(e);
  const layout::NHWC::mapping nhwc(e, e.w + pitch);
  const layout::NC1HWC2::mapping blocked(e, c2, e.w + pitch);
  const auto run = [&](const auto& from_map, const auto& to_map) {
    using From = typename std::remove_cvref_t<decltype(from_map)>::layout_type;
    using To = typename std::remove_cvref_t<decltype(to_map)>::layout_type;
    std::vector<S> from(from_map.required_span_size());
    for (std::size_t i = 0; i < from.size(); ++i) from[i] = element_of_value<S>(static_cast<int>(i % 101) - 50);
    std::vector<D> to(to_map.required_span_size(), element_of_value<D>(77));
    copy(TensorView<const S, From>(from.data(), from_map), TensorView<D, To>(to.data(), to_map));
    std::size_t wrong = 0, written = 0;
    for (std::uint32_t n = 0; n < e.n; ++n)
      for (std::uint32_t c = 0; c < e.c; ++c)
        for (std::uint32_t y = 0; y < e.h; ++y)
          for (std::uint32_t x = 0; x < e.w; ++x) {
            wrong += value_of_element(to[to_map(n, c, y, x)]) != value_of_element(from[from_map(n, c, y, x)]);
            ++written;
          }
    const auto untouched =
        static_cast<std::size_t>(std::count_if(to.begin(), to.end(), [](D v) { return value_of_element(v) == 77.0; }));
    INFO(From::name, " -> ", To::name, " n=", e.n, " c=", e.c, " h=", e.h, " w=", e.w, " c2=", c2, " pitch=", pitch);
    CHECK(wrong == 0);
    // Padding is left alone (77 is not among the values written), except by the row copy between
    // two NC1HWC2 buffers of one type, which moves whole rows of C2 lanes.
    if (!(std::is_same_v<S, D> && From::format == TensorFormat::nc1hwc2 && To::format == TensorFormat::nc1hwc2))
      CHECK(untouched + written >= to.size());
  };
  const auto each_destination = [&](const auto& from_map) {
    run(from_map, nchw);
    run(from_map, nhwc);
    run(from_map, blocked);
  };
  each_destination(nchw);
  each_destination(nhwc);
  each_destination(blocked);
}

TEST_CASE("copy: every pair of orders, moved as bytes or converted, against the mappings") {
  for (const Extents4 e : {Extents4{1, 1, 1, 1}, Extents4{2, 5, 3, 7}, Extents4{1, 37, 2, 35}, Extents4{3, 16, 1, 17},
                           Extents4{2, 32, 2, 48}})
    for (const std::uint32_t c2 : {4u, 8u, 16u})
      for (const std::uint32_t pitch : {0u, 3u}) {
        check_every_order<std::int8_t, std::int8_t>(e, c2, pitch);
        check_every_order<Float16, Float16>(e, c2, pitch);
        check_every_order<float, float>(e, c2, pitch);
        check_every_order<std::int64_t, std::int64_t>(e, c2, pitch);
        check_every_order<std::int8_t, float>(e, c2, pitch);
        check_every_order<float, std::int16_t>(e, c2, pitch);
      }
}

TEST_CASE("copy: NHWC uint8 to NCHW float and int8 dequantization") {
  std::vector<std::uint8_t> img(2 * 2 * 3);
  std::iota(img.begin(), img.end(), 0);
  std::vector<float> f(img.size());
  copy(nhwc_view(img.data(), {1, 3, 2, 2}), nchw_view(f.data(), {1, 3, 2, 2}));
  CHECK(f == std::vector<float>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11});
  std::vector<std::int8_t> q{-128, 0, 127};
  std::vector<float> dq(3);
  copy(TensorView<const std::int8_t, layout::Undefined>(q.data(), layout::Undefined::mapping(Dims{1, 3}),
                                                        Quantization::affine_asymmetric(0.1f, -128)),
       flat_view(dq.data(), Dims{1, 3}));
  CHECK(dq[0] == doctest::Approx(0.0));
  CHECK(dq[1] == doctest::Approx(12.8));
  CHECK(dq[2] == doctest::Approx(25.5));
  std::vector<float> big{300.f, -5.f, 2.5f};
  std::vector<std::uint8_t> sat(3);
  copy(flat_view(big.data(), Dims{3}), flat_view(sat.data(), Dims{3}));
  CHECK(sat == std::vector<std::uint8_t>{255, 0, 2});
}

TEST_CASE("Int4Span: packed int4 elements by index, two to a byte, the neighbour kept") {
  std::vector<Int4x2> bytes(bytes_for<Int4>(5));
  const Int4Span q(bytes.data(), 5);
  CHECK(q.size() == 5);
  CHECK(q.size_bytes() == 3);
  for (int i = 0; i < 5; ++i) q.set(static_cast<std::size_t>(i), Int4(i - 3));
  CHECK(bytes[0].byte() == 0xed);  // -3 in the low nibble, -2 in the high one
  CHECK(bytes[2].byte() == 0x01);  // element 4 alone in the last byte
  q.set(1, Int4(7));
  const Int4Span<const Int4x2> read = q;
  CHECK(read[0] == Int4(-3));
  CHECK(read[1] == Int4(7));
  CHECK(read[4] == Int4(1));
  CHECK_THROWS_WITH_AS(Int4Span(std::span<Int4x2>(bytes), 7),
                       doctest::Contains("7 int4 elements need 4 bytes, the buffer holds 3"), Error);
}

TEST_CASE("copy: refuses mismatched extents, read-only destinations, short buffers and int4") {
  std::vector<float> a(12), b(12);
  CHECK_THROWS_WITH_AS(copy(nchw_view(a.data(), {1, 3, 2, 2}), nchw_view(b.data(), {1, 2, 3, 2})),
                       doctest::Contains("differ in extents"), Error);
  ErasedView ro = erase(nchw_view(static_cast<const float*>(b.data()), {1, 3, 2, 2}));
  CHECK_THROWS_WITH_AS(copy(erase(nchw_view(a.data(), {1, 3, 2, 2})), ro), doctest::Contains("read-only"), Error);
  ErasedView small = erase(nchw_view(b.data(), {1, 3, 2, 2}));
  small.bytes = 8;
  CHECK_THROWS_WITH_AS(copy(erase(nchw_view(a.data(), {1, 3, 2, 2})), small), doctest::Contains("its buffer has 8"),
                       Error);
  ErasedView i4 = small;
  i4.type = TensorType::int4;
  i4.bytes = 100;
  CHECK_THROWS_WITH_AS(copy(erase(nchw_view(a.data(), {1, 3, 2, 2})), i4), doctest::Contains("INT4"), Error);
}

TEST_CASE("loader: choices, versions, candidates and the error that lists every attempt") {
  CHECK(RuntimeChoice::parse("") == RuntimeChoice::automatic());
  CHECK(RuntimeChoice::parse("auto") == RuntimeChoice::automatic());
  CHECK(RuntimeChoice::parse("vendor") == RuntimeChoice::vendor());
  CHECK(RuntimeChoice::parse("host") == RuntimeChoice::host());
  CHECK(RuntimeChoice::parse("/opt/x.so") == RuntimeChoice::at("/opt/x.so"));
  CHECK(Version::parse("2.3.2 (429f97ae6b@2025-04-09T09:09:27)") == Version{2, 3, 2});
  CHECK(Version::parse("v1.6") == Version{1, 6, 0});
  CHECK_FALSE(Version::parse("unknown").has_value());
  CHECK(Version{1, 5, 2} < min_sdk_version);
  CHECK_THROWS_WITH_AS(check_sdk_version({"1.4.0 (a@b)", "0.8.2", {}}, "/usr/lib/librknnrt.so"),
                       doctest::Contains("is SDK 1.4.0"), Error);
  CHECK_THROWS_WITH_AS(check_sdk_version({"garbage", "", {}}, "x.so"), doctest::Contains("not major.minor.patch"),
                       Error);
  CHECK(check_sdk_version({"2.3.2", "0.9.6", {}}, "x.so") == Version{2, 3, 2});

  const auto automatic = Runtime::candidates(RuntimeChoice::automatic());
  REQUIRE(automatic.size() >= 3);
  CHECK(automatic[0] == "librknnrt.so");
  CHECK(automatic[1] == "librknnmrt.so");
  CHECK(automatic[2] == "librknnxx_host.so");
  CHECK(Runtime::candidates(RuntimeChoice::vendor()).size() == 2);
  CHECK(Runtime::candidates(RuntimeChoice::at("/x/y.so")) == std::vector<std::string>{"/x/y.so"});
  try {
    (void)Runtime::load(RuntimeChoice::at("/nonexistent/librknnrt.so"));
    FAIL("loaded a missing runtime");
  } catch (const Error& e) {
    CHECK(what(e).find("/nonexistent/librknnrt.so: ") != std::string::npos);
    CHECK(what(e).find("no rknn runtime could be loaded") != std::string::npos);
  }
  // This machine has no NPU: the vendor choice fails naming both vendor libraries.
  try {
    (void)Runtime::load(RuntimeChoice::vendor());
    MESSAGE("a vendor runtime is installed here");
  } catch (const Error& e) {
    CHECK(what(e).find("librknnrt.so") != std::string::npos);
    CHECK(what(e).find("librknnmrt.so") != std::string::npos);
  }
}

TEST_CASE("ApiTable and flags") {
  ApiTable t;
  const auto entries = t.entries();
  CHECK(entries.size() == ApiTable::size);
  CHECK(entries[0].name == "rknn_init");
  CHECK(entries[0].required);
  CHECK(entries[0].slot == static_cast<void*>(&t.rknn_init));
  const InitFlags f = InitFlag::collect_perf | InitFlag::disable_flush_input_mem_cache;
  CHECK(f.has(InitFlag::collect_perf));
  CHECK_FALSE(f.has(InitFlag::async));
  CHECK(f.value() == (RKNN_FLAG_COLLECT_PERF_MASK | RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE));
  CHECK(query_cmd(AttrQuery::current_native, false) == RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR);
  CHECK(query_cmd(AttrQuery::native_nhwc, true) == RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR);
}
