// QDQ (quantization-aware) models converted without a dataset (docs/quantization.md): the small CNN of
// make_qdq_model.py, whose activations pass through QuantizeLinear/DequantizeLinear pairs and whose
// weights are int8 behind DequantizeLinear, converts to a w8a8 model holding exactly the pairs'
// scales and zero points; through the C interface it reports them as INT8 AFFINE attributes and
// computes what the engine computes for the float QDQ graph, within one output step. What an int8
// model cannot hold is refused with a message naming it.

#include "convert/converter.hpp"
#include "convert/config_json.hpp"
#include "convert/model_file.hpp"
#include "engine/onnx_reader.hpp"
#include "engine/session.hpp"
#include "quantize/affine.hpp"

#include <rknnxx/abi/c_api.h>
#include <rknnxx/toolkit/config.hpp>

#include "c_api_test_helpers.hpp"
#include "scratch_dir.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace rknnxx;
using host::quantize::AffineParams;
using test::Ctx;
using test::query_attr;
using test::read_bytes;

namespace {

std::filesystem::path data_dir() { return test::generated_dir("RKNNXX_QDQ_DIR", "make_qdq_model.py"); }

constexpr float mean[3] = {120, 110, 100};
constexpr float std_[3] = {60, 64, 58};
const std::string config_json =
    R"({"target_platform": "rk3588", "mean_values": [[120, 110, 100]], "std_values": [[60, 64, 58]]})";

host::ConvertedModel convert(const std::string& onnx, const std::string& json = config_json,
                             const std::filesystem::path& dataset = {}) {
  return host::convert_onnx(read_bytes(data_dir() / onnx), host::config_from_json(json), {}, dataset);
}

std::string error_of(const std::string& onnx, const std::string& json = config_json,
                     const std::filesystem::path& dataset = {}) {
  try {
    (void)convert(onnx, json, dataset);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(converted)";
}

// The pairs' parameters as make_qdq_model.py wrote them, uint8 zero points shifted to int8.
std::map<std::string, AffineParams> expected_params() {
  std::ifstream in(data_dir() / "qdq_cnn.txt");
  REQUIRE(in);
  std::map<std::string, AffineParams> params;
  std::string name;
  double scale = 0;
  int zero_point = 0;
  while (in >> name >> scale >> zero_point) params[name] = {static_cast<float>(scale), zero_point};
  REQUIRE(params.size() == 4);
  return params;
}

std::string converted_path() {
  static const std::string path = [] {
    const auto path = test::scratch_dir() / "qdq_cnn.hrknn";
    host::save_model_file(path, convert("qdq_cnn.onnx").file);
    return path.string();
  }();
  return path;
}

// An NHWC uint8 image.
std::vector<uint8_t> image(uint32_t seed) {
  std::vector<uint8_t> img(8 * 8 * 3);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>((i * 53 + seed * 97 + (i / 3) % 11) % 256);
  return img;
}

// y [1,4,8,8] and score [1,4] of the float QDQ graph run by the engine on the normalized image (NCHW).
std::vector<std::vector<float>> reference(const std::vector<uint8_t>& img) {
  const auto bytes = read_bytes(data_dir() / "qdq_cnn.onnx");
  host::Session session(host::Graph(host::onnx::read_model(bytes)), {.threads = 1});
  std::vector<float> chw(img.size());
  for (size_t c = 0; c < 3; ++c)
    for (size_t p = 0; p < 64; ++p) chw[c * 64 + p] = (static_cast<float>(img[p * 3 + c]) - mean[c]) / std_[c];
  const host::Tensor input = host::Tensor::from<float>({1, 3, 8, 8}, std::span<const float>(chw));
  session.prepare(std::vector<host::TensorInfo>{input.info()});
  const auto outputs = session.run(std::span(&input, 1));
  std::vector<std::vector<float>> result;
  for (const auto& t : outputs) result.emplace_back(t.values<float>().begin(), t.values<float>().end());
  return result;
}

// Both outputs of one run of the converted model on a UINT8 image: dequantized (want_float) or the int8 q.
template <class T> std::vector<std::vector<T>> run(rknn_context ctx, std::vector<uint8_t> img, bool want_float) {
  rknn_input in{};
  in.index = 0;
  in.type = RKNN_TENSOR_UINT8;
  in.fmt = RKNN_TENSOR_NHWC;
  in.buf = img.data();
  in.size = static_cast<uint32_t>(img.size());
  REQUIRE(rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC);
  REQUIRE(rknn_run(ctx, nullptr) == RKNN_SUCC);
  rknn_output outs[2]{};
  for (uint32_t i = 0; i < 2; ++i) {
    outs[i].index = i;
    outs[i].want_float = want_float ? 1 : 0;
  }
  REQUIRE(rknn_outputs_get(ctx, 2, outs, nullptr) == RKNN_SUCC);
  std::vector<std::vector<T>> result;
  for (const auto& o : outs) {
    const auto* values = static_cast<const T*>(o.buf);
    result.emplace_back(values, values + o.size / sizeof(T));
  }
  REQUIRE(rknn_outputs_release(ctx, 2, outs) == RKNN_SUCC);
  return result;
}

}  // namespace

TEST_CASE("a QDQ model converts without a dataset to w8a8 with exactly its pairs' scales and zero points") {
  const auto converted = convert("qdq_cnn.onnx");
  REQUIRE(converted.file.quantization.has_value());
  const host::ModelQuantization& q = *converted.file.quantization;
  CHECK(q.dtype == toolkit::QuantizedDtype::w8a8);
  CHECK(q.samples == 0);  // the parameters came from the model
  std::map<std::string, AffineParams> stored;
  for (const auto& t : q.tensors) stored[t.name] = {t.scale, t.zero_point};
  const auto expected = expected_params();
  // The value entering each pair and the pair's output share its parameters; Flatten keeps the pooled
  // values' grid. The weights' DequantizeLinear outputs are constants, not activations.
  const std::map<std::string, std::string> from_pair{
      {"image", "image"},   {"image_dq", "image"},   {"r1", "r1"},       {"r1_dq", "r1"}, {"y", "y"}, {"c2", "y"},
      {"pooled", "pooled"}, {"pooled_dq", "pooled"}, {"score", "pooled"}};
  CHECK(stored.size() == from_pair.size());
  for (const auto& [tensor, pair] : from_pair) {
    INFO(tensor);
    REQUIRE(stored.contains(tensor));
    CHECK(stored[tensor] == expected.at(pair));
  }
  // A uint8 zero point z is the int8 z - 128: r1's 0 and pooled's 130.
  CHECK(expected.at("r1").zero_point == -128);
  CHECK(expected.at("pooled").zero_point == 2);
}

TEST_CASE("a QDQ model through the C interface: INT8 AFFINE attributes with the graph's parameters") {
  const auto expected = expected_params();
  Ctx ctx(converted_path());
  const rknn_tensor_attr in = query_attr(ctx, RKNN_QUERY_INPUT_ATTR, 0);
  CHECK(in.type == RKNN_TENSOR_INT8);
  CHECK(in.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  CHECK(in.size == 192);
  CHECK(in.scale == expected.at("image").scale);
  CHECK(in.zp == expected.at("image").zero_point);
  const rknn_tensor_attr y = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 0);
  CHECK(std::string(y.name) == "y");
  CHECK(y.type == RKNN_TENSOR_INT8);
  CHECK(y.qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
  CHECK(y.size == 256);
  CHECK(y.scale == expected.at("y").scale);
  CHECK(y.zp == expected.at("y").zero_point);
  const rknn_tensor_attr score = query_attr(ctx, RKNN_QUERY_OUTPUT_ATTR, 1);
  CHECK(std::string(score.name) == "score");
  CHECK(score.type == RKNN_TENSOR_INT8);
  CHECK(score.scale == expected.at("pooled").scale);
  CHECK(score.zp == expected.at("pooled").zero_point);
}

TEST_CASE("a QDQ model computes what its float QDQ graph computes, within one quantization step") {
  const auto expected = expected_params();
  const AffineParams out_params[2] = {expected.at("y"), expected.at("pooled")};
  Ctx ctx(converted_path());
  std::size_t values = 0, equal = 0;
  double worst_steps = 0;
  std::set<int> levels;  // the int8 values y took
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const auto img = image(seed);
    const auto want = reference(img);
    const auto got = run<float>(ctx, img, true);
    const auto raw = run<int8_t>(ctx, img, false);
    REQUIRE(got.size() == 2);
    for (size_t o = 0; o < 2; ++o) {
      REQUIRE(got[o].size() == want[o].size());
      REQUIRE(raw[o].size() == want[o].size());
      for (size_t i = 0; i < want[o].size(); ++i) {
        const double steps = std::abs(double{got[o][i]} - want[o][i]) / out_params[o].scale;
        worst_steps = std::max(worst_steps, steps);
        equal += got[o][i] == want[o][i] ? 1 : 0;
        ++values;
        CHECK(steps <= 1.0 + 1e-4);
        // The raw integers are those of the dequantized values.
        CHECK(out_params[o].dequantize(raw[o][i]) == got[o][i]);
        if (o == 0) levels.insert(raw[o][i]);
      }
    }
  }
  CHECK(levels.size() >= 32);  // the outputs use the grid, not a few saturated values
  MESSAGE("QDQ model vs its float QDQ graph: " << equal << " of " << values << " outputs equal, worst " << worst_steps
                                               << " steps; y took " << levels.size() << " int8 values");
  CHECK(equal * 10 >= values * 9);  // rounding ties aside, the same computation
}

TEST_CASE("what an int8 model cannot hold exactly is refused, naming it") {
  const auto has = [](const std::string& text, const std::string& part) {
    INFO(text);
    return text.find(part) != std::string::npos;
  };
  CHECK(has(error_of("qdq_per_channel_activation.onnx"),
            "QDQ model: node 'q_r1' (QuantizeLinear): its scale 's1_channels' has 8 values (per channel); an int8 "
            "activation has one scale and zero point per tensor"));
  CHECK(has(error_of("qdq_pair_disagrees.onnx"), "QDQ model: node 'q_image' (QuantizeLinear) quantizes with scale"));
  CHECK(has(error_of("qdq_pair_disagrees.onnx"), "node 'dq_image' (DequantizeLinear) dequantizes with scale"));
  CHECK(has(error_of("qdq_two_scales.onnx"), "QDQ model: 'r1' is quantized with scale"));
  CHECK(has(error_of("qdq_two_scales.onnx"), "an int8 tensor has one scale and zero point"));
  CHECK(has(error_of("qdq_partial.onnx"),
            "QDQ model: 'y' (output of node 'conv2' (Conv)) is a float activation without a "
            "QuantizeLinear/DequantizeLinear pair"));
  CHECK(has(error_of("qdq_integer_output.onnx"),
            "QDQ model: node 'q_r1' (QuantizeLinear) writes the graph output 'r1_q' as integers"));
  CHECK(has(error_of("qdq_orphan_dequantize.onnx"),
            "QDQ model: node 'dq_cast' (DequantizeLinear) reads 'r1_int', which is computed but not by a "
            "QuantizeLinear"));
  // The pairs are the quantization: a dataset or another dtype is refused, naming why.
  CHECK(has(error_of("qdq_cnn.onnx", config_json, data_dir() / "qdq_cnn.txt"),
            "QDQ model: its QuantizeLinear/DequantizeLinear pairs carry its quantization parameters; convert it "
            "without a dataset"));
  CHECK(has(error_of("qdq_cnn.onnx",
                     R"({"target_platform": "rk3562", "quantized_dtype": "w8a16", "mean_values": [[120, 110, 100]],
                        "std_values": [[60, 64, 58]]})"),
            "quantized_dtype is 'w8a16', but the model's QuantizeLinear/DequantizeLinear pairs make it w8a8"));
}
