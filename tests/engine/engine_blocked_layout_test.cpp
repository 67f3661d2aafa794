// Values kept in oneDNN's layout between oneDNN Convs (host/engine/blocked_layout.hpp; docs/runtime-extensions.md,
// "Blocked values between Convs"): every graph gives the same outputs, bit for bit, as with the pass off
// (RKNNXX_ENGINE_LAYOUT=nchw), with batch 2, 1 and 2 threads (test_threads), float32 and float16 activations, and keeps the
// values it may: made by a oneDNN Conv, read only as input 0 of oneDNN Convs, not graph outputs, no observer.

#include "engine_test_model.hpp"
#include "scoped_env.hpp"
#include "ops/conv_onednn.hpp"

#include <cstring>
#include <string>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// x (2x8x9x9) -> Conv 3x3 + Relu -> "a" (20 channels: a padded block) -> depthwise 3x3 + HardSigmoid -> "b"
// (HardSigmoid is not 0 at 0, so a padding left unwritten would show) -> Conv 3x3 -> "y" (12 channels).
// `extra` adds nodes and outputs.
onnx::ModelProto chain(void (*extra)(ModelBuilder&) = nullptr) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 8, 9, 9})
      .initializer("w1", random_tensor({20, 8, 3, 3}, 1))
      .initializer("b1", random_tensor({20}, 2))
      .initializer("w2", random_tensor({20, 1, 3, 3}, 3))
      .initializer("b2", random_tensor({20}, 4))
      .initializer("w3", random_tensor({12, 20, 3, 3}, 5))
      .node("Conv", {"x", "w1", "b1"}, {"c1"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("Relu", {"c1"}, {"a"})
      .node("Conv", {"a", "w2", "b2"}, {"c2"},
            {attr("group", int64_t{20}), attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("HardSigmoid", {"c2"}, {"b"}, {attr("alpha", 0.3f), attr("beta", 0.4f)})
      .node("Conv", {"b", "w3"}, {"y"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .output("y");
  if (extra != nullptr) extra(m);
  return m.model();
}

void branch_to_sigmoid(ModelBuilder& m) { m.node("Sigmoid", {"a"}, {"s"}).output("s"); }
void middle_output(ModelBuilder& m) { m.output("a"); }
void residual(ModelBuilder& m) {  // "a" read again as the fused residual of a fourth Conv
  m.initializer("w4", random_tensor({20, 20, 1, 1}, 6))
      .node("Conv", {"a", "w4"}, {"c4"})
      .node("Add", {"c4", "a"}, {"r"})
      .output("r");
}

struct Run {
  std::vector<Tensor> outputs;
  std::size_t blocked_values = 0;
};

Run run(const onnx::ModelProto& model, const char* layout, std::size_t threads, bool half = false) {
  const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", layout);
  Session session(model, SessionOptions{.threads = test_threads(threads), .float16_activations = half});
  Run r;
  r.outputs = session.run(std::vector<Tensor>{random_tensor({2, 8, 9, 9}, 7)});
  r.blocked_values = session.stats().blocked_values;
  return r;
}

void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(shape_string(got.shape()) == shape_string(want.shape()));
  CHECK(std::memcmp(got.raw(), want.raw(), got.bytes()) == 0);
}

// The graph with the pass on gives the NCHW outputs exactly, keeping `kept` values.
void check_graph(const onnx::ModelProto& model, std::size_t kept) {
  const ScopedEnv conv("RKNNXX_ENGINE_CONV", "onednn-blocked");  // every Conv on the path the pass serves
  for (const std::size_t threads : {1, 2}) {
    for (const bool half : {false, true}) {
      CAPTURE(threads);
      CAPTURE(half);
      const Run off = run(model, "nchw", threads, half);
      const Run on = run(model, "blocked", threads, half);
      CHECK(off.blocked_values == 0);
      // On more threads each Conv is cut into blocks of channels: in NHWC (oneDNN's pick on AVX-512) a value is
      // kept only between Convs cut alike (the depthwise one, not the dense one reading all channels).
      if (threads == 1) CHECK(on.blocked_values == (onednn_conv_built() ? kept : 0));
      if (threads > 1) CHECK(on.blocked_values <= kept);
      REQUIRE(on.outputs.size() == off.outputs.size());
      for (std::size_t o = 0; o < on.outputs.size(); ++o) check_same(on.outputs[o], off.outputs[o]);
    }
  }
}

}  // namespace

TEST_SUITE("engine.blocked_layout") {
  TEST_CASE("a chain of Convs keeps both values between them") { check_graph(chain(), 2); }

  TEST_CASE("a value also read by another operator stays NCHW") { check_graph(chain(branch_to_sigmoid), 1); }

  TEST_CASE("a value that is a graph output stays NCHW") { check_graph(chain(middle_output), 1); }

  TEST_CASE("a value read as a fused residual stays NCHW") { check_graph(chain(residual), 1); }

  TEST_CASE("an observer sees every value NCHW") {
    const ScopedEnv conv("RKNNXX_ENGINE_CONV", "onednn-blocked");
    const onnx::ModelProto model = chain(middle_output);  // "a" as an output: the NCHW value to compare with
    Session session(chain(), SessionOptions{.threads = test_threads(2)});
    const std::vector<Tensor> x{random_tensor({2, 8, 9, 9}, 7)};
    const Tensor y = session.run(x).front();  // planned without an observer first
    Tensor seen;
    session.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
      if (node.outputs[0] == *session.graph().find("a")) seen = outputs[0]->clone();
    });
    check_same(session.run(x).front(), y);
    CHECK(session.stats().blocked_values == 0);
    check_same(seen, run(model, "nchw", 2).outputs[1]);
  }

  TEST_CASE("RKNNXX_ENGINE_LAYOUT other than blocked or nchw fails, naming it") {
    const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", "nhwc");
    CHECK(planning_refusal(chain()).find("RKNNXX_ENGINE_LAYOUT") != std::string::npos);
  }
}
