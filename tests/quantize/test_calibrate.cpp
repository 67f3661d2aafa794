// Calibration through the engine and quantized execution, on a small graph built by hand.
#include "calibrate.hpp"

#include "../engine/engine_test_model.hpp"
#include "../engine/scoped_env.hpp"
#include "ops/conv_onednn.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

using namespace rknnxx::host;
using namespace rknnxx::host::quantize;
using rknnxx::host::testing::attr;
using rknnxx::host::testing::ModelBuilder;
using rknnxx::host::testing::random_tensor;
using rknnxx::host::testing::ScopedEnv;

namespace {

// x [1,2,4,4] -> Conv 3x3 (3 channels, pads 1) + bias -> Relu -> Reshape [1,48] -> MatMul [48,5] -> y
onnx::ModelProto small_model() {
  ModelBuilder b;
  b.input("x", DataType::float32, {1, 2, 4, 4})
      .output("y")
      .initializer("w", random_tensor({3, 2, 3, 3}, 1))
      .initializer("bias", random_tensor({3}, 2, -0.1f, 0.1f))
      .initializer("shape", Tensor::from<int64_t>({2}, {1, 48}))
      .initializer("m", random_tensor({48, 5}, 3))
      .node("Conv", {"x", "w", "bias"}, {"conv"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}, "conv")
      .node("Relu", {"conv"}, {"relu"}, {}, "relu")
      .node("Reshape", {"relu", "shape"}, {"flat"}, {}, "flatten")
      .node("MatMul", {"flat", "m"}, {"y"}, {}, "fc");
  return b.model();
}

std::vector<std::vector<Tensor>> samples(std::size_t n) {
  std::vector<std::vector<Tensor>> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<Tensor> s;
    s.push_back(random_tensor({1, 2, 4, 4}, static_cast<uint32_t>(100 + i), -2.0f, 3.0f));
    out.push_back(std::move(s));
  }
  return out;
}

bool on_grid(float v, const AffineParams& p) {
  const double q = static_cast<double>(v) / p.scale + p.zero_point;
  return std::abs(q - std::round(q)) < 1e-3 && q >= p.range.min - 1e-3 && q <= p.range.max + 1e-3;
}

}  // namespace

TEST_CASE("the step observer sees every executed step and may rewrite its outputs") {
  Session session(small_model(), {.threads = 1});
  std::vector<std::string> seen;
  session.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
    seen.push_back(node.op_type);
    REQUIRE(outputs.size() == 1);
    if (node.op_type == "Reshape")
      for (float& v : outputs[0]->values<float>()) v = 0.0f;  // the MatMul after it then sees zeros
  });
  const auto in = samples(1);
  const auto out = session.run(in[0]);
  CHECK(seen == std::vector<std::string>{"Conv", "Reshape", "MatMul"});  // Relu fused into Conv
  for (float v : out[0].values<float>()) CHECK(v == 0.0f);
  session.set_step_observer({});
  const auto plain = session.run(in[0]);
  CHECK(plain[0].values<float>()[0] != 0.0f);
}

TEST_CASE("normal calibration: exact ranges; Reshape shares its input's parameters") {
  const Graph graph = inference_graph(small_model());
  Calibrator calibrator(graph, Algorithm::normal, 1);
  const auto data = samples(8);
  float lo = 0, hi = 0;
  for (const auto& s : data) {
    calibrator.add(s);
    for (float v : s[0].values<float>()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  const ActivationTable table = calibrator.finish();
  CHECK(table.samples == 8);
  REQUIRE(table.params.contains("x"));
  REQUIRE(table.params.contains("relu"));
  REQUIRE(table.params.contains("y"));
  CHECK(table.params.at("x") == affine_from_range(lo, hi));
  CHECK(table.params.at("flat") == table.params.at("relu"));
  CHECK(table.params.at("relu").zero_point == -128);  // after ReLU: [0, max]
  CHECK_FALSE(table.params.contains("conv"));         // fused away: the NPU never stores it
}

TEST_CASE("quantized execution: every calibrated tensor on its grid, close to float") {
  const Graph graph = inference_graph(small_model());
  for (Algorithm algorithm : {Algorithm::normal, Algorithm::kl_divergence, Algorithm::mmse}) {
    CAPTURE(static_cast<int>(algorithm));
    Calibrator calibrator(graph, algorithm, 1);
    const auto data = samples(16);
    for (const auto& s : data) calibrator.add(s);
    const ActivationTable table = calibrator.finish();
    QuantizedSession quantized(graph, table, Method::channel(), {.threads = 1});
    Session reference(Graph(graph), {.threads = 1, .fuse = false});
    CHECK(quantized.weights().size() == 2);  // the Conv's and the MatMul's
    CHECK(quantized.weights().at("m").params.size() == 5);
    double num = 0, den = 0;
    for (const auto& s : data) {
      const auto q = quantized.run(s);
      const auto f = reference.run(s);
      const AffineParams& p = table.params.at("y");
      for (std::size_t i = 0; i < 5; ++i) {
        CHECK(on_grid(q[0].values<float>()[i], p));
        const double d = q[0].values<float>()[i] - f[0].values<float>()[i];
        num += d * d;
        den += static_cast<double>(f[0].values<float>()[i]) * f[0].values<float>()[i];
      }
    }
    CHECK(std::sqrt(num / den) < 0.05);
  }
}

// x [2,8,9,9] -> Conv 3x3 + Relu -> "a" (16 channels) -> depthwise 3x3 + Relu -> "d" -> Conv 1x1 -> "p" -> Conv 3x3
// -> y: three values oneDNN's Convs may keep between them. With `residual`, "s" = "p" + "a" (mobilenet_v2's blocks)
// feeds the last Conv instead: a residual Add is not fused in a quantized graph (the Conv's sum has a grid of its
// own), and it keeps its inputs and output in NHWC too.
onnx::ModelProto conv_chain_model(bool residual = false) {
  ModelBuilder b(13);
  const auto pads = attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  b.input("x", DataType::float32, {2, 8, 9, 9})
      .output("y")
      .initializer("w1", random_tensor({16, 8, 3, 3}, 1))
      .initializer("wd", random_tensor({16, 1, 3, 3}, 2))
      .initializer("wp", random_tensor({16, 16, 1, 1}, 3))
      .initializer("wy", random_tensor({4, 16, 3, 3}, 4))
      .node("Conv", {"x", "w1"}, {"c1"}, {pads})
      .node("Relu", {"c1"}, {"a"})
      .node("Conv", {"a", "wd"}, {"cd"}, {attr("group", int64_t{16}), pads})
      .node("Relu", {"cd"}, {"d"})
      .node("Conv", {"d", "wp"}, {"p"});
  if (residual) b.node("Add", {"p", "a"}, {"s"});
  b.node("Conv", {residual ? "s" : "p", "wy"}, {"y"}, {pads});
  return b.model();
}

TEST_CASE("quantized execution keeps values in oneDNN's layout, with the same bits as NCHW") {
  const ScopedEnv conv("RKNNXX_ENGINE_CONV", "onednn-blocked");  // every Conv on the path that keeps values
  // On the float kernels, and on integers (conv_int8.cpp; the float kernels where the CPU has no VNNI); without
  // and with a residual Add between the Convs, which keeps its inputs and output NHWC too.
  for (const std::string integers : {"off", "always"})
    for (const bool residual : {false, true}) {
      CAPTURE(integers);
      CAPTURE(residual);
      const ScopedEnv int8("RKNNXX_ENGINE_INT8", integers.c_str());
      const Graph graph = inference_graph(conv_chain_model(residual));
      Calibrator calibrator(graph, Algorithm::normal, 1);
      for (uint32_t i = 0; i < 4; ++i)
        calibrator.add(std::vector<Tensor>{random_tensor({2, 8, 9, 9}, 100 + i, -2.0f, 2.0f)});
      const ActivationTable table = calibrator.finish();
      const std::vector<Tensor> x{random_tensor({2, 8, 9, 9}, 200, -2.0f, 2.0f)};
      for (std::size_t threads : {1, 2}) {
        CAPTURE(threads);
        const auto run = [&](const char* layout, std::size_t& kept) {
          const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", layout);
          QuantizedSession quantized(graph, table, Method::channel(), {.threads = threads});
          auto out = quantized.run(x);
          kept = quantized.session().stats().blocked_values;
          return out;
        };
        std::size_t kept_nchw = 0, kept_blocked = 0;
        const auto nchw = run("nchw", kept_nchw);
        const auto blocked = run("blocked", kept_blocked);
        CHECK(kept_nchw == 0);
        if (onednn_conv_built()) CHECK(kept_blocked >= 1);  // "d" at least; "a", "p" and "s" too where NHWC is kept
        if (onednn_conv_keeps_nhwc()) CHECK(kept_blocked == (residual ? 4u : 3u));
        REQUIRE(nchw[0].bytes() == blocked[0].bytes());
        CHECK(std::memcmp(nchw[0].raw(), blocked[0].raw(), nchw[0].bytes()) == 0);
        const AffineParams& p = table.params.at("y");
        for (float v : blocked[0].values<float>()) CHECK(on_grid(v, p));

        // An observer sees every value NCHW and on its grid: the session keeps none then.
        QuantizedSession observed(graph, table, Method::channel(), {.threads = threads});
        std::size_t seen = 0;
        observed.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
          const auto found = table.params.find(observed.session().graph().value(node.outputs[0]).name);
          if (found == table.params.end() || outputs[0] == nullptr) return;
          ++seen;
          for (float v : outputs[0]->values<float>()) CHECK(on_grid(v, found->second));
        });
        const auto watched = observed.run(x);
        CHECK(observed.session().stats().blocked_values == 0);
        CHECK(seen >= 4);
        CHECK(std::memcmp(watched[0].raw(), nchw[0].raw(), nchw[0].bytes()) == 0);
      }
    }
}

TEST_CASE("quantized runs one after another: the inputs' kept buffers give each run its own inputs, left unchanged") {
  const Graph graph = inference_graph(conv_chain_model());
  Calibrator calibrator(graph, Algorithm::normal, 1);
  for (uint32_t i = 0; i < 4; ++i)
    calibrator.add(std::vector<Tensor>{random_tensor({2, 8, 9, 9}, 100 + i, -2.0f, 2.0f)});
  const ActivationTable table = calibrator.finish();
  const std::vector<Tensor> a{random_tensor({2, 8, 9, 9}, 300, -2.0f, 2.0f)};
  const std::vector<Tensor> b{random_tensor({2, 8, 9, 9}, 301, -2.0f, 2.0f)};
  const Tensor a_before = a[0].clone();
  QuantizedSession quantized(graph, table, Method::channel(), {.threads = 1});
  const auto first = quantized.run(a);
  const auto other = quantized.run(b);
  const auto again = quantized.run(a);
  CHECK(std::memcmp(first[0].raw(), again[0].raw(), first[0].bytes()) == 0);
  CHECK(std::memcmp(first[0].raw(), other[0].raw(), first[0].bytes()) != 0);
  CHECK(std::memcmp(a[0].raw(), a_before.raw(), a_before.bytes()) == 0);  // rounded in the session's copy
  QuantizedSession fresh(graph, table, Method::channel(), {.threads = 1});
  const auto alone = fresh.run(b);
  CHECK(std::memcmp(alone[0].raw(), other[0].raw(), alone[0].bytes()) == 0);
}

TEST_CASE("w16a16i_dfp execution: every activation q * 2^-fl with q in int16, weights too, far closer than int8") {
  const Graph graph = inference_graph(small_model());
  const auto data = samples(16);
  Calibrator calibrator(graph, Algorithm::normal, 1, int16_dfp_range);
  for (const auto& s : data) calibrator.add(s);
  const ActivationTable table = calibrator.finish();
  REQUIRE(table.params.contains("x"));
  for (const auto& [name, p] : table.params) {
    CAPTURE(name);
    CHECK(p.range == int16_dfp_range);
    CHECK(p.zero_point == 0);
    CHECK(dfp_fraction_length(p.scale).has_value());
  }
  // x spans about -2 .. 3: 3 * 2^13 fits int16.
  CHECK(dfp_fraction_length(table.params.at("x").scale) == 13);
  QuantizedSession quantized(graph, table, Method::channel(), {.threads = 1}, int16_dfp_range);
  for (const auto& [name, w] : quantized.weights()) {
    CAPTURE(name);
    for (const AffineParams& p : w.params) CHECK(dfp_fraction_length(p.scale).has_value());
  }
  // What every step leaves after the rounding: values of its own grid (or its input's, for Reshape).
  std::size_t checked = 0;
  quantized.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
    const auto found = table.params.find(quantized.session().graph().value(node.outputs[0]).name);
    REQUIRE(found != table.params.end());
    for (float v : outputs[0]->values<float>()) {
      CHECK(on_grid(v, found->second));
      ++checked;
    }
  });
  Session reference(Graph(graph), {.threads = 1, .fuse = false});
  Calibrator int8_calibrator(graph, Algorithm::normal, 1);
  for (const auto& s : data) int8_calibrator.add(s);
  QuantizedSession int8(graph, int8_calibrator.finish(), Method::channel(), {.threads = 1});
  double num16 = 0, num8 = 0, den = 0;
  for (const auto& s : data) {
    const auto q = quantized.run(s);
    const auto q8 = int8.run(s);
    const auto f = reference.run(s);
    for (std::size_t i = 0; i < 5; ++i) {
      const double d16 = q[0].values<float>()[i] - f[0].values<float>()[i];
      const double d8 = q8[0].values<float>()[i] - f[0].values<float>()[i];
      num16 += d16 * d16;
      num8 += d8 * d8;
      den += static_cast<double>(f[0].values<float>()[i]) * f[0].values<float>()[i];
    }
  }
  CHECK(checked > 16 * 5);
  CHECK(std::sqrt(num16 / den) < 1e-3);
  CHECK(num16 * 1000 < num8);  // 256 times finer steps: about 65536 times smaller squared error
}

TEST_CASE("calibration refuses gdq and an empty set") {
  const Graph graph = inference_graph(small_model());
  CHECK_THROWS_WITH_AS(Calibrator(graph, Algorithm::gdq), doctest::Contains("gdq"), std::invalid_argument);
  Calibrator calibrator(graph, Algorithm::normal, 1);
  CHECK_THROWS_AS((void)calibrator.finish(), std::invalid_argument);
}
