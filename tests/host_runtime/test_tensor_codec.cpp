// The host runtime's codec (host/runtime/tensor_codec.cpp): caller buffers <-> engine tensors.
// No model needed.
#include "runtime/api_error.hpp"
#include "runtime/tensor_codec.hpp"

#include <rknnxx/core/float16.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace rknnxx::host;

namespace {
constexpr std::byte fill{0xAB};

std::vector<std::byte> prefilled(std::size_t bytes) { return std::vector<std::byte>(bytes, fill); }

bool all_zero(const std::vector<std::byte>& b) {
  for (std::byte x : b)
    if (x != std::byte{0}) return false;
  return true;
}

int code_of(auto&& call) {
  try {
    call();
  } catch (const ApiError& e) {
    return e.code();
  }
  return RKNN_SUCC;
}
}  // namespace

TEST_CASE("encode: an empty 4-D tensor still clears its padded buffer") {
  struct Case {
    const char* what;
    std::vector<int64_t> shape;  // NCHW
    BufferFormat format;
    std::size_t bytes;
  };
  const std::vector<Case> cases{
      {"NHWC, W = 0 with a w_stride", {1, 3, 2, 0}, {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 2, 0, 3}, 4, 0}, 24},
      {"NHWC, H = 0 with an h_stride", {1, 3, 0, 4}, {RKNN_TENSOR_FLOAT16, RKNN_TENSOR_NHWC, {1, 0, 4, 3}, 0, 2}, 48},
      {"NC1HWC2, W = 0 with a row pitch",
       {1, 3, 2, 0},
       {RKNN_TENSOR_INT8, RKNN_TENSOR_NC1HWC2, {1, 1, 2, 4, 8}, 0, 0},
       64},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    REQUIRE(c.format.required_bytes() == c.bytes);
    const Tensor source(DataType::float32, c.shape);
    std::vector<std::byte> target = prefilled(c.bytes);
    encode(source, c.format, target);
    CHECK(all_zero(target));
  }
}

TEST_CASE("encode: an empty tensor's format is checked before anything is written") {
  const Tensor source(DataType::float32, {1, 3, 2, 0});
  const BufferFormat wrong{RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 2, 1, 3}, 4, 0};  // W 1, the tensor's is 0
  std::vector<std::byte> target = prefilled(wrong.required_bytes());
  CHECK(code_of([&] { encode(source, wrong, target); }) == RKNN_ERR_INPUT_INVALID);
  CHECK(target == prefilled(wrong.required_bytes()));
  const BufferFormat not_4d{RKNN_TENSOR_UINT8, static_cast<rknn_tensor_format>(7), {1, 2, 0, 3}, 0, 0};
  CHECK(code_of([&] { encode(source, not_4d, target); }) == RKNN_ERR_INPUT_INVALID);
  CHECK(target == prefilled(wrong.required_bytes()));
}

TEST_CASE("encode: NHWC with a w_stride, padding zeroed, integers rounded half to even and saturated") {
  // NCHW [1, 1, 1, 6] into UINT8 NHWC [1, 1, 6, 1] with w_stride 8.
  const Tensor source =
      Tensor::from<float>({1, 1, 1, 6}, {2.5f, 3.5f, -2.5f, 300.f, std::numeric_limits<float>::quiet_NaN(), 0.5f});
  const BufferFormat format{RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 1, 6, 1}, 8, 0};
  std::vector<std::byte> target = prefilled(format.required_bytes());
  REQUIRE(target.size() == 8);
  encode(source, format, target);
  std::vector<std::uint8_t> got(8);
  std::memcpy(got.data(), target.data(), 8);
  CHECK(got == std::vector<std::uint8_t>{2, 4, 0, 255, 0, 0, 0, 0});

  const BufferFormat signed_format{RKNN_TENSOR_INT16, RKNN_TENSOR_UNDEFINED, {6}, 0, 0};
  const Tensor flat = Tensor::from<float>({6}, {2.5f, 3.5f, -2.5f, -3.5f, 1e9f, -1e9f});
  std::vector<std::byte> out = prefilled(signed_format.required_bytes());
  encode(flat, signed_format, out);
  std::vector<std::int16_t> i16(6);
  std::memcpy(i16.data(), out.data(), out.size());
  CHECK(i16 == std::vector<std::int16_t>{2, 4, -2, -4, 32767, -32768});
}

TEST_CASE("encode: NC1HWC2 padding lanes read as zero") {
  // C = 3 in blocks of C2 = 4: lane 3 is padding.
  const Tensor source = Tensor::from<float>({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  const BufferFormat format{RKNN_TENSOR_INT8, RKNN_TENSOR_NC1HWC2, {1, 1, 1, 2, 4}, 0, 0};
  std::vector<std::byte> target = prefilled(format.required_bytes());
  encode(source, format, target);
  std::vector<std::int8_t> got(8);
  std::memcpy(got.data(), target.data(), 8);
  CHECK(got == std::vector<std::int8_t>{1, 3, 5, 0, 2, 4, 6, 0});
}

TEST_CASE("decode: mean/std per channel, then rounding half to even into the engine's type") {
  // UINT8 NHWC [1, 1, 2, 2] -> uint8 NCHW [1, 2, 1, 2]; channel 0 minus 0.5, channel 1 halved.
  const std::vector<std::uint8_t> pixels{3, 5, 4, 7};  // (w0: c0 3, c1 5), (w1: c0 4, c1 7)
  const BufferFormat format{RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 1, 2, 2}, 0, 0};
  Tensor target(DataType::uint8, {1, 2, 1, 2});
  decode(std::as_bytes(std::span(pixels)), format, {{0.5f, 0.f}, {1.f, 2.f}}, target);
  const auto v = target.values<std::uint8_t>();
  // 2.5 -> 2, 3.5 -> 4, 2.5 -> 2, 3.5 -> 4
  CHECK(std::vector<std::uint8_t>(v.begin(), v.end()) == std::vector<std::uint8_t>{2, 4, 2, 4});
}

TEST_CASE("decode: uint8 and int8 images into float32, by table or by row, give every element's own value") {
  // A 3-channel NHWC image with a w_stride, every byte value in every channel: 18 x 20 pixels (at least 256: the
  // table path) and 3 x 5 (the row path). Each element must be the value computed alone, (v - mean) / std in double
  // to float, then `finish` (here: float16 rounding, then a step that marks where it ran).
  const Normalization normalization{{123.675f, 116.28f, 103.53f}, {58.395f, 57.12f, 57.375f}};
  const auto finish = [](std::span<float> values) {
    for (float& v : values) v = static_cast<float>(rknnxx::Float16(v)) + 1000.0f;
  };
  for (const rknn_tensor_type type : {RKNN_TENSOR_UINT8, RKNN_TENSOR_INT8}) {
    for (const uint32_t h : {18u, 3u}) {
      CAPTURE(type);
      CAPTURE(h);
      const uint32_t w = h + 2, stride = w + 3, c = 3;
      std::vector<std::uint8_t> pixels(std::size_t{h} * stride * c);
      for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 97 + 5);
      const BufferFormat format{type, RKNN_TENSOR_NHWC, {1, h, w, c}, stride, 0};
      Tensor target = Tensor::uninitialized(DataType::float32, {1, c, h, w});
      decode(std::as_bytes(std::span(pixels)), format, normalization, target, finish);
      const float* got = target.data<float>();
      bool all_equal = true;
      for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
          for (uint32_t x = 0; x < w; ++x) {
            const std::uint8_t byte = pixels[(std::size_t{y} * stride + x) * c + ch];
            const double v = type == RKNN_TENSOR_INT8 ? static_cast<std::int8_t>(byte) : byte;
            float want = static_cast<float>((v - normalization.mean[ch]) / normalization.std[ch]);
            finish({&want, 1});
            all_equal = all_equal && std::memcmp(&want, &got[(ch * h + y) * w + x], sizeof want) == 0;
          }
      CHECK(all_equal);
    }
  }
}

TEST_CASE("decode: an empty 4-D tensor reads nothing, on one thread or on a pool") {
  // Zero images, channels, rows or columns: no row to convert (and no division by the zero extent).
  ThreadPool pool(2);
  const std::vector<std::uint8_t> pixels(16, 7);
  for (const std::vector<uint32_t>& nhwc :
       std::vector<std::vector<uint32_t>>{{0, 2, 2, 3}, {1, 0, 2, 3}, {1, 2, 0, 3}, {1, 2, 2, 0}}) {
    CAPTURE(nhwc[0]);
    const BufferFormat format{RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, nhwc, 0, 0};
    Tensor target = Tensor::uninitialized(DataType::float32, {nhwc[0], nhwc[3], nhwc[1], nhwc[2]});
    decode(std::as_bytes(std::span(pixels)), format, {}, target);
    decode(std::as_bytes(std::span(pixels)), format, {}, target, {}, &pool);
    CHECK(target.elements() == 0);
  }
}

TEST_CASE("decode: a bool buffer reads any non-zero byte as true") {
  const std::vector<std::uint8_t> bytes{0, 1, 0xAB, 0};
  const BufferFormat format{RKNN_TENSOR_BOOL, RKNN_TENSOR_UNDEFINED, {4}, 0, 0};
  Tensor target(DataType::int32, {4});
  decode(std::as_bytes(std::span(bytes)), format, {}, target);
  const auto v = target.values<std::int32_t>();
  CHECK(std::vector<std::int32_t>(v.begin(), v.end()) == std::vector<std::int32_t>{0, 1, 1, 0});
}

TEST_CASE("decode/encode: short buffers and int4 are refused with the runtime's codes") {
  const Tensor source(DataType::float32, {1, 3, 2, 2});
  const BufferFormat format{RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, {1, 3, 2, 2}, 0, 0};
  std::vector<std::byte> small(8);
  CHECK(code_of([&] { encode(source, format, small); }) == RKNN_ERR_OUTPUT_INVALID);
  Tensor target(DataType::float32, {1, 3, 2, 2});
  CHECK(code_of([&] { decode(small, format, {}, target); }) == RKNN_ERR_INPUT_INVALID);
  const BufferFormat int4{RKNN_TENSOR_INT4, RKNN_TENSOR_NCHW, {1, 3, 2, 2}, 0, 0};
  std::vector<std::byte> big(1024);
  CHECK(code_of([&] { encode(source, int4, big); }) == RKNN_ERR_PARAM_INVALID);
}

TEST_CASE("required_bytes: strides and dims whose product wraps 64 bits are refused, not wrapped (issue 12)") {
  // NATIVE_NHWC output, C = 4, float32, strides 2^30: 2^30 * 2^30 * 4 * 4 bytes wrapped to 0.
  BufferFormat output{RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC, {1, 8, 8, 4}, 1U << 30, 1U << 30};
  CHECK(code_of([&] { (void)output.required_bytes(); }) == RKNN_ERR_PARAM_INVALID);
  // NHWC float16 input, C = 3: 6 * h_stride * w_stride wrapped to 327674.
  BufferFormat input{RKNN_TENSOR_FLOAT16, RKNN_TENSOR_NHWC, {1, 224, 224, 3}, 1431633921U, 2147516415U};
  CHECK(code_of([&] { (void)input.required_bytes(); }) == RKNN_ERR_PARAM_INVALID);
  // An undefined layout's element count wraps too.
  BufferFormat flat{RKNN_TENSOR_INT8, RKNN_TENSOR_UNDEFINED, {1U << 31, 1U << 31, 1U << 31}, 0, 0};
  CHECK(code_of([&] { (void)flat.required_bytes(); }) == RKNN_ERR_PARAM_INVALID);
  // Large but representable sizes are still computed.
  BufferFormat large{RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC, {1, 8, 8, 4}, 1U << 20, 1U << 20};
  if constexpr (sizeof(std::size_t) == 8) CHECK(large.required_bytes() == (uint64_t{1} << 40) * 16);
  auto tensor_and_buffer = prefilled(64);
  Tensor t(DataType::float32, {1, 4, 8, 8});
  CHECK(code_of([&] { encode(t, output, tensor_and_buffer); }) == RKNN_ERR_PARAM_INVALID);
  CHECK(tensor_and_buffer == prefilled(64));  // nothing written
}

namespace {
// The code and message of what `call` throws; empty when it does not throw.
std::pair<int, std::string> failure_of(auto&& call) {
  try {
    call();
  } catch (const ApiError& e) {
    return {e.code(), e.what()};
  }
  return {RKNN_SUCC, {}};
}
}  // namespace

TEST_CASE("check_fits: refuses what decode and encode refuse, with their codes and messages, reading no data") {
  // NCHW [1, 3, 2, 4]: the binding checks of rknn_set_io_mem use check_fits instead of a probe decode.
  const std::vector<int64_t> shape{1, 3, 2, 4};
  const std::vector<BufferFormat> formats{
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 2, 4, 3}, 0, 0},                    // fits
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 2, 4, 3}, 6, 3},                    // fits, padded
      {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW, {1, 3, 2, 4}, 0, 0},                  // fits
      {RKNN_TENSOR_INT8, RKNN_TENSOR_NC1HWC2, {1, 1, 2, 4, 8}, 0, 0},               // fits
      {RKNN_TENSOR_FLOAT16, RKNN_TENSOR_UNDEFINED, {24}, 0, 0},                     // fits, flat
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 3, 2, 4}, 0, 0},                    // NCHW dims given for NHWC
      {RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC, {1, 2, 4, 3}, 2, 0},                    // w_stride below the width
      {RKNN_TENSOR_INT8, RKNN_TENSOR_NC1HWC2, {1, 2, 2, 4, 8}, 0, 0},               // C1 is not ceil(C / C2)
      {RKNN_TENSOR_FLOAT32, RKNN_TENSOR_UNDEFINED, {25}, 0, 0},                     // one element too many
      {RKNN_TENSOR_INT4, RKNN_TENSOR_NCHW, {1, 3, 2, 4}, 0, 0},                     // a type I/O cannot hold
      {RKNN_TENSOR_UINT8, static_cast<rknn_tensor_format>(7), {1, 2, 4, 3}, 0, 0},  // not a layout
  };
  for (const BufferFormat& format : formats) {
    INFO(format.describe());
    const auto checked = failure_of([&] { check_fits(format, DataType::float32, shape, RKNN_ERR_INPUT_INVALID); });
    // decode reads a buffer of the format's size (or of 64 bytes where the size is refused).
    const auto size =
        failure_of([&] { (void)format.required_bytes(); }).first == RKNN_SUCC ? format.required_bytes() : 64;
    std::vector<std::byte> buffer(size);
    Tensor target(DataType::float32, shape);
    const auto decoded = failure_of([&] { decode(buffer, format, {}, target); });
    CHECK(checked == decoded);
    const auto encoded = failure_of([&] { encode(target, format, buffer); });
    const auto checked_out = failure_of([&] { check_fits(format, DataType::float32, shape, RKNN_ERR_OUTPUT_INVALID); });
    CHECK(checked_out == encoded);
  }
}

TEST_CASE("encode: a value map turns each value before it is stored, in every layout") {
  // What a quantized output written INT8 does: q = round(v / 0.5) + 1, stored straight from the float tensor.
  const Tensor source = Tensor::from<float>({1, 3, 1, 2}, {0.f, 0.5f, 1.f, -1.f, 2.f, 100.f});
  auto map = [](double v) { return v / 0.5 + 1; };
  SUBCASE("NC1HWC2, padding lanes still zero") {
    const BufferFormat format{RKNN_TENSOR_INT8, RKNN_TENSOR_NC1HWC2, {1, 1, 1, 2, 4}, 0, 0};
    std::vector<std::byte> target = prefilled(format.required_bytes());
    encode(source, format, target, map);
    std::vector<std::int8_t> got(8);
    std::memcpy(got.data(), target.data(), 8);
    CHECK(got == std::vector<std::int8_t>{1, 3, 5, 0, 2, -1, 127, 0});  // 201 saturates
  }
  SUBCASE("flat") {
    const BufferFormat format{RKNN_TENSOR_INT8, RKNN_TENSOR_UNDEFINED, {6}, 0, 0};
    std::vector<std::byte> target = prefilled(format.required_bytes());
    encode(source, format, target, map);
    std::vector<std::int8_t> got(6);
    std::memcpy(got.data(), target.data(), 6);
    CHECK(got == std::vector<std::int8_t>{1, 2, 3, -1, 5, 127});
  }
}
