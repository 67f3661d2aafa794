// Quantized (w8a8) models through the host runtime's C interface, as a board shows them: a small
// CNN (make_int8_model.py) converted with a calibration dataset in the test, its INT8 AFFINE
// attributes field by field, the general flow (UINT8, FLOAT32 and pass_through INT8 inputs;
// want_float and raw int8 outputs), zero-copy with int8 memory and NC1HWC2 outputs, the weight
// memory, and every shape of a dynamic set (docs/quantization.md).

#include "convert/converter.hpp"
#include "convert/config_json.hpp"
#include "convert/model_file.hpp"
#include "quantize/affine.hpp"
#include "quantize/dataset.hpp"
#include "float16.hpp"

#include <rknnxx/abi/c_api.h>
#include <rknnxx/toolkit/config.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/view.hpp>

#include "c_api_test_helpers.hpp"
#include "scratch_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace rknnxx;
using host::quantize::AffineParams;
using test::Ctx;
using test::dims_of;
using test::query_attr;
using test::read_bytes;

namespace {

std::filesystem::path data_dir() { return test::generated_dir("RKNNXX_INT8_DIR", "make_int8_model.py"); }

constexpr float mean[3] = {120, 110, 100};
constexpr float std_[3] = {60, 64, 58};
const std::string normalization = R"("mean_values": [[120, 110, 100]], "std_values": [[60, 64, 58]])";
const std::string dynamic_set = R"("dynamic_input": [[[1, 3, 8, 8]], [[1, 3, 6, 6]], [[1, 3, 4, 4]]])";

// Converts `onnx` (in data_dir) with the config, quantized on dataset.txt when `quantized`; the
// .hrknn path, made once per process.
std::string converted(const std::string& onnx, const std::string& config_json, bool quantized) {
  static std::map<std::string, std::string> cache;
  const std::string key = onnx + "|" + config_json + (quantized ? "|q" : "|f");
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  const auto config = host::config_from_json(config_json);
  const auto file = host::convert_onnx(read_bytes(data_dir() / onnx), config, {},
                                       quantized ? data_dir() / "dataset.txt" : std::filesystem::path())
                        .file;
  const auto path = test::scratch_dir() / (std::to_string(cache.size()) + ".hrknn");
  host::save_model_file(path, file);
  return cache[key] = path.string();
}

std::string static_config(const std::string& extra = "") {
  return R"({"target_platform": "rk3588", )" + normalization + extra + "}";
}
std::string dynamic_config() { return R"({"target_platform": "rk3588", )" + normalization + ", " + dynamic_set + "}"; }

std::string quantized_model() { return converted("small_cnn.onnx", static_config(), true); }
std::string float_model() { return converted("small_cnn.onnx", static_config(), false); }

// The parameters the converter stored for a tensor.
AffineParams stored(const std::string& path, const std::string& tensor) {
  const auto file = host::load_model_file(path);
  REQUIRE(file.quantization.has_value());
  for (const auto& t : file.quantization->tensors)
    if (t.name == tensor) return {t.scale, t.zero_point};
  FAIL("no parameters for " << tensor);
  return {};
}

// An NHWC uint8 image.
std::vector<uint8_t> image(uint32_t h, uint32_t w, uint32_t seed) {
  std::vector<uint8_t> img(size_t{h} * w * 3);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>((i * 53 + seed * 97 + (i / 3) % 11) % 256);
  return img;
}

rknn_input input_of(void* data, size_t bytes, rknn_tensor_type type, bool pass_through = false) {
  rknn_input in{};
  in.index = 0;
  in.type = type;
  in.fmt = RKNN_TENSOR_NHWC;
  in.buf = data;
  in.size = static_cast<uint32_t>(bytes);
  in.pass_through = pass_through ? 1 : 0;
  return in;
}

// Both outputs of the last run, as float32 (want_float) or as the raw bytes.
template <class T> std::vector<std::vector<T>> outputs(rknn_context ctx, bool want_float) {
  rknn_output outs[2]{};
  for (uint32_t i = 0; i < 2; ++i) {
    outs[i].index = i;
    outs[i].want_float = want_float ? 1 : 0;
  }
  REQUIRE(rknn_outputs_get(ctx, 2, outs, nullptr) == RKNN_SUCC);
  std::vector<std::vector<T>> result;
  for (const auto& o : outs) {
    REQUIRE(o.size % sizeof(T) == 0);
    const auto* values = static_cast<const T*>(o.buf);
    result.emplace_back(values, values + o.size / sizeof(T));
  }
  REQUIRE(rknn_outputs_release(ctx, 2, outs) == RKNN_SUCC);
  return result;
}

std::vector<std::vector<float>> run_uint8(rknn_context ctx, std::vector<uint8_t> img) {
  rknn_input in = input_of(img.data(), img.size(), RKNN_TENSOR_UINT8);
  REQUIRE(rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  return outputs<float>(ctx, true);
}

}  // namespace

TEST_CASE("a quantized model reports INT8 AFFINE attributes as a board does") {
  const std::string path = quantized_model();
  Ctx ctx(path);
  rknn_input_output_num io{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof io) == RKNN_SUCC);
  CHECK(io.n_input == 1);
  CHECK(io.n_output == 2);

  // The input: the parameters of the normalized image, what the first convolution reads.
  const AffineParams in_params = stored(path, "image");
  const rknn_tensor_attr in = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  CHECK(std::string(in.name) == "image");
  CHECK(in.type == RKNN_TENSOR_INT8);
  CHECK(in.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  CHECK(in.fmt == RKNN_TENSOR_NHWC);
  CHECK(dims_of(in) == std::vector<uint32_t>{1, 8, 8, 3});
  CHECK(in.n_elems == 192);
  CHECK(in.size == 192);     // one byte an element
  CHECK(in.w_stride == 16);  // RK3588's zero-copy width alignment
  CHECK(in.size_with_stride == 8 * 16 * 3);
  CHECK(in.zp == in_params.zero_point);
  CHECK(in.scale == in_params.scale);
  CHECK(in.fl == 0);
  // Calibrated on the dataset: the normalized pixels span about (0 - 120) / 64 .. (255 - 100) / 58.
  CHECK(in_params.lowest() == doctest::Approx(-120.0 / 60).epsilon(0.05));
  CHECK(in_params.highest() == doctest::Approx(155.0 / 58).epsilon(0.05));

  const AffineParams y_params = stored(path, "y");
  const rknn_tensor_attr y = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  CHECK(std::string(y.name) == "y");
  CHECK(y.type == RKNN_TENSOR_INT8);
  CHECK(y.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  CHECK(y.fmt == RKNN_TENSOR_NCHW);
  CHECK(dims_of(y) == std::vector<uint32_t>{1, 4, 8, 8});
  CHECK(y.n_elems == 256);
  CHECK(y.size == 256);
  CHECK(y.size_with_stride == 256);
  CHECK(y.zp == y_params.zero_point);
  CHECK(y.scale == y_params.scale);

  // Flatten keeps the values of GlobalAveragePool: the score shares the pooled tensor's parameters.
  const rknn_tensor_attr score = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 1);
  CHECK(score.type == RKNN_TENSOR_INT8);
  CHECK(score.fmt == RKNN_TENSOR_UNDEFINED);
  CHECK(dims_of(score) == std::vector<uint32_t>{1, 4});
  CHECK(score.size == 4);
  CHECK(score.zp == stored(path, "pooled").zero_point);
  CHECK(score.scale == stored(path, "pooled").scale);

  // Natively: the 3-channel input stays NHWC; the 4-channel output is NC1HWC2 with RK3588's int8 C2 of 16.
  const rknn_tensor_attr native_in = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  CHECK(native_in.type == RKNN_TENSOR_INT8);
  CHECK(native_in.fmt == RKNN_TENSOR_NHWC);
  CHECK(native_in.zp == in.zp);
  const rknn_tensor_attr native_y = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  CHECK(native_y.type == RKNN_TENSOR_INT8);
  CHECK(native_y.fmt == RKNN_TENSOR_NC1HWC2);
  CHECK(dims_of(native_y) == std::vector<uint32_t>{1, 1, 8, 8, 16});
  CHECK(native_y.size_with_stride == 8 * 8 * 16);
  CHECK(native_y.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  CHECK(native_y.scale == y.scale);

  // The float model of the same ONNX file: FLOAT16, no quantization, two bytes an element.
  Ctx plain(float_model());
  const rknn_tensor_attr float_in = query_attr(plain, RKNN_QUERY_INPUT_ATTR, 0);
  CHECK(float_in.type == RKNN_TENSOR_FLOAT16);
  CHECK(float_in.qnt_type == RKNN_TENSOR_QNT_NONE);
  CHECK(float_in.size == 384);

  // The weights as the board stores them: one byte for each of the two convolutions' 248 weights.
  rknn_mem_size quantized_mem{}, float_mem{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &quantized_mem, sizeof quantized_mem) == RKNN_SUCC);
  REQUIRE(rknn_query(plain, RKNN_QUERY_MEM_SIZE, &float_mem, sizeof float_mem) == RKNN_SUCC);
  CHECK(quantized_mem.total_weight_size + 3 * (8 * 3 * 9 + 4 * 8) == float_mem.total_weight_size);
}

TEST_CASE("the general flow: UINT8 and FLOAT32 normalize and quantize, pass_through INT8 is taken as is") {
  const std::string path = quantized_model();
  Ctx ctx(path);
  Ctx plain(float_model());
  const AffineParams in_params = stored(path, "image");
  const AffineParams params[2] = {stored(path, "y"), stored(path, "pooled")};

  for (uint32_t seed = 0; seed < 3; ++seed) {
    CAPTURE(seed);
    const auto img = image(8, 8, seed);
    const auto dequantized = run_uint8(ctx, img);
    const auto reference = run_uint8(plain, img);
    for (size_t o = 0; o < 2; ++o) {
      CAPTURE(o);
      REQUIRE(dequantized[o].size() == reference[o].size());
      for (size_t i = 0; i < reference[o].size(); ++i) {
        // On the output's grid, and within a few steps of the float model's value.
        CHECK(params[o].fake_quantize(dequantized[o][i]) == dequantized[o][i]);
        CHECK(std::fabs(dequantized[o][i] - reference[o][i]) <= 4 * params[o].scale + 0.01f);
      }
    }

    // want_float = 0: the raw int8 values, whose dequantization is what want_float gives.
    rknn_input in = input_of(const_cast<uint8_t*>(img.data()), img.size(), RKNN_TENSOR_UINT8);
    REQUIRE(rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    const auto raw = outputs<int8_t>(ctx, false);
    for (size_t o = 0; o < 2; ++o) {
      REQUIRE(raw[o].size() == dequantized[o].size());
      for (size_t i = 0; i < raw[o].size(); ++i) {
        CHECK(raw[o][i] == params[o].quantize(dequantized[o][i]));
        CHECK(params[o].dequantize(raw[o][i]) == dequantized[o][i]);
      }
    }

    // FLOAT32 pixel values: the same normalization and quantization as UINT8.
    std::vector<float> pixels(img.begin(), img.end());
    in = input_of(pixels.data(), pixels.size() * sizeof(float), RKNN_TENSOR_FLOAT32);
    REQUIRE(rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    CHECK(outputs<float>(ctx, true) == dequantized);

    // pass_through: the application quantized the normalized image itself, into the native NHWC
    // int8 layout (w_stride 16): the outputs are the same.
    const rknn_tensor_attr native = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
    std::vector<int8_t> q(native.size_with_stride, 0);
    for (uint32_t h = 0; h < 8; ++h)
      for (uint32_t w = 0; w < 8; ++w)
        for (uint32_t c = 0; c < 3; ++c)
          q[(h * native.w_stride + w) * 3 + c] = static_cast<int8_t>(
              in_params.quantize((static_cast<float>(img[(h * 8 + w) * 3 + c]) - mean[c]) / std_[c]));
    in = input_of(q.data(), q.size(), RKNN_TENSOR_INT8, true);
    REQUIRE(rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC);
    REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
    CHECK(outputs<float>(ctx, true) == dequantized);
  }

  // pass_through data must be the model's INT8.
  std::vector<uint8_t> native_size(query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0).size_with_stride, 128);
  rknn_input in = input_of(native_size.data(), native_size.size(), RKNN_TENSOR_UINT8, true);
  CHECK(rknn_inputs_set(ctx, 1, &in) == RKNN_ERR_INPUT_INVALID);
}

// The zero-copy checks every quantized type shares, the image as Q in pass_through input memory
// (quantized with the input's parameters, rows of the native w_stride): output 0 bound FLOAT32
// (dequantized) equals the general flow's `want`; output 0 bound as `other_integer` is refused;
// RKNN_QUERY_MEM_SIZE's weight figure is enough for weight memory and one byte less is refused.
// Destroys its own memory, then `caller_mems`.
template <class Q> void check_pass_through_and_weight_memory(rknn_context ctx, const AffineParams& in_params,
                                                             const std::vector<uint8_t>& img,
                                                             const std::vector<float>& want,
                                                             rknn_tensor_type other_integer,
                                                             std::initializer_list<rknn_tensor_mem*> caller_mems) {
  rknn_tensor_attr q_attr = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  q_attr.pass_through = 1;
  rknn_tensor_mem* q_mem = rknn_create_mem(ctx, q_attr.size_with_stride);
  auto* q = static_cast<Q*>(q_mem->virt_addr);
  for (uint32_t h = 0; h < 8; ++h)
    for (uint32_t w = 0; w < 8; ++w)
      for (uint32_t c = 0; c < 3; ++c)
        q[(h * q_attr.w_stride + w) * 3 + c] =
            static_cast<Q>(in_params.quantize((static_cast<float>(img[(h * 8 + w) * 3 + c]) - mean[c]) / std_[c]));
  REQUIRE(rknn_set_io_mem(ctx, q_mem, &q_attr) == RKNN_SUCC);
  rknn_tensor_attr float_y = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  float_y.type = RKNN_TENSOR_FLOAT32;
  rknn_tensor_mem* float_mem = rknn_create_mem(ctx, float_y.n_elems * 4);
  REQUIRE(rknn_set_io_mem(ctx, float_mem, &float_y) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  const auto* values = static_cast<const float*>(float_mem->virt_addr);
  CHECK(std::vector<float>(values, values + 256) == want);
  // An output cannot be written as another integer type.
  rknn_tensor_attr wrong = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  wrong.type = other_integer;
  CHECK(rknn_set_io_mem(ctx, float_mem, &wrong) == RKNN_ERR_PARAM_INVALID);

  // Weight memory: RKNN_QUERY_MEM_SIZE's figure is enough, one byte less is refused.
  rknn_mem_size sizes{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &sizes, sizeof sizes) == RKNN_SUCC);
  rknn_tensor_mem* small = rknn_create_mem(ctx, sizes.total_weight_size - 1);
  CHECK(rknn_set_weight_mem(ctx, small) == RKNN_ERR_PARAM_INVALID);
  rknn_tensor_mem* weights = rknn_create_mem(ctx, sizes.total_weight_size);
  CHECK(rknn_set_weight_mem(ctx, weights) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  CHECK(std::vector<float>(values, values + 256) == want);

  for (rknn_tensor_mem* m : {q_mem, float_mem, small, weights}) CHECK(rknn_destroy_mem(ctx, m) == RKNN_SUCC);
  for (rknn_tensor_mem* m : caller_mems) CHECK(rknn_destroy_mem(ctx, m) == RKNN_SUCC);
}

// The board's zero-copy flow on the 8x8 test model: UINT8 NHWC input memory (the runtime normalizes
// and quantizes), both outputs in native memory of the model's integer type Q: y as NC1HWC2 with
// `c2` lanes (padding lanes zero), the score as is; each must equal `raw` (the general flow's
// integers). Returns the three memories, still bound, for the checks that follow.
template <class Q>
std::array<rknn_tensor_mem*, 3> check_native_zero_copy(rknn_context ctx, const std::vector<uint8_t>& img,
                                                       const std::vector<std::vector<Q>>& raw, uint32_t c2) {
  rknn_tensor_attr in_attr = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  in_attr.type = RKNN_TENSOR_UINT8;
  rknn_tensor_mem* in_mem = rknn_create_mem(ctx, in_attr.w_stride * 8 * 3);
  REQUIRE(in_mem != nullptr);
  auto* pixels = static_cast<uint8_t*>(in_mem->virt_addr);
  for (uint32_t h = 0; h < 8; ++h) std::memcpy(pixels + h * in_attr.w_stride * 3, img.data() + h * 8 * 3, 8 * 3);
  REQUIRE(rknn_set_io_mem(ctx, in_mem, &in_attr) == RKNN_SUCC);
  rknn_tensor_attr y_attr = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  rknn_tensor_attr score_attr = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
  REQUIRE(y_attr.fmt == RKNN_TENSOR_NC1HWC2);
  rknn_tensor_mem* y_mem = rknn_create_mem(ctx, y_attr.size_with_stride);
  rknn_tensor_mem* score_mem = rknn_create_mem(ctx, score_attr.size_with_stride);
  REQUIRE(rknn_set_io_mem(ctx, y_mem, &y_attr) == RKNN_SUCC);
  REQUIRE(rknn_set_io_mem(ctx, score_mem, &score_attr) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  const auto* blocked = static_cast<const Q*>(y_mem->virt_addr);
  for (uint32_t c = 0; c < c2; ++c)
    for (uint32_t hw = 0; hw < 64; ++hw) {
      CAPTURE(c);
      if (c < 4) CHECK(blocked[hw * c2 + c] == raw[0][c * 64 + hw]);
      else CHECK(blocked[hw * c2 + c] == 0);  // padding lanes
    }
  const auto* score = static_cast<const Q*>(score_mem->virt_addr);
  CHECK(std::vector<Q>(score, score + 4) == raw[1]);
  return {in_mem, y_mem, score_mem};
}

TEST_CASE("zero-copy: int8 input memory, native NC1HWC2 int8 output, weight memory of the int8 size") {
  const std::string path = quantized_model();
  Ctx ctx(path);
  const auto img = image(8, 8, 7);
  const auto general = run_uint8(ctx, img);
  rknn_input in_general = input_of(const_cast<uint8_t*>(img.data()), img.size(), RKNN_TENSOR_UINT8);
  REQUIRE(rknn_inputs_set(ctx, 1, &in_general) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  const auto raw = outputs<int8_t>(ctx, false);

  // The board's zero-copy demo: the input as UINT8 NHWC (the NPU normalizes and quantizes), the
  // outputs in their native layouts as the NPU writes them.
  const auto [in_mem, y_mem, score_mem] = check_native_zero_copy<int8_t>(ctx, img, raw, 16);

  // pass_through int8 input memory, and a FLOAT32 output (dequantized) instead of the int8 one.
  const AffineParams in_params = stored(path, "image");
  check_pass_through_and_weight_memory<int8_t>(ctx, in_params, img, general[0], RKNN_TENSOR_INT16,
                                               {in_mem, y_mem, score_mem});
}

TEST_CASE("a dynamic quantized model: one set of parameters, every shape of the set runs") {
  const std::string path = converted("small_cnn_dyn.onnx", dynamic_config(), true);
  const std::string float_path = converted("small_cnn_dyn.onnx", dynamic_config(), false);
  Ctx ctx(path);
  Ctx plain(float_path);
  const AffineParams y_params = stored(path, "y");
  const rknn_tensor_attr first = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  CHECK(dims_of(first) == std::vector<uint32_t>{1, 8, 8, 3});  // MaxShape, the calibration shape
  for (uint32_t size : {8U, 6U, 4U, 6U}) {
    CAPTURE(size);
    for (rknn_context c : {ctx.handle, plain.handle}) {
      rknn_tensor_attr shape = query_attr(c, RKNN_QUERY_INPUT_ATTR, 0);
      shape.dims[1] = shape.dims[2] = size;
      REQUIRE(rknn_set_input_shapes(c, 1, &shape) == RKNN_SUCC);
    }
    const rknn_tensor_attr in = query_attr(ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, 0);
    CHECK(in.type == RKNN_TENSOR_INT8);
    CHECK(in.size == size * size * 3);
    CHECK(in.zp == first.zp);
    CHECK(in.scale == first.scale);
    const rknn_tensor_attr y = query_attr(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, 0);
    CHECK(dims_of(y) == std::vector<uint32_t>{1, 4, size, size});
    CHECK(y.size == 4 * size * size);
    CHECK(y.scale == y_params.scale);
    const auto img = image(size, size, size);
    const auto dequantized = run_uint8(ctx, img);
    const auto reference = run_uint8(plain, img);
    REQUIRE(dequantized[0].size() == size_t{4} * size * size);
    for (size_t i = 0; i < reference[0].size(); ++i)
      CHECK(std::fabs(dequantized[0][i] - reference[0][i]) <= 4 * y_params.scale + 0.01f);
  }
}

TEST_CASE("conversion with a dataset: the config's quantization keys, refusals with the toolkit's names") {
  const auto onnx = read_bytes(data_dir() / "small_cnn.onnx");
  const auto dataset = data_dir() / "dataset.txt";
  auto quantize = [&](const std::string& extra) {
    return host::convert_onnx(onnx, host::config_from_json(static_config(extra)), {}, dataset).file;
  };
  const auto normal = quantize("");
  REQUIRE(normal.quantization.has_value());
  CHECK(normal.quantization->algorithm == toolkit::QuantizedAlgorithm::normal);
  CHECK(normal.quantization->method == toolkit::QuantizedMethod::channel());
  CHECK(normal.quantization->samples == 16);
  const auto mmse = quantize(R"(, "quantized_algorithm": "mmse", "quantized_method": "layer")");
  REQUIRE(mmse.quantization.has_value());
  CHECK(mmse.quantization->algorithm == toolkit::QuantizedAlgorithm::mmse);
  CHECK(mmse.quantization->method == toolkit::QuantizedMethod::layer());
  Ctx ctx([&] {
    const auto p = test::scratch_dir() / "mmse.hrknn";
    host::save_model_file(p, mmse);
    return p.string();
  }());
  CHECK(run_uint8(ctx, image(8, 8, 3))[0].size() == 256);

  // Without a dataset the quantization keys change nothing: a float model.
  CHECK_FALSE(host::convert_onnx(onnx, host::config_from_json(static_config(R"(, "quantized_dtype": "w8a8")")), {})
                  .file.quantization.has_value());

  CHECK_THROWS_WITH_AS((void)quantize(R"(, "quantized_dtype": "w4a16")"), doctest::Contains("quantized_dtype"),
                       toolkit::ConfigError);
  CHECK_THROWS_WITH_AS((void)quantize(R"(, "quantized_algorithm": "gdq")"), doctest::Contains("gdq"),
                       toolkit::ConfigError);
  // The thresholds of automatic hybrid quantization are unused without it, as in the toolkit.
  CHECK(*quantize(R"(, "auto_hybrid_euc_thresh": 0.5, "auto_hybrid_cos_thresh": 0.5)").quantization ==
        *normal.quantization);

  // A dataset problem names the file and the line.
  const test::TempDir dir;
  const auto bad = dir.path() / "bad.txt";
  std::ofstream(bad) << std::filesystem::absolute(data_dir() / "sample_00.npy").string() << "\nmissing.npy\n";
  CHECK_THROWS_WITH_AS((void)host::convert_onnx(onnx, host::config_from_json(static_config()), {}, bad),
                       doctest::Contains("bad.txt:2"), host::quantize::DatasetError);
}

// ---- weight-only types (w8a16, w4a16) ------------------------------------------------------

namespace {

std::string config_on(const std::string& platform, const std::string& extra = "") {
  return R"({"target_platform": ")" + platform + R"(", )" + normalization + extra + "}";
}

// Cosine similarity and the largest difference of two outputs.
std::pair<double, double> compare(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double dot = 0, aa = 0, bb = 0, worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    dot += double{a[i]} * b[i];
    aa += double{a[i]} * a[i];
    bb += double{b[i]} * b[i];
    worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
  }
  return {dot / std::sqrt(aa * bb), worst};
}

}  // namespace

TEST_CASE("weight-only models (w8a16, w4a16): float16 inputs and outputs, weights on their integer grid") {
  const std::string w8 = converted("small_cnn.onnx", config_on("rk3562", R"(, "quantized_dtype": "w8a16")"), true);
  const std::string w4 = converted("small_cnn.onnx", config_on("rk3576", R"(, "quantized_dtype": "w4a16")"), true);
  const std::string w4_group = converted(
      "small_cnn.onnx", config_on("rk3576", R"(, "quantized_dtype": "w4a16", "quantized_method": "group32")"), true);
  const std::string w4_layer = converted(
      "small_cnn.onnx", config_on("rk3576", R"(, "quantized_dtype": "w4a16", "quantized_method": "layer")"), true);

  // The section records the type, the method and the samples, and no activation parameters.
  const auto file = host::load_model_file(w4_group);
  REQUIRE(file.quantization.has_value());
  CHECK(file.quantization->dtype == toolkit::QuantizedDtype::w4a16);
  CHECK(file.quantization->method == toolkit::QuantizedMethod::group(32));
  CHECK(file.quantization->samples == 16);
  CHECK(file.quantization->tensors.empty());

  for (const std::string& platform : {std::string("rk3562"), std::string("rk3576")}) {
    CAPTURE(platform);
    const std::string path = platform == "rk3562" ? w8 : w4;
    const std::string plain_path = converted("small_cnn.onnx", config_on(platform), false);
    Ctx ctx(path);
    Ctx plain(plain_path);
    // As a float model shows them: FLOAT16, no quantization, two bytes an element.
    for (const auto& [query, index] : {std::pair(RKNN_QUERY_INPUT_ATTR, 0U), std::pair(RKNN_QUERY_OUTPUT_ATTR, 0U),
                                       std::pair(RKNN_QUERY_OUTPUT_ATTR, 1U)}) {
      const rknn_tensor_attr attr = query_attr(ctx, query, index);
      const rknn_tensor_attr float_attr = query_attr(plain, query, index);
      CHECK(attr.type == RKNN_TENSOR_FLOAT16);
      CHECK(attr.qnt_type == RKNN_TENSOR_QNT_NONE);
      CHECK(attr.size == 2 * attr.n_elems);
      CHECK(attr.scale == 1.0f);
      CHECK(attr.zp == 0);
      CHECK(attr.size == float_attr.size);
    }
    // The weights as the board stores them: one byte each (w8a16) or half a byte (w4a16) for the
    // two convolutions' 216 + 32 weights; the engine's figure for a float model is float32.
    rknn_mem_size mem{}, float_mem{};
    REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &mem, sizeof mem) == RKNN_SUCC);
    REQUIRE(rknn_query(plain, RKNN_QUERY_MEM_SIZE, &float_mem, sizeof float_mem) == RKNN_SUCC);
    const uint32_t board_bytes = platform == "rk3562" ? 216 + 32 : 108 + 16;
    CHECK(mem.total_weight_size + 4 * 248 - board_bytes == float_mem.total_weight_size);
  }

  // The outputs differ from the float16 model's by the weight rounding only: close, not equal, and
  // further with 4 bits than with 8.
  Ctx w8_ctx(w8), w4_ctx(w4), w4_group_ctx(w4_group), w4_layer_ctx(w4_layer);
  Ctx f_rk3562(converted("small_cnn.onnx", config_on("rk3562"), false));
  Ctx f_rk3576(converted("small_cnn.onnx", config_on("rk3576"), false));
  for (uint32_t seed = 0; seed < 3; ++seed) {
    const auto img = image(8, 8, seed);
    const auto reference = run_uint8(f_rk3562, img);
    CHECK(run_uint8(f_rk3576, img) == reference);
    const auto w8_out = run_uint8(w8_ctx, img);
    const auto w4_out = run_uint8(w4_ctx, img);
    const auto [w8_cos, w8_worst] = compare(w8_out[0], reference[0]);
    const auto [w4_cos, w4_worst] = compare(w4_out[0], reference[0]);
    const auto [w4_layer_cos, w4_layer_worst] = compare(run_uint8(w4_layer_ctx, img)[0], reference[0]);
    MESSAGE("seed " << seed << ": cosine against float16, w8a16 " << w8_cos << " (max diff " << w8_worst << "), w4a16 "
                    << w4_cos << " (" << w4_worst << "), w4a16 per layer " << w4_layer_cos << " (" << w4_layer_worst
                    << ")");
    CHECK(w8_worst > 0);
    CHECK(w8_cos > 0.9999);
    CHECK(w4_cos > 0.99);
    CHECK(w4_worst > w8_worst);
    CHECK(w4_layer_cos > 0.98);
    // Every weight has at most 32 input channels: one group per output channel, the per-channel grid.
    CHECK(run_uint8(w4_group_ctx, img) == w4_out);
  }
}

TEST_CASE("weight-only and platform refusals name the key and both sides") {
  const auto onnx = read_bytes(data_dir() / "small_cnn.onnx");
  const auto dataset = data_dir() / "dataset.txt";
  auto refusal = [&](const std::string& platform, const std::string& extra) -> std::string {
    try {
      (void)host::convert_onnx(onnx, host::config_from_json(config_on(platform, extra)), {}, dataset);
    } catch (const toolkit::ConfigError& e) {
      return e.key() + ": " + e.what();
    }
    return "";
  };
  CHECK(refusal("rk3588", R"(, "quantized_dtype": "w8a16")")
            .find("quantized_dtype: config: quantized_dtype 'w8a16' is supported only on rk3562, not on rk3588") == 0);
  CHECK(refusal("rk3562", R"(, "quantized_dtype": "w4a16")").find("'w4a16' is supported only on rk3576") !=
        std::string::npos);
  CHECK(refusal("rk3562", R"(, "quantized_dtype": "w8a16", "quantized_method": "group64")")
            .starts_with(
                "quantized_method: config: quantized_method 'group64' is valid only with quantized_dtype w4a16"));
  CHECK(refusal("rk3576", R"(, "quantized_dtype": "w4a16", "quantized_method": "group48")").find("multiple of 32") !=
        std::string::npos);
  CHECK(refusal("rk3588", R"(, "quantized_algorithm": "gdq")").starts_with("quantized_algorithm:"));
}

TEST_CASE("gdq (w4a16, w8a16): clip ratios chosen on the dataset, recorded, and applied by the runtime") {
  const std::string gdq = converted(
      "small_cnn.onnx", config_on("rk3576", R"(, "quantized_dtype": "w4a16", "quantized_algorithm": "gdq")"), true);
  const std::string minmax = converted("small_cnn.onnx", config_on("rk3576", R"(, "quantized_dtype": "w4a16")"), true);
  const auto file = host::load_model_file(gdq);
  REQUIRE(file.quantization.has_value());
  CHECK(file.quantization->algorithm == toolkit::QuantizedAlgorithm::gdq);
  CHECK(file.quantization->samples == 16);
  // One ratio per output channel of each convolution.
  REQUIRE(file.quantization->clipped.size() == 2);
  CHECK(file.quantization->clipped[0].name == "w1");
  CHECK(file.quantization->clipped[0].ratios.size() == 8);
  CHECK(file.quantization->clipped[1].name == "w2");
  CHECK(file.quantization->clipped[1].ratios.size() == 4);
  std::size_t clipped = 0;
  for (const auto& weight : file.quantization->clipped)
    for (float r : weight.ratios) clipped += r < 1.0f ? 1 : 0;
  MESSAGE(clipped << " of 12 channels clipped by gdq");

  // Measured on images drawn like the dataset's (uniform random pixels, which gdq's moments describe).
  Ctx gdq_ctx(gdq), minmax_ctx(minmax);
  Ctx plain(converted("small_cnn.onnx", config_on("rk3576"), false));
  std::mt19937 rng(17);
  double gdq_error = 0, minmax_error = 0;
  for (uint32_t sample = 0; sample < 32; ++sample) {
    std::vector<uint8_t> img(8 * 8 * 3);
    for (auto& pixel : img) pixel = static_cast<uint8_t>(rng() % 256);
    const auto reference = run_uint8(plain, img)[0];
    const auto a = run_uint8(gdq_ctx, img)[0];
    const auto b = run_uint8(minmax_ctx, img)[0];
    CHECK(compare(a, reference).first > 0.99);
    for (size_t i = 0; i < reference.size(); ++i) {
      gdq_error += (a[i] - reference[i]) * (a[i] - reference[i]);
      minmax_error += (b[i] - reference[i]) * (b[i] - reference[i]);
    }
  }
  MESSAGE("w4a16 output error against float16 over 32 images, gdq / min-max: " << gdq_error / minmax_error);
  CHECK(gdq_error < minmax_error);
  if (clipped > 0) CHECK(run_uint8(gdq_ctx, image(8, 8, 1)) != run_uint8(minmax_ctx, image(8, 8, 1)));

  // w8a16 with gdq converts and runs too; w8a8 with gdq is refused (above).
  Ctx w8(converted(
      "small_cnn.onnx",
      config_on("rk3562", R"(, "quantized_dtype": "w8a16", "quantized_algorithm": "gdq", "quantized_method": "layer")"),
      true));
  CHECK(run_uint8(w8, image(8, 8, 2))[0].size() == 256);
}

// ---- w16a16i_dfp: int16 dynamic fixed point on RV1106 ----------------------------------------

namespace {

std::string dfp_config(const std::string& platform = "rv1106", const std::string& extra = "") {
  return config_on(platform, R"(, "quantized_dtype": "w16a16i_dfp")" + extra);
}
std::string dfp_model() { return converted("small_cnn.onnx", dfp_config(), true); }
std::string rv1106_float_model() { return converted("small_cnn.onnx", config_on("rv1106"), false); }

// The parameters the converter stored for a tensor of a w16a16i_dfp model, with their fl.
std::pair<AffineParams, int> stored_dfp(const std::string& path, const std::string& tensor) {
  const AffineParams p = stored(path, tensor);
  const auto fl = host::quantize::dfp_fraction_length(p.scale);
  REQUIRE_MESSAGE(fl.has_value(), tensor << " has scale " << p.scale << ", not a power of two");
  REQUIRE(p.zero_point == 0);
  return {AffineParams{p.scale, 0, host::quantize::int16_dfp_range}, *fl};
}

// The image as NHWC rows of the native input's w_stride, as `T`.
template <class T> std::vector<T> strided_image(const std::vector<uint8_t>& img, uint32_t w_stride) {
  std::vector<T> out(size_t{w_stride} * 8 * 3, T{});
  for (uint32_t h = 0; h < 8; ++h)
    for (uint32_t i = 0; i < 8 * 3; ++i) out[h * w_stride * 3 + i] = static_cast<T>(img[h * 8 * 3 + i]);
  return out;
}

// One zero-copy run (RV1106 has no rknn_inputs_set or rknn_outputs_get): `input` in memory bound
// with `in_attr`, both outputs bound in their normal layout as `type`; the outputs' values.
template <class T, class In> std::vector<std::vector<T>>
zero_copy_run(rknn_context ctx, const std::vector<In>& input, rknn_tensor_attr in_attr, rknn_tensor_type type) {
  rknn_tensor_mem* in_mem = rknn_create_mem(ctx, static_cast<uint32_t>(input.size() * sizeof(In)));
  REQUIRE(in_mem != nullptr);
  std::memcpy(in_mem->virt_addr, input.data(), input.size() * sizeof(In));
  REQUIRE(rknn_set_io_mem(ctx, in_mem, &in_attr) == RKNN_SUCC);
  std::vector<std::pair<rknn_tensor_mem*, uint32_t>> outs;
  for (uint32_t o = 0; o < 2; ++o) {
    rknn_tensor_attr a = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, o);
    a.type = type;
    outs.emplace_back(rknn_create_mem(ctx, static_cast<uint32_t>(a.n_elems * sizeof(T))), a.n_elems);
    REQUIRE(rknn_set_io_mem(ctx, outs.back().first, &a) == RKNN_SUCC);
  }
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  std::vector<std::vector<T>> result;
  for (const auto& [mem, count] : outs) {
    const auto* values = static_cast<const T*>(mem->virt_addr);
    result.emplace_back(values, values + count);
    CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
  }
  CHECK(rknn_destroy_mem(ctx, in_mem) == RKNN_SUCC);
  return result;
}

// Checks the DFP fields of an attribute against the stored fl.
void check_dfp(const rknn_tensor_attr& attr, int fl) {
  CHECK(attr.type == RKNN_TENSOR_INT16);
  CHECK(attr.qnt_type == RKNN_TENSOR_QNT_DFP);
  CHECK(attr.fl == fl);
  CHECK(attr.zp == 0);
  CHECK(attr.scale == std::ldexp(1.0f, -fl));  // reported too, for code that dequantizes affinely
  CHECK(attr.size == attr.n_elems * 2);
}

}  // namespace

TEST_CASE("w16a16i_dfp: INT16 DFP attributes with each tensor's fl, int16 C2 of 8, weights two bytes each") {
  const std::string path = dfp_model();
  const auto file = host::load_model_file(path);
  REQUIRE(file.quantization.has_value());
  CHECK(file.quantization->dtype == toolkit::QuantizedDtype::w16a16i_dfp);
  CHECK(file.quantization->method == toolkit::QuantizedMethod::channel());
  CHECK(file.quantization->samples == 16);
  CHECK(file.quantization->tensors.size() >= 4);  // image, c1 (Relu fused), y, pooled
  Ctx ctx(path);

  // The normalized image spans about -2 .. 2.7: 2.7 * 2^13 fits int16, 2^14 does not.
  const auto [in_params, in_fl] = stored_dfp(path, "image");
  CHECK(in_fl == 13);
  const rknn_tensor_attr in = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  check_dfp(in, in_fl);
  CHECK(in.fmt == RKNN_TENSOR_NHWC);
  CHECK(dims_of(in) == std::vector<uint32_t>{1, 8, 8, 3});
  CHECK(in.n_elems == 192);
  CHECK(in.size == 384);

  const auto [y_params, y_fl] = stored_dfp(path, "y");
  const rknn_tensor_attr y = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  check_dfp(y, y_fl);
  CHECK(y.fmt == RKNN_TENSOR_NCHW);
  CHECK(dims_of(y) == std::vector<uint32_t>{1, 4, 8, 8});
  CHECK(y.size == 512);
  const rknn_tensor_attr score = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 1);
  check_dfp(score, stored_dfp(path, "pooled").second);
  CHECK(score.fmt == RKNN_TENSOR_UNDEFINED);
  CHECK(score.size == 8);

  // Natively: the image stays NHWC; y is NC1HWC2 with RV1106's int16 C2 of 8.
  const rknn_tensor_attr native_in = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  check_dfp(native_in, in_fl);
  CHECK(native_in.fmt == RKNN_TENSOR_NHWC);
  const rknn_tensor_attr native_y = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  check_dfp(native_y, y_fl);
  CHECK(native_y.fmt == RKNN_TENSOR_NC1HWC2);
  CHECK(dims_of(native_y) == std::vector<uint32_t>{1, 1, 8, 8, 8});
  CHECK(native_y.size_with_stride == 8 * 8 * 8 * 2);

  // The weights as the board stores them: two bytes for each of the 248 convolution weights; the
  // float model's engine keeps four.
  Ctx plain(rv1106_float_model());
  rknn_mem_size dfp_mem{}, float_mem{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &dfp_mem, sizeof dfp_mem) == RKNN_SUCC);
  REQUIRE(rknn_query(plain, RKNN_QUERY_MEM_SIZE, &float_mem, sizeof float_mem) == RKNN_SUCC);
  CHECK(dfp_mem.total_weight_size + 2 * (8 * 3 * 9 + 4 * 8) == float_mem.total_weight_size);
}

TEST_CASE("w16a16i_dfp runs: outputs on their int16 grid, as the float model within 0.9999; int16 and float data") {
  const std::string path = dfp_model();
  Ctx ctx(path);
  Ctx plain(float_model());  // float16 activations, the same semantics on every platform
  const auto [in_params, in_fl] = stored_dfp(path, "image");
  const AffineParams params[2] = {stored_dfp(path, "y").first, stored_dfp(path, "pooled").first};
  const int fls[2] = {stored_dfp(path, "y").second, stored_dfp(path, "pooled").second};
  const rknn_tensor_attr native = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  // RV1106 has only the zero-copy flow: the general one is refused as on the board.
  std::vector<uint8_t> any = image(8, 8, 0);
  rknn_input general = input_of(any.data(), any.size(), RKNN_TENSOR_UINT8);
  CHECK(rknn_inputs_set(ctx, 1, &general) != RKNN_SUCC);
  for (uint32_t seed = 0; seed < 3; ++seed) {
    CAPTURE(seed);
    const auto img = image(8, 8, seed);
    rknn_tensor_attr u8 = native;
    u8.type = RKNN_TENSOR_UINT8;
    const auto dequantized =
        zero_copy_run<float>(ctx, strided_image<uint8_t>(img, native.w_stride), u8, RKNN_TENSOR_FLOAT32);
    const auto reference = run_uint8(plain, img);
    for (size_t o = 0; o < 2; ++o) {
      CAPTURE(o);
      const auto [cosine, worst] = compare(dequantized[o], reference[o]);
      MESSAGE("output " << o << ": cosine against float16 " << cosine << " (max diff " << worst << ")");
      CHECK(cosine >= 0.9999);
      CHECK(worst < 0.01);
      for (float v : dequantized[o]) CHECK(params[o].fake_quantize(v) == v);  // q * 2^-fl with q in int16
    }

    // Outputs bound INT16: the integers q, whose dequantization is what FLOAT32 gives.
    const auto raw = zero_copy_run<int16_t>(ctx, strided_image<uint8_t>(img, native.w_stride), u8, RKNN_TENSOR_INT16);
    for (size_t o = 0; o < 2; ++o) {
      REQUIRE(raw[o].size() == dequantized[o].size());
      for (size_t i = 0; i < raw[o].size(); ++i)
        CHECK(std::ldexp(static_cast<float>(raw[o][i]), -fls[o]) == dequantized[o][i]);
    }

    // FLOAT32 pixels: the same normalization and quantization as UINT8.
    rknn_tensor_attr f32 = native;
    f32.type = RKNN_TENSOR_FLOAT32;
    CHECK(zero_copy_run<float>(ctx, strided_image<float>(img, native.w_stride), f32, RKNN_TENSOR_FLOAT32) ==
          dequantized);

    // pass_through: int16 q = round(normalized * 2^fl) in the native NHWC layout, taken as is.
    std::vector<int16_t> q(size_t{native.w_stride} * 8 * 3, 0);
    for (uint32_t h = 0; h < 8; ++h)
      for (uint32_t w = 0; w < 8; ++w)
        for (uint32_t c = 0; c < 3; ++c)
          q[(h * native.w_stride + w) * 3 + c] = static_cast<int16_t>(
              in_params.quantize((static_cast<float>(img[(h * 8 + w) * 3 + c]) - mean[c]) / std_[c]));
    rknn_tensor_attr through = native;
    through.pass_through = 1;
    CHECK(zero_copy_run<float>(ctx, q, through, RKNN_TENSOR_FLOAT32) == dequantized);
  }
  // pass_through data must be the model's INT16.
  rknn_tensor_attr wrong = native;
  wrong.type = RKNN_TENSOR_INT8;
  wrong.pass_through = 1;
  rknn_tensor_mem* mem = rknn_create_mem(ctx, native.size_with_stride);
  CHECK(rknn_set_io_mem(ctx, mem, &wrong) != RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, mem) == RKNN_SUCC);
}

TEST_CASE("w16a16i_dfp, zero-copy: int16 input and NC1HWC2 output memory, float32 output, int16 weight memory") {
  const std::string path = dfp_model();
  Ctx ctx(path);
  const auto img = image(8, 8, 5);
  rknn_tensor_attr u8 = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  u8.type = RKNN_TENSOR_UINT8;
  const auto general = zero_copy_run<float>(ctx, strided_image<uint8_t>(img, u8.w_stride), u8, RKNN_TENSOR_FLOAT32);
  const auto raw = zero_copy_run<int16_t>(ctx, strided_image<uint8_t>(img, u8.w_stride), u8, RKNN_TENSOR_INT16);

  // UINT8 NHWC input memory (normalized and quantized to int16 by the runtime), native outputs.
  const auto [in_mem, y_mem, score_mem] = check_native_zero_copy<int16_t>(ctx, img, raw, 8);

  // pass_through int16 input memory, and y written FLOAT32 (dequantized).
  const auto [in_params, in_fl] = stored_dfp(path, "image");
  check_pass_through_and_weight_memory<int16_t>(ctx, in_params, img, general[0], RKNN_TENSOR_INT8,
                                                {in_mem, y_mem, score_mem});
}

TEST_CASE("w16a16i_dfp conversion: rv1103 too, per layer; other platforms and the clip searches refused") {
  const auto onnx = read_bytes(data_dir() / "small_cnn.onnx");
  const auto dataset = data_dir() / "dataset.txt";
  auto quantize = [&](const std::string& config) {
    return host::convert_onnx(onnx, host::config_from_json(config), {}, dataset).file;
  };
  const auto layer = quantize(dfp_config("rv1103", R"(, "quantized_method": "layer")"));
  REQUIRE(layer.quantization.has_value());
  CHECK(layer.quantization->method == toolkit::QuantizedMethod::layer());
  for (const auto& t : layer.quantization->tensors) {
    CAPTURE(t.name);
    CHECK(host::quantize::dfp_fraction_length(t.scale).has_value());
    CHECK(t.zero_point == 0);
  }
  CHECK_THROWS_WITH_AS((void)quantize(dfp_config("rk3588")),
                       doctest::Contains("quantized_dtype 'w16a16i_dfp' is supported only on rv1103 and rv1106"),
                       toolkit::ConfigError);
  CHECK_THROWS_WITH_AS((void)quantize(dfp_config("rv1106", R"(, "quantized_algorithm": "mmse")")),
                       doctest::Contains("quantized_algorithm 'mmse' is not supported with quantized_dtype"),
                       toolkit::ConfigError);
}

TEST_CASE("w16a16i_dfp through the C++ layer: TensorInfo reads DFP, copy() unblocks and dequantizes int16") {
  const std::string path = dfp_model();
  Ctx ctx(path);
  const auto img = image(8, 8, 9);
  rknn_tensor_attr u8 = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, 0);
  u8.type = RKNN_TENSOR_UINT8;
  const auto want = zero_copy_run<float>(ctx, strided_image<uint8_t>(img, u8.w_stride), u8, RKNN_TENSOR_FLOAT32);

  // y as the NPU writes it: int16 NC1HWC2; rknnxx's view of the attribute dequantizes it with 2^-fl.
  const auto pixels = strided_image<uint8_t>(img, u8.w_stride);
  rknn_tensor_mem* in_mem = rknn_create_mem(ctx, static_cast<uint32_t>(pixels.size()));
  std::memcpy(in_mem->virt_addr, pixels.data(), pixels.size());
  REQUIRE(rknn_set_io_mem(ctx, in_mem, &u8) == RKNN_SUCC);
  rknn_tensor_attr y_attr = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 0);
  rknn_tensor_attr score_attr = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
  rknn_tensor_mem* y_mem = rknn_create_mem(ctx, y_attr.size_with_stride);
  rknn_tensor_mem* score_mem = rknn_create_mem(ctx, score_attr.size_with_stride);
  REQUIRE(rknn_set_io_mem(ctx, y_mem, &y_attr) == RKNN_SUCC);
  REQUIRE(rknn_set_io_mem(ctx, score_mem, &score_attr) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);

  const TensorInfo info(y_attr, TensorIo::output);
  CHECK(info.type() == TensorType::int16);
  CHECK(info.format() == TensorFormat::nc1hwc2);
  CHECK(info.quantization() == Quantization::dynamic_fixed_point(y_attr.fl));
  CHECK(info.quantization().fraction_length() == y_attr.fl);
  std::vector<float> y(256);
  copy(ErasedView::of(y_mem->virt_addr, y_mem->size, info, false),
       erase(nchw_view(y.data(), {.n = 1, .c = 4, .h = 8, .w = 8})));
  CHECK(y == want[0]);
  CHECK(y != std::vector<float>(256, 0.0f));
  for (rknn_tensor_mem* m : {in_mem, y_mem, score_mem}) CHECK(rknn_destroy_mem(ctx, m) == RKNN_SUCC);
}

// ---- automatic hybrid quantization ------------------------------------------------------------

namespace {

// hybrid_mlp.onnx (make_int8_model.py) converted on hybrid_dataset.txt, with auto_hybrid or not.
struct HybridModel {
  std::string path;
  host::ModelFile file;
  std::vector<host::Float16Layer> layers;
};

HybridModel hybrid_model(const std::string& extra, bool auto_hybrid, const std::string& platform = "rk3588") {
  static int count = 0;
  const auto config = host::config_from_json(R"({"target_platform": ")" + platform + "\"" + extra + "}");
  auto converted = host::convert_onnx(read_bytes(data_dir() / "hybrid_mlp.onnx"), config, {},
                                      data_dir() / "hybrid_dataset.txt", auto_hybrid);
  const auto path = test::scratch_dir() / ("hybrid-" + std::to_string(count++) + ".hrknn");
  host::save_model_file(path, converted.file);
  return {path.string(), std::move(converted.file), std::move(converted.float16_layers)};
}

// x [1,16] in [0, 1) as FLOAT32; both outputs (z, y) as float32 (want_float) or their raw bytes.
template <class T> std::vector<std::vector<T>> run_mlp(rknn_context ctx, uint32_t seed, bool want_float) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> x(16);
  for (float& v : x) v = uniform(rng);
  rknn_input in = input_of(x.data(), x.size() * sizeof(float), RKNN_TENSOR_FLOAT32);
  in.fmt = RKNN_TENSOR_UNDEFINED;
  REQUIRE(rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  return outputs<T>(ctx, want_float);
}

}  // namespace

TEST_CASE("automatic hybrid quantization keeps the badly quantized layer, and only it, in float16") {
  const HybridModel plain = hybrid_model("", false);
  const HybridModel hybrid = hybrid_model("", true);
  REQUIRE(hybrid.file.quantization.has_value());
  // z's Gemm (the outlier weights) is the one layer below the default cosine threshold 0.98.
  REQUIRE(hybrid.layers.size() == 1);
  CHECK(hybrid.layers[0].value == "z");
  CHECK(hybrid.layers[0].op_type == "Gemm");
  CHECK(hybrid.layers[0].node == "gemm2");
  CHECK(hybrid.layers[0].cosine < 0.98);
  CHECK(hybrid.layers[0].euclidean > 0.0);
  MESSAGE("z's Gemm: single cosine " << hybrid.layers[0].cosine << ", euclidean " << hybrid.layers[0].euclidean);
  CHECK(hybrid.file.quantization->float16 == std::vector<std::string>{"z"});
  // The activation parameters are the plain model's: an int8 layer reading z still needs them.
  CHECK(hybrid.file.quantization->tensors == plain.file.quantization->tensors);
  CHECK(plain.layers.empty());
  CHECK(plain.file.quantization->float16.empty());

  Ctx ctx(hybrid.path);
  Ctx int8(plain.path);
  // z, computed by a float16 layer, reaches the application as FLOAT16 without parameters (as the
  // vendor runtime reports it); y and the input stay INT8 AFFINE.
  const rknn_tensor_attr z = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  CHECK(z.type == RKNN_TENSOR_FLOAT16);
  CHECK(z.qnt_type == RKNN_TENSOR_QNT_NONE);
  CHECK(z.n_elems == 16);
  CHECK(z.size == 2 * z.n_elems);
  CHECK(z.scale == 1.0f);
  CHECK(z.zp == 0);
  CHECK(query_attr(int8, RKNN_QUERY_OUTPUT_ATTR, 0).type == RKNN_TENSOR_INT8);
  for (const auto& [query, index] : {std::pair(RKNN_QUERY_INPUT_ATTR, 0U), std::pair(RKNN_QUERY_OUTPUT_ATTR, 1U)}) {
    const rknn_tensor_attr a = query_attr(ctx, query, index);
    const rknn_tensor_attr b = query_attr(int8, query, index);
    CHECK(a.type == RKNN_TENSOR_INT8);
    CHECK(a.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
    CHECK(a.size == a.n_elems);
    CHECK(a.scale == b.scale);
    CHECK(a.zp == b.zp);
  }
  // The weights: z's 16 x 16 stay float16, two bytes each instead of one.
  rknn_mem_size mem{}, int8_mem{};
  REQUIRE(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &mem, sizeof mem) == RKNN_SUCC);
  REQUIRE(rknn_query(int8, RKNN_QUERY_MEM_SIZE, &int8_mem, sizeof int8_mem) == RKNN_SUCC);
  CHECK(mem.total_weight_size == int8_mem.total_weight_size + 16 * 16);

  // Closer to float than plain w8a8, on both outputs.
  const HybridModel float_model = [] {
    const auto config = host::config_from_json(R"({"target_platform": "rk3588"})");
    const auto path = test::scratch_dir() / "hybrid-float.hrknn";
    host::save_model_file(path, host::convert_onnx(read_bytes(data_dir() / "hybrid_mlp.onnx"), config).file);
    return HybridModel{path.string(), {}, {}};
  }();
  Ctx reference_ctx(float_model.path);
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const auto reference = run_mlp<float>(reference_ctx, seed, true);
    const auto mixed = run_mlp<float>(ctx, seed, true);
    const auto w8a8 = run_mlp<float>(int8, seed, true);
    for (size_t o = 0; o < 2; ++o) {
      const double hybrid_cos = compare(mixed[o], reference[o]).first;
      const double int8_cos = compare(w8a8[o], reference[o]).first;
      MESSAGE("seed " << seed << ", output " << o << ": cosine against float, hybrid " << hybrid_cos << ", w8a8 "
                      << int8_cos);
      CHECK(hybrid_cos > int8_cos);
      CHECK(1.0 - hybrid_cos < 0.5 * (1.0 - int8_cos));  // at least halves the distance from 1
    }
    // Raw (want_float = 0): z as the float16 bits of the values want_float gives (on y's Gemm's int8
    // grid too, as that int8 layer reads z).
    const auto raw = run_mlp<uint16_t>(ctx, seed, false);
    REQUIRE(raw[0].size() == 16);
    for (size_t i = 0; i < 16; ++i) CHECK(raw[0][i] == host::float_to_half_bits(mixed[0][i]));
  }
}

TEST_CASE("automatic hybrid quantization: thresholds no layer passes keep none, bit for bit w8a8; refusals") {
  const HybridModel plain = hybrid_model("", false);
  for (const std::string& threshold : {std::string("-1"), std::string("0")}) {
    CAPTURE(threshold);
    const HybridModel none = hybrid_model(R"(, "auto_hybrid_cos_thresh": )" + threshold, true);
    CHECK(none.layers.empty());
    CHECK(*none.file.quantization == *plain.file.quantization);
    Ctx a(none.path);
    Ctx b(plain.path);
    for (uint32_t seed = 0; seed < 3; ++seed)
      CHECK(run_mlp<uint8_t>(a, seed, false) == run_mlp<uint8_t>(b, seed, false));
  }
  // The euclidean threshold, when set, keeps a layer too: at 0 every layer with any error, the last one
  // (y) included; far above any distance, none.
  const HybridModel every = hybrid_model(R"(, "auto_hybrid_cos_thresh": -1, "auto_hybrid_euc_thresh": 0)", true);
  std::vector<std::string> values;
  for (const auto& l : every.layers) values.push_back(l.value);
  CHECK(std::find(values.begin(), values.end(), "z") != values.end());
  CHECK(std::find(values.begin(), values.end(), "y") != values.end());
  Ctx all(every.path);
  CHECK(query_attr(all, RKNN_QUERY_OUTPUT_ATTR, 1).type == RKNN_TENSOR_FLOAT16);
  CHECK(hybrid_model(R"(, "auto_hybrid_cos_thresh": -1, "auto_hybrid_euc_thresh": 1e9)", true).layers.empty());

  // Refusals: no dataset; a weight-only type, naming both.
  const auto onnx = read_bytes(data_dir() / "hybrid_mlp.onnx");
  CHECK_THROWS_WITH_AS(
      (void)host::convert_onnx(onnx, host::config_from_json(R"({"target_platform": "rk3588"})"), {}, {}, true),
      doctest::Contains("needs a dataset"), std::runtime_error);
  try {
    (void)hybrid_model(R"(, "quantized_dtype": "w8a16")", true, "rk3562");
    FAIL("expected a ConfigError");
  } catch (const toolkit::ConfigError& e) {
    CHECK(e.key() == "quantized_dtype");
    const std::string message = e.what();
    CHECK(message.find("'w8a16' with automatic hybrid quantization") != std::string::npos);
    CHECK(message.find("w8a8") != std::string::npos);
  }
}
