// Operators of issue 15 where the ONNX node tests (tests/onnx/conformance.cpp) leave behaviour
// uncovered: bidirectional and batch-major recurrent layers, exact int8 per-axis quantization,
// and the messages for bad attributes and inputs.

#include "engine_test_model.hpp"

#include <cmath>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// All outputs of a model run.
std::vector<Tensor> run_all(const onnx::ModelProto& model, std::vector<Tensor> inputs) {
  Session session(model, SessionOptions{.threads = test_threads(2)});
  return session.run(inputs);
}

// Rows [d] of a [directions, ...] tensor.
Tensor direction_slice(const Tensor& t, int64_t d) {
  std::vector<int64_t> shape = t.shape();
  const int64_t per = t.elements() / shape[0];
  shape[0] = 1;
  return Tensor::from<float>(
      shape, t.values<float>().subspan(static_cast<std::size_t>(d * per), static_cast<std::size_t>(per)));
}

// X [seq, batch, input] with the time axis reversed.
Tensor reverse_time(const Tensor& x) {
  Tensor r = x.clone();
  const int64_t seq = x.dim(0);
  const int64_t step = x.elements() / seq;
  for (int64_t t = 0; t < seq; ++t) {
    std::copy_n(x.data<float>() + t * step, step, r.data<float>() + (seq - 1 - t) * step);
  }
  return r;
}

// The reverse half of a bidirectional layer must equal a forward layer with the reverse
// weights run on the time-reversed input.
void check_bidirectional(const char* op, int64_t gates, std::vector<onnx::AttributeProto> extra = {}) {
  const int64_t seq = 5, batch = 3, input = 4, hidden = 6;
  const Tensor x = random_tensor({seq, batch, input}, 11);
  const Tensor w = random_tensor({2, gates * hidden, input}, 12, -0.5f, 0.5f);
  const Tensor r = random_tensor({2, gates * hidden, hidden}, 13, -0.5f, 0.5f);
  const Tensor b = random_tensor({2, 2 * gates * hidden}, 14, -0.5f, 0.5f);
  auto attributes = extra;
  attributes.push_back(attr("hidden_size", hidden));
  attributes.push_back(attr("direction", "bidirectional"));
  ModelBuilder both;
  both.input("x", DataType::float32, {seq, batch, input})
      .initializer("w", w)
      .initializer("r", r)
      .initializer("b", b)
      .output("y")
      .output("y_h")
      .node(op, {"x", "w", "r", "b"}, {"y", "y_h"}, attributes);
  const auto out = run_all(both.model(), {x});
  attributes = extra;
  attributes.push_back(attr("hidden_size", hidden));
  ModelBuilder forward;
  forward.input("x", DataType::float32, {seq, batch, input})
      .initializer("w", direction_slice(w, 1))
      .initializer("r", direction_slice(r, 1))
      .initializer("b", direction_slice(b, 1))
      .output("y")
      .output("y_h")
      .node(op, {"x", "w", "r", "b"}, {"y", "y_h"}, attributes);
  const auto ref = run_all(forward.model(), {reverse_time(x)});
  REQUIRE(out[0].shape() == std::vector<int64_t>{seq, 2, batch, hidden});
  for (int64_t t = 0; t < seq; ++t) {
    for (int64_t i = 0; i < batch * hidden; ++i) {
      const float got = out[0].data<float>()[((t * 2) + 1) * batch * hidden + i];
      const float want = ref[0].data<float>()[(seq - 1 - t) * batch * hidden + i];
      REQUIRE(std::fabs(got - want) <= 1e-5f);
    }
  }
  check_close(direction_slice(out[1], 1), ref[1], 1e-5f);
}

}  // namespace

TEST_SUITE("engine.more_ops") {
  TEST_CASE("bidirectional LSTM, GRU and RNN: the reverse half is a forward pass over reversed time") {
    check_bidirectional("LSTM", 4);
    check_bidirectional("GRU", 3);
    check_bidirectional("GRU", 3, {attr("linear_before_reset", int64_t{1})});
    check_bidirectional("RNN", 1);
  }

  TEST_CASE("layout 1 (batch major) gives the layout-0 result transposed") {
    const int64_t seq = 4, batch = 2, input = 3, hidden = 5;
    const Tensor x = random_tensor({seq, batch, input}, 21);
    Tensor xb(DataType::float32, {batch, seq, input});
    for (int64_t t = 0; t < seq; ++t) {
      for (int64_t n = 0; n < batch; ++n) {
        std::copy_n(x.data<float>() + (t * batch + n) * input, input, xb.data<float>() + (n * seq + t) * input);
      }
    }
    const Tensor w = random_tensor({1, 4 * hidden, input}, 22);
    const Tensor r = random_tensor({1, 4 * hidden, hidden}, 23);
    auto model = [&](int64_t layout, std::vector<int64_t> shape) {
      ModelBuilder m(14);
      m.input("x", DataType::float32, shape)
          .initializer("w", w)
          .initializer("r", r)
          .output("y")
          .node("LSTM", {"x", "w", "r"}, {"y"}, {attr("hidden_size", hidden), attr("layout", layout)});
      return m;
    };
    const Tensor y0 = run_one(model(0, {seq, batch, input}).model(), {x});
    const Tensor y1 = run_one(model(1, {batch, seq, input}).model(), {xb});
    REQUIRE(y1.shape() == std::vector<int64_t>{batch, seq, 1, hidden});
    for (int64_t t = 0; t < seq; ++t) {
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t j = 0; j < hidden; ++j) {
          CHECK(y1.data<float>()[(n * seq + t) * hidden + j] == y0.data<float>()[(t * batch + n) * hidden + j]);
        }
      }
    }
  }

  TEST_CASE("QuantizeLinear int8 per axis rounds halves to even and saturates; DequantizeLinear inverts it") {
    const Tensor x = Tensor::from<float>({2, 3}, {0.5f, 1.5f, -2.5f, 1000.0f, -1000.0f, 3.0f});
    const Tensor scale = Tensor::from<float>({2}, {1.0f, 2.0f});
    const Tensor zero = Tensor::from<int8_t>({2}, {0, 1});
    ModelBuilder q(13);
    q.input("x", DataType::float32, {2, 3})
        .initializer("s", scale)
        .initializer("z", zero)
        .output("y")
        .node("QuantizeLinear", {"x", "s", "z"}, {"y"}, {attr("axis", int64_t{0})});
    const Tensor y = run_one(q.model(), {x});
    REQUIRE(y.dtype() == DataType::int8);
    const std::vector<int8_t> want{0, 2, -2, 127, -128, 3};  // 3/2 = 1.5 -> 2, + zero point 1
    CHECK(std::vector<int8_t>(y.values<int8_t>().begin(), y.values<int8_t>().end()) == want);
    ModelBuilder d(13);
    d.input("y", DataType::int8, {2, 3})
        .initializer("s", scale)
        .initializer("z", zero)
        .output("x")
        .node("DequantizeLinear", {"y", "s", "z"}, {"x"}, {attr("axis", int64_t{0})});
    const Tensor back = run_one(d.model(), {y});
    check_close(back, Tensor::from<float>({2, 3}, {0.0f, 2.0f, -2.0f, 252.0f, -258.0f, 4.0f}));
  }

  TEST_CASE("bad attributes and inputs are refused with the node and the reason") {
    // Planning (where the operators check their nodes) happens on the first run: run on zeros.
    const auto fails = [](const onnx::ModelProto& model) {
      return error_of([&] {
        Session s(model);
        std::vector<Tensor> inputs;
        for (const auto& v : model.graph.input) {
          std::vector<int64_t> shape;
          for (const auto& d : v.shape) shape.push_back(d.value);
          inputs.emplace_back(v.elem_type, shape);
        }
        s.run(inputs);
      });
    };
    ModelBuilder mod;
    mod.input("a", DataType::float32, {2})
        .input("b", DataType::float32, {2})
        .output("y")
        .node("Mod", {"a", "b"}, {"y"});
    CHECK(fails(mod.model()).find("floating-point inputs need attribute fmod=1") != std::string::npos);

    ModelBuilder topk;
    topk.input("x", DataType::float32, {2, 3})
        .initializer("k", Tensor::from<int64_t>({1}, {4}))
        .output("v")
        .output("i")
        .node("TopK", {"x", "k"}, {"v", "i"});
    CHECK(fails(topk.model()).find("k is 4, expected 0 to 3") != std::string::npos);

    ModelBuilder quant;
    quant.input("x", DataType::float32, {2, 3})
        .initializer("s", Tensor::from<float>({3}, {1, 1, 1}))
        .output("y")
        .node("QuantizeLinear", {"x", "s"}, {"y"});
    CHECK(fails(quant.model()).empty());  // axis 1 (the default) has 3: per axis
    quant.model().graph.node[0].attribute.push_back(attr("axis", int64_t{0}));
    CHECK(fails(quant.model()).find("scale 's' has 3 values, input [2, 3] has 2 along axis 0") != std::string::npos);

    ModelBuilder norm(17);
    norm.input("x", DataType::float32, {2, 3})
        .initializer("s", Tensor::from<float>({2}, {1, 1}))
        .output("y")
        .node("LayerNormalization", {"x", "s"}, {"y"});
    CHECK(fails(norm.model()).find("does not broadcast to the normalized shape [3]") != std::string::npos);

    ModelBuilder dropout(13);
    dropout.input("x", DataType::float32, {2})
        .initializer("ratio", Tensor::scalar<float>(0.5f))
        .initializer("training", Tensor::scalar<bool>(true))
        .output("y")
        .node("Dropout", {"x", "ratio", "training"}, {"y"});
    CHECK(fails(dropout.model()).find("training_mode=1 draws random numbers") != std::string::npos);

    onnx::AttributeProto activations;
    activations.name = "activations";
    activations.type = onnx::AttributeProto::Type::strings;
    activations.strings = {"Swish"};
    ModelBuilder rnn;
    rnn.input("x", DataType::float32, {1, 1, 2})
        .initializer("w", Tensor(DataType::float32, {1, 3, 2}))
        .initializer("r", Tensor(DataType::float32, {1, 3, 3}))
        .output("y")
        .node("RNN", {"x", "w", "r"}, {"y"}, {activations});
    CHECK(fails(rnn.model()).find("activation 'Swish' is not supported") != std::string::npos);
  }
}
