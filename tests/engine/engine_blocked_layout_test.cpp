// Values kept in oneDNN's layout between oneDNN Convs (host/engine/blocked_layout.hpp; docs/runtime-extensions.md,
// "Blocked values between Convs"): every graph gives the same outputs, bit for bit, as with the pass off
// (RKNNXX_ENGINE_LAYOUT=nchw), with batch 2, 1 to 7 threads (test_thread_counts), float32 and float16 activations, and
// keeps the values it may, on any number of threads: made by a oneDNN Conv, read only as input 0 of oneDNN Convs, not
// graph outputs, no observer.

#include "engine_test_model.hpp"
#include "scoped_env.hpp"
#include "ops/conv_onednn.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
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

// A fire module between pools, as in squeezenet, where oneDNN's Convs take NHWC: x (2x8x9x9) -> Conv 3x3 + Relu ->
// "a" (16 channels) -> MaxPool 3x3/2 -> "p" -> Conv 1x1 + Relu -> "s" -> {Conv 1x1 + Relu -> "e1" (12), Conv 3x3
// + Relu -> "e3" (20)} -> Concat -> "f" -> MaxPool 2x2/1 -> "q" -> Conv 3x3 -> "y". Seven values to keep.
onnx::ModelProto fire_module() {
  ModelBuilder m(13);
  const auto pads = [](int64_t p) { return attr("pads", std::vector<int64_t>{p, p, p, p}); };
  m.input("x", DataType::float32, {2, 8, 9, 9})
      .initializer("w1", random_tensor({16, 8, 3, 3}, 1))
      .initializer("ws", random_tensor({8, 16, 1, 1}, 2))
      .initializer("we1", random_tensor({12, 8, 1, 1}, 3))
      .initializer("we3", random_tensor({20, 8, 3, 3}, 4))
      .initializer("wy", random_tensor({6, 32, 3, 3}, 5))
      .node("Conv", {"x", "w1"}, {"c1"}, {pads(1)})
      .node("Relu", {"c1"}, {"a"})
      .node("MaxPool", {"a"}, {"p"},
            {attr("kernel_shape", std::vector<int64_t>{3, 3}), attr("strides", std::vector<int64_t>{2, 2})})
      .node("Conv", {"p", "ws"}, {"cs"})
      .node("Relu", {"cs"}, {"s"})
      .node("Conv", {"s", "we1"}, {"ce1"})
      .node("Relu", {"ce1"}, {"e1"})
      .node("Conv", {"s", "we3"}, {"ce3"}, {pads(1)})
      .node("Relu", {"ce3"}, {"e3"})
      .node("Concat", {"e1", "e3"}, {"f"}, {attr("axis", int64_t{1})})
      .node("MaxPool", {"f"}, {"q"}, {attr("kernel_shape", std::vector<int64_t>{2, 2})})
      .node("Conv", {"q", "wy"}, {"y"}, {pads(1)})
      .output("y");
  return m.model();
}

// x -> Conv 3x3 -> "a" (16 channels) -> MaxPool 3x3/2 -> "p" -> Conv 1x1 -> "y": a NaN in x reaches "a" around it
// (a Relu would clear it), and each pixel of "y" depends on one window of the pool alone, so the pool's walk order
// shows.
onnx::ModelProto pool_between_convs() {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 8, 9, 9})
      .initializer("w1", random_tensor({16, 8, 3, 3}, 1))
      .initializer("wy", random_tensor({4, 16, 1, 1}, 2))
      .node("Conv", {"x", "w1"}, {"a"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("MaxPool", {"a"}, {"p"},
            {attr("kernel_shape", std::vector<int64_t>{3, 3}), attr("strides", std::vector<int64_t>{2, 2})})
      .node("Conv", {"p", "wy"}, {"y"})
      .output("y");
  return m.model();
}

// x -> Conv 3x3 + Relu -> "a" -> {Concat(a, x) -> Conv 1x1 -> "y"} and/or {MaxPool -> Sigmoid -> "z"}: "a" read by
// a Concat whose other input is NCHW and by a MaxPool whose reader takes NCHW, so both write NCHW. Kept when one of
// them reads it; with both, each would turn it back to NCHW, so it stays NCHW.
onnx::ModelProto mixed_readers(bool concat, bool pool) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 8, 9, 9})
      .initializer("w1", random_tensor({16, 8, 3, 3}, 1))
      .initializer("wy", random_tensor({5, 24, 1, 1}, 2))
      .node("Conv", {"x", "w1"}, {"c1"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("Relu", {"c1"}, {"a"});
  if (concat) {
    m.node("Concat", {"a", "x"}, {"f"}, {attr("axis", int64_t{1})}).node("Conv", {"f", "wy"}, {"y"}).output("y");
  }
  if (pool) {
    m.node("MaxPool", {"a"}, {"p"}, {attr("kernel_shape", std::vector<int64_t>{2, 2})})
        .node("Sigmoid", {"p"}, {"z"})
        .output("z");
  }
  return m.model();
}

// A squeeze-excitation block, as in efficientnet and mobilenet_v3: x -> Conv 3x3 + Relu -> "a" (20 channels) ->
// depthwise 3x3 -> "d" (9x9: each plane's 81 values span two of the pool's blocks of 64 and end in a partial vector)
// -> {GlobalAveragePool (or GlobalMaxPool) -> Conv 1x1 + Relu -> "r" -> Conv 1x1 + HardSigmoid
// -> "s", Mul(s, d) (or (d, s)) -> "m"} -> Conv 1x1 -> "y". The pool and the Mul read "d" in NHWC, so "a", "d", "m"
// and the squeeze's "r" (1x1 pixels) are kept. With `scale_is_constant`, "d" is scaled by an initializer [1, 20, 1,
// 1] instead; with `m_also_to_sigmoid`, "m" is an input of a Sigmoid too, so the Mul writes it NCHW. With
// `pool_is_output`, the pool's "g" is a graph output too (its sums seen bit for bit: the HardSigmoid after it may
// saturate), and `size` sets the planes' side (9: two blocks of the pool's 64; 23: nine).
struct SqueezeExcitation {
  const char* pool = "GlobalAveragePool";
  bool image_first = false;
  bool scale_is_constant = false;
  bool m_also_to_sigmoid = false;
  bool pool_is_output = false;
  int64_t size = 9;
};
onnx::ModelProto squeeze_excitation(SqueezeExcitation se) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 8, se.size, se.size})
      .initializer("w1", random_tensor({20, 8, 3, 3}, 1))
      .initializer("wd", random_tensor({20, 1, 3, 3}, 2))
      .initializer("wr", random_tensor({8, 20, 1, 1}, 3))
      .initializer("br", random_tensor({8}, 4))
      .initializer("we", random_tensor({20, 8, 1, 1}, 5))
      .initializer("be", random_tensor({20}, 6))
      .initializer("wy", random_tensor({12, 20, 1, 1}, 7))
      .initializer("k", random_tensor({1, 20, 1, 1}, 8))
      .node("Conv", {"x", "w1"}, {"c1"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("Relu", {"c1"}, {"a"})
      .node("Conv", {"a", "wd"}, {"d"}, {attr("group", int64_t{20}), attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node(se.pool, {"d"}, {"g"})
      .node("Conv", {"g", "wr", "br"}, {"r1"})
      .node("Relu", {"r1"}, {"r"})
      .node("Conv", {"r", "we", "be"}, {"e"})
      .node("HardSigmoid", {"e"}, {"s"}, {attr("alpha", 0.2f), attr("beta", 0.5f)});
  const std::string scale = se.scale_is_constant ? "k" : "s";
  m.node("Mul", se.image_first ? std::vector<std::string>{"d", scale} : std::vector<std::string>{scale, "d"}, {"m"})
      .node("Conv", {"m", "wy"}, {"y"})
      .output("y");
  if (se.scale_is_constant) m.output("s");  // still computed
  if (se.m_also_to_sigmoid) m.node("Sigmoid", {"m"}, {"z"}).output("z");
  if (se.pool_is_output) m.output("g");
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

// An inverted residual's end, as in mobilenet_v2: "a" read again as the fused residual of a pointwise Conv without
// an activation, whose sum "r" a Conv 3x3 reads. "r" and its residual "a" are kept together; with `then_relu`, a
// Relu after the Add joins the chain after the residual. The whole chain has no padded channels (16).
template <bool then_relu> void residual_kept(ModelBuilder& m) {
  m.initializer("w4", random_tensor({20, 20, 1, 1}, 6))
      .initializer("w5", random_tensor({16, 20, 3, 3}, 8))
      .node("Conv", {"a", "w4"}, {"c4"})
      .node("Add", {"c4", "a"}, {then_relu ? "s" : "r"});
  if (then_relu) m.node("Relu", {"s"}, {"r"});
  m.node("Conv", {"r", "w5"}, {"z"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})}).output("z");
}

// An element-wise binary of two images of one shape that is not fused into a Conv (a Sub: only an Add can be a
// residual), as a quantized graph's residual Adds are: "s" = "b" - "a" read by a Conv 3x3 (every operand and the
// output kept); with kMixedInput, "b" - Sigmoid("a") ("a" and the Sigmoid's output stay NCHW, "b" is read kept,
// "s" is written NCHW); with kMixedOutput, "s" read by a Sigmoid too (both inputs kept, "s" written NCHW).
enum SameShape { kKept, kMixedInput, kMixedOutput };
template <SameShape variant> void same_shape_binary(ModelBuilder& m) {
  const char* second = "a";
  if (variant == kMixedInput) {
    m.node("Sigmoid", {"a"}, {"g"});
    second = "g";
  }
  m.initializer("w5", random_tensor({16, 20, 3, 3}, 8))
      .node("Sub", {"b", second}, {"s"})
      .node("Conv", {"s", "w5"}, {"z"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .output("z");
  if (variant == kMixedOutput) m.node("Sigmoid", {"s"}, {"t"}).output("t");
}

// A quantized graph's element-wise chain between Convs: x -> Conv 3x3 -> "q" (20 channels, on an int8 grid) -> a
// HardSwish written out (Add 3, Clip 0..6, Mul by "q", Div 6) -> "h" -> Conv 3x3 -> "y". The four run as one table
// step (elementwise_chain.hpp), which reads "q" and writes "h" in one layout: both kept NHWC, or neither when a
// Sigmoid reads "h" too (`h_read_elsewhere`).
onnx::ModelProto quantized_chain(bool h_read_elsewhere) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 8, 9, 9})
      .initializer("w1", random_tensor({20, 8, 3, 3}, 1))
      .initializer("w2", random_tensor({12, 20, 3, 3}, 5))
      .initializer("three", Tensor::from<float>({}, {3.0f}))
      .initializer("zero", Tensor::from<float>({}, {0.0f}))
      .initializer("six", Tensor::from<float>({}, {6.0f}))
      .node("Conv", {"x", "w1"}, {"q"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("Add", {"q", "three"}, {"t"})
      .node("Clip", {"t", "zero", "six"}, {"c"})
      .node("Mul", {"q", "c"}, {"m"})
      .node("Div", {"m", "six"}, {"h"})
      .node("Conv", {"h", "w2"}, {"y"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .output("y");
  if (h_read_elsewhere) m.node("Sigmoid", {"h"}, {"g"}).output("g");
  return m.model();
}

// A feature pyramid's upsampling: x -> Conv 3x3 -> "a" (20 channels) -> Resize by 2 (nearest, or linear) -> "u" ->
// Conv 3x3 -> "y". A nearest Resize reads and writes NHWC, with its input or not at all: "a" and "u" kept, or neither
// when a Sigmoid reads "u" too (`u_read_elsewhere`); a linear one reads NCHW only.
onnx::ModelProto upsampling(const char* mode, bool u_read_elsewhere) {
  ModelBuilder m(13);
  m.input("x", DataType::float32, {2, 8, 9, 9})
      .initializer("w1", random_tensor({20, 8, 3, 3}, 1))
      .initializer("w2", random_tensor({12, 20, 3, 3}, 5))
      .initializer("scales", Tensor::from<float>({4}, {1.0f, 1.0f, 2.0f, 2.0f}))
      .node("Conv", {"x", "w1"}, {"a"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .node("Resize", {"a", "", "scales"}, {"u"},
            {attr("mode", std::string(mode)), attr("coordinate_transformation_mode", std::string("asymmetric")),
             attr("nearest_mode", std::string("floor"))})
      .node("Conv", {"u", "w2"}, {"y"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
      .output("y");
  if (u_read_elsewhere) m.node("Sigmoid", {"u"}, {"g"}).output("g");
  return m.model();
}

struct Run {
  std::vector<Tensor> outputs;
  std::size_t blocked_values = 0;
};

// The model on x (2x8x9x9, random; with a NaN in each image when `nan`, which MaxPool passes on only where it
// comes first in a window).
Run run(const onnx::ModelProto& model, const char* layout, std::size_t threads, bool half = false, bool nan = false) {
  const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", layout);
  Session session(model, SessionOptions{.threads = test_threads(threads), .float16_activations = half});
  std::vector<int64_t> shape;  // the model's input "x": [2, 8, 9, 9] but for the larger squeeze-excitation
  for (const onnx::Dimension& d : model.graph.input.at(0).shape) shape.push_back(d.value);
  Tensor x = random_tensor(shape, 7);
  if (nan) {
    x.data<float>()[40] = std::numeric_limits<float>::quiet_NaN();
    x.data<float>()[8 * 81 + 300] = std::numeric_limits<float>::quiet_NaN();
  }
  Run r;
  r.outputs = session.run(std::vector<Tensor>{x});
  r.blocked_values = session.stats().blocked_values;
  return r;
}

void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(shape_string(got.shape()) == shape_string(want.shape()));
  CHECK(std::memcmp(got.raw(), want.raw(), got.bytes()) == 0);
}

// The graph with the pass on gives the NCHW outputs exactly, keeping `kept` values, or at most that many where
// `only_nhwc` and oneDNN's Convs do not take NHWC on this CPU (MaxPool and Concat keep NHWC alone).
void check_graph(const onnx::ModelProto& model, std::size_t kept, bool only_nhwc = false, bool nan = false) {
  const ScopedEnv conv("RKNNXX_ENGINE_CONV", "onednn-blocked");  // every Conv on the path the pass serves
  for (const std::size_t threads : test_thread_counts({1, 2, 7})) {
    for (const bool half : {false, true}) {
      CAPTURE(threads);
      CAPTURE(half);
      const Run off = run(model, "nchw", threads, half, nan);
      const Run on = run(model, "blocked", threads, half, nan);
      CHECK(off.blocked_values == 0);
      // Cut into bands of rows (NHWC) or into blocks of channels that start a block, a Conv keeps the same layout
      // on any number of threads.
      if (!onednn_conv_built()) {
        CHECK(on.blocked_values == 0);
      } else if (only_nhwc && !onednn_conv_keeps_nhwc()) {
        CHECK(on.blocked_values <= kept);
      } else {
        CHECK(on.blocked_values == kept);
      }
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

  TEST_CASE("a fused residual is kept with its Conv's output, or neither is") {
    check_graph(chain(residual), 1);  // the sum "r" is a graph output: "a" stays NCHW for it too
    // "a", "b" and "r" where oneDNN's Convs take NHWC (20 channels: no padding); elsewhere the blocks of 16 pad
    // "a" and "r", so only "b" is kept.
    check_graph(chain(residual_kept<false>), 3, true);
    check_graph(chain(residual_kept<true>), 3, true);
  }

  TEST_CASE("an element-wise binary of two images of one shape keeps NHWC, or reads and writes both layouts") {
    check_graph(chain(same_shape_binary<kKept>), 3, true);         // "a", "b", "s"
    check_graph(chain(same_shape_binary<kMixedInput>), 1, true);   // "b"
    check_graph(chain(same_shape_binary<kMixedOutput>), 2, true);  // "a", "b"
  }

  TEST_CASE("MaxPool and Concat keep NHWC between Convs") {
    check_graph(fire_module(), 7, true);
    check_graph(pool_between_convs(), 2, true);
    check_graph(pool_between_convs(), 2, true, true);  // NaN where the pool's walk order decides
  }

  TEST_CASE("MaxPool and Concat read a kept value and write NCHW for readers that need it") {
    check_graph(mixed_readers(true, false), 1, true);
    check_graph(mixed_readers(false, true), 1, true);
  }

  TEST_CASE("a value that two readers would turn back to NCHW stays NCHW") {
    check_graph(mixed_readers(true, true), 0, true);
  }

  TEST_CASE("a squeeze-excitation block keeps NHWC through its pool and its Mul") {
    check_graph(squeeze_excitation({}), 4, true);
    check_graph(squeeze_excitation({.image_first = true}), 4, true);
    check_graph(squeeze_excitation({.pool = "GlobalMaxPool"}), 4, true);
    check_graph(squeeze_excitation({.pool = "GlobalMaxPool"}), 4, true, true);  // NaN in the planes
    check_graph(squeeze_excitation({.scale_is_constant = true}), 4, true);
    check_graph(squeeze_excitation({.pool_is_output = true}), 4, true);
    check_graph(squeeze_excitation({.pool_is_output = true, .size = 23}), 4, true);
    check_graph(squeeze_excitation({.pool = "GlobalMaxPool", .pool_is_output = true, .size = 23}), 4, true);
    // 2 x 20 x 41 x 41 values: more than a pool runs on one thread (2^16), so split on 2 and 7.
    check_graph(squeeze_excitation({.pool_is_output = true, .size = 41}), 4, true);
    check_graph(squeeze_excitation({.pool = "GlobalMaxPool", .pool_is_output = true, .size = 41}), 4, true);
    // "m" stays NCHW for the Sigmoid: the Mul reads "d" in NHWC and writes NCHW.
    check_graph(squeeze_excitation({.m_also_to_sigmoid = true}), 3, true);
    // GlobalLpPool reads NCHW alone: "d" stays NCHW, and so does "m", which follows it; "a" and "r" are kept.
    check_graph(squeeze_excitation({.pool = "GlobalLpPool"}), 2, true);
  }

  TEST_CASE("a nearest Resize keeps NHWC with its input, or neither does; a linear one reads NCHW") {
    check_graph(upsampling("nearest", false), 2, true);  // "a", "u"
    check_graph(upsampling("nearest", true), 0, true);
    check_graph(upsampling("linear", false), 0, true);
  }

  TEST_CASE("a standalone Relu or Clip keeps NHWC with its input, or neither does") {
    // Unfused, as in a quantized graph: x -> Conv "a" -> clamp "ra" -> Conv "b" -> Add(b, ra) "s" -> clamp "r" ->
    // Conv "y". Kept: a, ra, b, s, r; with r also a graph output, r and s (tied to it) stay NCHW.
    const ScopedEnv conv("RKNNXX_ENGINE_CONV", "onednn-blocked");
    for (const char* clamp : {"Relu", "Clip"})
      for (const bool r_is_output : {false, true})
        for (const std::size_t threads : test_thread_counts({1, 2, 7})) {
          CAPTURE(clamp);
          CAPTURE(r_is_output);
          CAPTURE(threads);
          ModelBuilder m(13);
          m.input("x", DataType::float32, {2, 8, 9, 9})
              .initializer("w1", random_tensor({16, 8, 3, 3}, 1))
              .initializer("w2", random_tensor({16, 16, 3, 3}, 2))
              .initializer("w3", random_tensor({12, 16, 1, 1}, 3))
              .initializer("lo", Tensor::from<float>({}, {0.0f}))
              .initializer("hi", Tensor::from<float>({}, {6.0f}));
          const auto clamp_node = [&](const std::string& in, const std::string& out) {
            if (std::string(clamp) == "Relu") {
              m.node("Relu", {in}, {out});
            } else {
              m.node("Clip", {in, "lo", "hi"}, {out});
            }
          };
          const auto pads = attr("pads", std::vector<int64_t>{1, 1, 1, 1});
          m.node("Conv", {"x", "w1"}, {"a"}, {pads});
          clamp_node("a", "ra");
          m.node("Conv", {"ra", "w2"}, {"b"}, {pads}).node("Add", {"b", "ra"}, {"s"});
          clamp_node("s", "r");
          m.node("Conv", {"r", "w3"}, {"y"}).output("y");
          if (r_is_output) m.output("r");
          const onnx::ModelProto model = m.model();
          const auto unfused_run = [&](const char* layout) {
            const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", layout);
            Session session(model, SessionOptions{.threads = test_threads(threads), .fuse = false});
            Run r;
            r.outputs = session.run(std::vector<Tensor>{random_tensor({2, 8, 9, 9}, 7)});
            r.blocked_values = session.stats().blocked_values;
            return r;
          };
          const Run off = unfused_run("nchw");
          const Run on = unfused_run("blocked");
          if (onednn_conv_built() && onednn_conv_keeps_nhwc()) CHECK(on.blocked_values == (r_is_output ? 3 : 5));
          REQUIRE(on.outputs.size() == off.outputs.size());
          for (std::size_t o = 0; o < on.outputs.size(); ++o) check_same(on.outputs[o], off.outputs[o]);
        }
  }

  TEST_CASE("an element-wise chain on a quantized value keeps NHWC with its input, or neither does") {
    const ScopedEnv conv("RKNNXX_ENGINE_CONV", "onednn-blocked");
    const IntegerGrid grid{{0.02f}, {-5}, 0, -128, 127};
    for (const bool h_read_elsewhere : {false, true})
      for (const std::size_t threads : test_thread_counts({1, 2, 7})) {
        CAPTURE(h_read_elsewhere);
        CAPTURE(threads);
        const auto quantized_run = [&](const char* layout, bool chain = true) {
          const ScopedEnv env("RKNNXX_ENGINE_LAYOUT", layout);
          Graph graph(quantized_chain(h_read_elsewhere));
          const ValueId q = *graph.find("q");
          graph.set_integer_grid(q, grid);
          // Unfused, as a quantized graph is but for its clamps (quantize::QuantizedSession).
          Session session(std::move(graph),
                          SessionOptions{.threads = test_threads(threads), .fuse = false, .chain_elementwise = chain});
          session.set_output_rounding([q](ValueId id, std::span<float> values) {
            if (id != q) return;
            for (float& v : values) v = (std::clamp(std::nearbyint(v / 0.02f) - 5.0f, -128.0f, 127.0f) + 5.0f) * 0.02f;
          });
          Run r;
          r.outputs = session.run(std::vector<Tensor>{random_tensor({2, 8, 9, 9}, 7)});
          r.blocked_values = session.stats().blocked_values;
          CHECK(session.stats().elementwise_chains == (chain ? 1 : 0));
          CHECK(session.stats().steps_run_by_producers == (chain ? 1 : 0));  // by the Conv, in its layout
          return r;
        };
        const Run alone = quantized_run("nchw", false);
        const Run off = quantized_run("nchw");
        const Run on = quantized_run("blocked");
        if (onednn_conv_built() && onednn_conv_keeps_nhwc()) CHECK(on.blocked_values == (h_read_elsewhere ? 0 : 2));
        REQUIRE(on.outputs.size() == off.outputs.size());
        for (std::size_t o = 0; o < on.outputs.size(); ++o) {
          check_same(on.outputs[o], off.outputs[o]);
          check_same(off.outputs[o], alone.outputs[o]);
        }
      }
  }

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
