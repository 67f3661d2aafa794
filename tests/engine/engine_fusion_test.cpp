// The element-wise chains Graph::fuse_for_inference folds into a Conv (host/engine/fusion.cpp,
// ops/conv_epilogue.hpp): each pattern on the Conv shapes of every kernel path (pointwise, im2col,
// depthwise, grouped; meson runs this suite again on the builtin kernels and on both oneDNN layouts),
// fused against the same graph unfused on random data, with the number of nodes left; and the cases
// that must not fuse (an intermediate used twice, a graph output, a constant Add operand that is not a scalar).

#include "engine_test_model.hpp"

#include <cstring>
#include <limits>
#include <string>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

struct ConvShape {
  const char* name;
  int64_t c, h, w, m, group, k, stride, pad;
};

const ConvShape conv_shapes[] = {
    {"1x1", 16, 7, 9, 24, 1, 1, 1, 0},
    {"3x3", 6, 9, 8, 16, 1, 3, 1, 1},
    {"3x3 strided", 8, 11, 11, 16, 1, 3, 2, 1},
    {"depthwise 3x3", 16, 10, 10, 16, 16, 3, 1, 1},
    {"depthwise 5x5/2", 16, 13, 13, 16, 16, 5, 2, 2},
    {"grouped 3x3", 16, 8, 8, 32, 4, 3, 1, 1},
};

// x -> Conv (bias) -> "c", then `chain` adds its nodes from "c" to "y". "r" is a second input shaped as
// the Conv's output (a residual), `residual_shape` overrides its shape.
struct Chain {
  const char* name;
  std::size_t fused_nodes;  // nodes left after fusion
  void (*build)(ModelBuilder&);
  bool uses_residual = false;
};

void relu(ModelBuilder& m) { m.node("Relu", {"c"}, {"y"}); }
void clip6(ModelBuilder& m) {
  m.initializer("lo", Tensor::from<float>({}, {0.0f}))
      .initializer("hi", Tensor::from<float>({}, {6.0f}))
      .node("Clip", {"c", "lo", "hi"}, {"y"});
}
void hard_swish(ModelBuilder& m) { m.node("HardSwish", {"c"}, {"y"}); }
void hard_sigmoid(ModelBuilder& m) { m.node("HardSigmoid", {"c"}, {"y"}, {attr("alpha", 0.3f), attr("beta", 0.4f)}); }
void hard_sigmoid_mul(ModelBuilder& m) {
  m.node("HardSigmoid", {"c"}, {"g"}, {attr("alpha", 1.0f / 6.0f), attr("beta", 0.5f)}).node("Mul", {"g", "c"}, {"y"});
}
void hard_sigmoid_mul_other(ModelBuilder& m) {  // HardSwish with other constants: no oneDNN post-op
  m.node("HardSigmoid", {"c"}, {"g"}, {attr("alpha", 0.2f), attr("beta", 0.5f)}).node("Mul", {"c", "g"}, {"y"});
}
void paddle_hard_swish(ModelBuilder& m) {  // x * clip(x + 3, 0, 6) / 6, as Paddle exports HardSwish
  m.initializer("three", Tensor::from<float>({}, {3.0f}))
      .initializer("zero", Tensor::from<float>({}, {0.0f}))
      .initializer("six", Tensor::from<float>({}, {6.0f}))
      .node("Add", {"c", "three"}, {"p"})
      .node("Clip", {"p", "zero", "six"}, {"q"})
      .node("Div", {"q", "six"}, {"g"})
      .node("Mul", {"c", "g"}, {"y"});
}
void paddle_hard_swish_div_last(ModelBuilder& m) {  // (x * clip(x + 3, 0, 6)) / 6, as paddle2onnx writes it
  m.initializer("three", Tensor::from<float>({}, {3.0f}))
      .initializer("zero", Tensor::from<float>({}, {0.0f}))
      .initializer("six", Tensor::from<float>({}, {6.0f}))
      .node("Add", {"c", "three"}, {"p"})
      .node("Clip", {"p", "zero", "six"}, {"q"})
      .node("Mul", {"c", "q"}, {"g"})
      .node("Div", {"g", "six"}, {"y"});
}
void learnable_affine(ModelBuilder& m) {  // a Mul and an Add by one-element constants, the constant first
  m.initializer("scale", Tensor::from<float>({1}, {0.75f}))
      .initializer("shift", Tensor::from<float>({1}, {-0.25f}))
      .node("Mul", {"scale", "c"}, {"s"})
      .node("Add", {"s", "shift"}, {"y"});
}
void lcnet_block(ModelBuilder& m) {  // PP-LCNetV3's: affine, paddle2onnx's HardSwish, affine
  m.initializer("scale", Tensor::from<float>({1}, {1.5f}))
      .initializer("shift", Tensor::from<float>({1}, {0.5f}))
      .initializer("scale2", Tensor::from<float>({1}, {0.8f}))
      .initializer("shift2", Tensor::from<float>({1}, {0.1f}))
      .initializer("three", Tensor::from<float>({}, {3.0f}))
      .initializer("zero", Tensor::from<float>({}, {0.0f}))
      .initializer("six", Tensor::from<float>({}, {6.0f}))
      .node("Mul", {"scale", "c"}, {"s"})
      .node("Add", {"s", "shift"}, {"t"})
      .node("Add", {"t", "three"}, {"p"})
      .node("Clip", {"p", "zero", "six"}, {"q"})
      .node("Mul", {"t", "q"}, {"g"})
      .node("Div", {"g", "six"}, {"h"})
      .node("Mul", {"h", "scale2"}, {"u"})
      .node("Add", {"shift2", "u"}, {"y"});
}
void sub_div(ModelBuilder& m) {  // (k - (x - 1) / 4): Sub on both sides, Div by a scalar
  m.initializer("one", Tensor::from<float>({}, {1.0f}))
      .initializer("four", Tensor::from<float>({1, 1, 1, 1}, {4.0f}))
      .node("Sub", {"c", "one"}, {"s"})
      .node("Div", {"s", "four"}, {"t"})
      .node("Sub", {"one", "t"}, {"y"});
}
void clip_hard_sigmoid(ModelBuilder& m) {  // two clips: the post-ops end before the second
  m.initializer("lo", Tensor::from<float>({}, {-1.0f}))
      .initializer("hi", Tensor::from<float>({}, {2.0f}))
      .node("Clip", {"c", "lo", "hi"}, {"h"})
      .node("HardSigmoid", {"h"}, {"y"}, {attr("alpha", 0.3f), attr("beta", 0.4f)});
}
void sigmoid(ModelBuilder& m) { m.node("Sigmoid", {"c"}, {"y"}); }
void silu(ModelBuilder& m) { m.node("Sigmoid", {"c"}, {"g"}).node("Mul", {"c", "g"}, {"y"}); }
void add(ModelBuilder& m) { m.node("Add", {"c", "r"}, {"y"}); }
void add_relu(ModelBuilder& m) { m.node("Add", {"r", "c"}, {"s"}).node("Relu", {"s"}, {"y"}); }
void clip_add(ModelBuilder& m) {
  m.initializer("lo", Tensor::from<float>({}, {0.0f}))
      .initializer("hi", Tensor::from<float>({}, {6.0f}))
      .node("Clip", {"c", "lo", "hi"}, {"y0"})
      .node("Add", {"y0", "r"}, {"y"});
}
void swish_add_hard_swish(ModelBuilder& m) {
  m.node("Sigmoid", {"c"}, {"g"})
      .node("Mul", {"g", "c"}, {"a"})
      .node("Add", {"a", "r"}, {"s"})
      .node("HardSwish", {"s"}, {"y"});
}

void run_chain(const ConvShape& s, const Chain& chain, const std::vector<int64_t>& residual_shape = {}) {
  const std::string where = std::string(s.name) + ": " + chain.name;
  CAPTURE(where);
  const int64_t out_h = (s.h + 2 * s.pad - s.k) / s.stride + 1, out_w = (s.w + 2 * s.pad - s.k) / s.stride + 1;
  const std::vector<int64_t> out_shape{2, s.m, out_h, out_w};
  ModelBuilder m(14);
  m.input("x", DataType::float32, {2, s.c, s.h, s.w})
      .initializer("w", random_tensor({s.m, s.c / s.group, s.k, s.k}, 11, -0.5f, 0.5f))
      .initializer("b", random_tensor({s.m}, 12))
      .output("y")
      .node("Conv", {"x", "w", "b"}, {"c"},
            {attr("group", s.group), attr("strides", std::vector<int64_t>{s.stride, s.stride}),
             attr("pads", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad})});
  std::vector<Tensor> inputs{random_tensor({2, s.c, s.h, s.w}, 13, -2.0f, 2.0f)};
  if (chain.uses_residual) {
    const auto shape = residual_shape.empty() ? out_shape : residual_shape;
    m.input("r", DataType::float32, shape);
    inputs.push_back(random_tensor(shape, 14, -2.0f, 2.0f));
  }
  chain.build(m);
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    Session fused(m.model(), {.threads = threads});
    Session plain(m.model(), {.threads = threads, .fuse = false});
    CHECK(fused.graph().nodes().size() == chain.fused_nodes);
    CHECK(plain.graph().nodes().size() > chain.fused_nodes);
    check_close(fused.run(inputs)[0], plain.run(inputs)[0], 1e-5f);
  }
}

const Chain chains[] = {
    {"Relu", 1, relu},
    {"Clip 0..6", 1, clip6},
    {"HardSwish", 1, hard_swish},
    {"HardSigmoid", 1, hard_sigmoid},
    {"HardSigmoid, Mul (HardSwish)", 1, hard_sigmoid_mul},
    {"HardSigmoid 0.2, Mul", 1, hard_sigmoid_mul_other},
    {"Add 3, Clip 0..6, Div 6, Mul (HardSwish as Paddle writes it)", 1, paddle_hard_swish},
    {"Add 3, Clip 0..6, Mul, Div 6 (paddle2onnx's HardSwish)", 1, paddle_hard_swish_div_last},
    {"Mul, Add by scalars (Paddle's learnable affine block)", 1, learnable_affine},
    {"affine, paddle2onnx's HardSwish, affine (PP-LCNetV3)", 1, lcnet_block},
    {"Sub, Div, Sub from a scalar", 1, sub_div},
    {"Clip -1..2, HardSigmoid", 1, clip_hard_sigmoid},
    {"Sigmoid", 1, sigmoid},
    {"Sigmoid, Mul (SiLU)", 1, silu},
    {"residual Add", 1, add, true},
    {"residual Add, Relu", 1, add_relu, true},
    {"Clip, residual Add", 1, clip_add, true},
    {"SiLU, residual Add, HardSwish", 1, swish_add_hard_swish, true},
};

// Nodes of the fused graph of a model (Session plans it).
std::size_t fused_nodes(const ModelBuilder& m) { return Session(m.model()).graph().nodes().size(); }

ModelBuilder conv_then() {
  ModelBuilder m(14);
  m.input("x", DataType::float32, {1, 3, 5, 5})
      .initializer("w", random_tensor({4, 3, 3, 3}, 21))
      .node("Conv", {"x", "w"}, {"c"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})});
  return m;
}

}  // namespace

TEST_SUITE("engine.fusion") {
  TEST_CASE("each element-wise chain fused into a Conv matches the unfused graph") {
    for (const ConvShape& s : conv_shapes) {
      for (const Chain& chain : chains) {
        run_chain(s, chain);
      }
    }
  }

  TEST_CASE("a residual broadcast to the Conv's output is added after it") {
    for (const ConvShape& s : conv_shapes) {
      run_chain(s, {"residual Add [1, M, 1, 1], Relu", 1, add_relu, true}, {1, s.m, 1, 1});
      run_chain(s, {"residual Add [1], Relu", 1, add_relu, true}, {1});
    }
  }

  TEST_CASE("a residual larger than the Conv's output makes the Add's shape") {
    ModelBuilder m = conv_then();
    m.input("r", DataType::float32, {2, 4, 5, 5}).output("y").node("Add", {"c", "r"}, {"s"}).node("Relu", {"s"}, {"y"});
    CHECK(fused_nodes(m) == 1);
    const std::vector<Tensor> in{random_tensor({1, 3, 5, 5}, 1), random_tensor({2, 4, 5, 5}, 2)};
    const Tensor y = Session(m.model()).run(in)[0];
    CHECK(y.shape() == std::vector<int64_t>{2, 4, 5, 5});
    check_close(y, Session(m.model(), {.fuse = false}).run(in)[0], 1e-5f);
  }

  TEST_CASE("a fused residual that does not broadcast is refused, naming it") {
    ModelBuilder m = conv_then();
    m.input("r", DataType::float32, {1, 3, 5, 5}).output("y").node("Add", {"c", "r"}, {"y"});
    const std::string error = error_of([&] {
      Session(m.model()).run(std::vector{random_tensor({1, 3, 5, 5}, 1), random_tensor({1, 3, 5, 5}, 2)});
    });
    CHECK(error.find("'r' [1, 3, 5, 5] does not broadcast with the Conv's output shape [1, 4, 5, 5]") !=
          std::string::npos);
  }

  TEST_CASE("a BatchNormalization no Conv takes absorbs the one-input steps after it") {
    // x -> Concat(x, x) -> BatchNormalization -> Relu -> HardSigmoid -> y, as densenet's pre-activation (with one
    // more step): one node for the last three; the unfused graph's values, NaN and infinities included.
    ModelBuilder m(14);
    m.input("x", DataType::float32, {2, 3, 5, 7})
        .initializer("scale", random_tensor({6}, 1))
        .initializer("bias", random_tensor({6}, 2))
        .initializer("mean", random_tensor({6}, 3))
        .initializer("var", Tensor::from<float>({6}, {0.5f, 1.0f, 2.0f, 0.25f, 3.0f, 1.5f}))
        .output("y")
        .node("Concat", {"x", "x"}, {"c"}, {attr("axis", int64_t{1})})
        .node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"b"})
        .node("Relu", {"b"}, {"r"})
        .node("HardSigmoid", {"r"}, {"y"}, {attr("alpha", 0.3f), attr("beta", 0.1f)});
    CHECK(fused_nodes(m) == 2);
    Tensor x = random_tensor({2, 3, 5, 7}, 4);
    x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    x.data<float>()[40] = std::numeric_limits<float>::infinity();
    x.data<float>()[41] = -std::numeric_limits<float>::infinity();
    const std::vector<Tensor> in{x};
    const Tensor fused = Session(m.model()).run(in)[0];
    const Tensor unfused = Session(m.model(), {.fuse = false}).run(in)[0];
    REQUIRE(fused.bytes() == unfused.bytes());
    CHECK(std::memcmp(fused.raw(), unfused.raw(), fused.bytes()) == 0);
    SUBCASE("not across a value used twice") {
      m.output("b");
      CHECK(fused_nodes(m) == 4);
    }
  }

  TEST_CASE("chains are not fused across an intermediate used twice, a graph output or a constant") {
    SUBCASE("the Conv's output feeds two nodes") {
      ModelBuilder m = conv_then();
      m.output("y").output("z").node("HardSwish", {"c"}, {"y"}).node("Relu", {"c"}, {"z"});
      CHECK(fused_nodes(m) == 3);
    }
    SUBCASE("the Conv's output is a graph output") {
      ModelBuilder m = conv_then();
      m.output("c").output("y").node("HardSwish", {"c"}, {"y"});
      CHECK(fused_nodes(m) == 2);
    }
    SUBCASE("an intermediate of the chain is a graph output") {
      ModelBuilder m = conv_then();
      m.output("a").output("y").node("Relu", {"c"}, {"a"}).node("HardSwish", {"a"}, {"y"});
      CHECK(fused_nodes(m) == 2);  // Relu fused, HardSwish not
    }
    SUBCASE("the gate of HardSigmoid, Mul is used again") {
      ModelBuilder m = conv_then();
      m.output("y").output("g").node("HardSigmoid", {"c"}, {"g"}).node("Mul", {"c", "g"}, {"y"});
      CHECK(fused_nodes(m) == 3);
    }
    SUBCASE("a gate of scalar arithmetic that is not a HardSwish") {
      ModelBuilder m = conv_then();
      m.initializer("three", Tensor::from<float>({}, {3.0f}))
          .initializer("zero", Tensor::from<float>({}, {0.0f}))
          .initializer("six", Tensor::from<float>({}, {6.0f}))
          .output("y")
          .node("Add", {"c", "three"}, {"p"})
          .node("Clip", {"p", "zero", "six"}, {"q"})
          .node("Div", {"q", "three"}, {"g"})  // clamp(x + 3, 0, 6) / 3 reaches 2, not 1
          .node("Mul", {"c", "g"}, {"y"});
      CHECK(fused_nodes(m) == 5);
    }
    SUBCASE("Mul by another value (squeeze-excitation's scale)") {
      ModelBuilder m = conv_then();
      m.input("s", DataType::float32, {1, 4, 1, 1}).output("y").node("Mul", {"c", "s"}, {"y"});
      CHECK(fused_nodes(m) == 2);
    }
    SUBCASE("Add of a constant, and Add of the output to itself") {
      ModelBuilder m = conv_then();
      m.initializer("k", random_tensor({1, 4, 5, 5}, 3)).output("y").node("Add", {"c", "k"}, {"y"});
      CHECK(fused_nodes(m) == 2);
      ModelBuilder twice = conv_then();
      twice.output("y").node("Add", {"c", "c"}, {"y"});
      CHECK(fused_nodes(twice) == 2);
    }
    SUBCASE("scalar arithmetic that is not a x + b, or that would raise the output's rank") {
      ModelBuilder m = conv_then();
      m.initializer("k", Tensor::from<float>({}, {2.0f})).output("y").node("Div", {"k", "c"}, {"y"});
      CHECK(fused_nodes(m) == 2);
      ModelBuilder high = conv_then();
      high.initializer("k", Tensor::from<float>({1, 1, 1, 1, 1}, {2.0f})).output("y").node("Mul", {"c", "k"}, {"y"});
      CHECK(fused_nodes(high) == 2);
      const std::vector<Tensor> in{random_tensor({1, 3, 5, 5}, 4)};
      CHECK(Session(high.model()).run(in)[0].rank() == 5);
    }
    SUBCASE("a second residual Add stays apart") {
      ModelBuilder m = conv_then();
      m.input("r", DataType::float32, {1, 4, 5, 5})
          .input("q", DataType::float32, {1, 4, 5, 5})
          .output("y")
          .node("Add", {"c", "r"}, {"s"})
          .node("Add", {"s", "q"}, {"y"});
      CHECK(fused_nodes(m) == 2);
      const std::vector<Tensor> in{random_tensor({1, 3, 5, 5}, 4), random_tensor({1, 4, 5, 5}, 5),
                                   random_tensor({1, 4, 5, 5}, 6)};
      check_close(Session(m.model()).run(in)[0], Session(m.model(), {.fuse = false}).run(in)[0], 1e-5f);
    }
  }
}
