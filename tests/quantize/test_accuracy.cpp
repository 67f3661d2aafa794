// The accuracy analysis (entire and single similarity per tensor) on small graphs built by hand.
#include "accuracy.hpp"

#include "../engine/engine_test_model.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace rknnxx::host;
using namespace rknnxx::host::quantize;
using rknnxx::host::testing::attr;
using rknnxx::host::testing::ModelBuilder;
using rknnxx::host::testing::random_tensor;

namespace {

// x [1,1,4,4] integers 0..255 -> "scale": Conv 1x1 by 255 (a weight and outputs that quantize
// exactly) -> "flat": Reshape [1,1,16,1] -> three 3x1 Convs with random weights and Tanh between ->
// "y".
onnx::ModelProto chain_model() {
  ModelBuilder b;
  b.input("x", DataType::float32, {1, 1, 4, 4})
      .output("y")
      .initializer("w255", Tensor::from<float>({1, 1, 1, 1}, {255.0f}))
      .initializer("shape", Tensor::from<int64_t>({4}, {1, 1, 16, 1}))
      .node("Conv", {"x", "w255"}, {"scaled"}, {}, "scale")
      .node("Reshape", {"scaled", "shape"}, {"flat"}, {}, "flatten");
  std::string previous = "flat";
  for (int layer = 0; layer < 3; ++layer) {
    const std::string w = "w" + std::to_string(layer);
    const std::string conv = "conv" + std::to_string(layer);
    const std::string out = layer == 2 ? "y" : "tanh" + std::to_string(layer);
    b.initializer(w,
                  random_tensor({4, layer == 0 ? 1 : 4, 3, 1}, 10 + static_cast<uint32_t>(layer),
                                layer == 0 ? -2e-5f : -1.0f, layer == 0 ? 2e-5f : 1.0f));
    b.node("Conv", {previous, w}, {conv}, {attr("pads", std::vector<int64_t>{1, 0, 1, 0})}, conv);
    if (layer < 2) b.node("Tanh", {conv}, {out}, {}, "tanh" + std::to_string(layer));
    else b.node("Identity", {conv}, {out}, {}, "out");
    previous = out;
  }
  return b.model();
}

// Whole numbers from 0 to 255; the first sample holds both ends, so the input's scale is exactly 1.
std::vector<Tensor> integer_sample(uint32_t seed) {
  Tensor t = random_tensor({1, 1, 4, 4}, seed, 0.0f, 255.0f);
  for (float& v : t.values<float>()) v = std::round(v);
  t.values<float>()[0] = 0.0f;
  t.values<float>()[1] = 255.0f;
  std::vector<Tensor> s;
  s.push_back(std::move(t));
  return s;
}

ActivationTable calibrated(const Graph& graph) {
  Calibrator calibrator(graph, Algorithm::normal, 1);
  for (uint32_t i = 0; i < 8; ++i) calibrator.add(integer_sample(200 + i));
  return calibrator.finish();
}

const TensorAccuracy& row(const std::vector<TensorAccuracy>& report, std::string_view name) {
  for (const auto& r : report)
    if (r.name == name) return r;
  FAIL("no row for " << name);
  return report.front();
}

}  // namespace

TEST_CASE("similarity: cosine and euclidean distance") {
  const std::vector<float> a{1.0f, 0.0f}, b{0.0f, 1.0f}, zero{0.0f, 0.0f};
  CHECK(similarity(a, a).cosine == doctest::Approx(1.0));
  CHECK(similarity(a, a).euclidean == 0.0);
  CHECK(similarity(a, b).cosine == doctest::Approx(0.0));
  CHECK(similarity(a, b).euclidean == doctest::Approx(std::sqrt(2.0)));
  const std::vector<float> minus_a{-2.0f, 0.0f};
  CHECK(similarity(a, minus_a).cosine == doctest::Approx(-1.0));
  CHECK(similarity(zero, zero).cosine == 1.0);  // both zero: the same
  CHECK(similarity(a, zero).cosine == 0.0);     // one zero: nothing in common
  CHECK(similarity(a, zero).euclidean == doctest::Approx(1.0));
  const std::vector<float> three{1.0f, 2.0f, 3.0f};
  CHECK_THROWS_AS((void)similarity(a, three), std::invalid_argument);
}

TEST_CASE("accuracy analysis: every calibrated tensor in execution order, entire and single") {
  const Graph graph = inference_graph(chain_model());
  const ActivationTable table = calibrated(graph);
  const auto input = integer_sample(7);
  std::size_t last_done = 0, last_total = 0, calls = 0;
  const auto report =
      analyze_accuracy(graph, table, Method::channel(), input,
                       {.session = {.threads = 1}, .progress = [&](std::size_t done, std::size_t total) {
                          CHECK(done >= last_done);
                          last_done = done;
                          last_total = total;
                          ++calls;
                        }});
  CHECK(calls > 3);
  CHECK(last_done == last_total);

  std::vector<std::string> names;
  for (const auto& r : report) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"x", "scaled", "flat", "conv0", "tanh0", "conv1", "tanh1", "conv2", "y"});
  CHECK(row(report, "x").op_type == "input");
  CHECK(row(report, "scaled").op_type == "Conv");
  CHECK(row(report, "scaled").node == "scale");

  // Whole numbers 0..255 on a scale of 1; times 255 on a scale of 255; moved by Reshape: exact.
  for (const char* exact : {"x", "scaled", "flat"}) {
    CAPTURE(exact);
    CHECK(row(report, exact).entire.cosine == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(row(report, exact).entire.euclidean == 0.0);
    CHECK(row(report, exact).single.euclidean == 0.0);
  }
  // The first inexact layer reads exact inputs: both ways see only its own error.
  const auto& conv0 = row(report, "conv0");
  CHECK(conv0.single.euclidean > 0.0);
  CHECK(conv0.entire.cosine == conv0.single.cosine);
  CHECK(conv0.entire.euclidean == conv0.single.euclidean);
  // Later layers add their own error to what they inherit.
  const auto& last = row(report, "conv2");
  CHECK(last.entire.euclidean > last.single.euclidean);
  CHECK(last.entire.cosine < last.single.cosine);
  for (const auto& r : report) {
    CAPTURE(r.name);
    CHECK(r.single.cosine > 0.99);
    CHECK(r.entire.cosine > 0.95);
  }
  // Identity keeps its input's grid: on its own it adds nothing to the rounding of what it reads
  // (conv2's float values on conv2's grid), and end to end it is conv2.
  Session reference(Graph(graph), {.threads = 1, .fuse = false});
  Tensor rounded = reference.run(input)[0].clone();
  const std::vector<float> float_y(rounded.values<float>().begin(), rounded.values<float>().end());
  fake_quantize(rounded.values<float>(), table.params.at("conv2"));
  const Similarity rounding = similarity(float_y, rounded.values<float>());
  CHECK(rounding.euclidean > 0.0);
  CHECK(row(report, "y").single.euclidean == doctest::Approx(rounding.euclidean).epsilon(1e-9));
  CHECK(row(report, "y").entire.euclidean == doctest::Approx(last.entire.euclidean));
}

TEST_CASE("accuracy analysis: entire is the quantized graph end to end") {
  const Graph graph = inference_graph(chain_model());
  const ActivationTable table = calibrated(graph);
  const auto input = integer_sample(9);
  const auto report = analyze_accuracy(graph, table, Method::channel(), input, {.session = {.threads = 1}});
  QuantizedSession quantized(graph, table, Method::channel(), {.threads = 1});
  Session reference(Graph(graph), {.threads = 1, .fuse = false});
  const auto q = quantized.run(input);
  const auto f = reference.run(input);
  const Similarity expected = similarity(f[0].values<float>(), q[0].values<float>());
  CHECK(row(report, "y").entire.cosine == doctest::Approx(expected.cosine).epsilon(1e-12));
  CHECK(row(report, "y").entire.euclidean == doctest::Approx(expected.euclidean).epsilon(1e-9));
  // The analysis leaves the session's own rounding in place afterwards.
  const auto again = quantized.run(input);
  CHECK(similarity(q[0].values<float>(), again[0].values<float>()).euclidean == 0.0);
}
