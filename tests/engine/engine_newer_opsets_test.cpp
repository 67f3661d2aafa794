// Issue 15, opsets 18 to 21: the operator forms those opsets changed, each against values worked
// out by hand from ONNX's definitions (the comments show the arithmetic; Debian's onnx 1.12 has no
// node tests or reference for these opsets), and the forms the engine refuses, with their one-line
// messages (docs/conformance.md, "Opsets 18 to 21").

#include "engine_test_model.hpp"

#include <cstdint>
#include <vector>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

std::string load_refusal(const onnx::ModelProto& model) {
  return error_of([&] { Graph g(model); });
}

template <class T> std::vector<T> values_of(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::from<float>(std::move(shape), std::span<const float>(values));
}

Tensor int64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Tensor::from<int64_t>(std::move(shape), std::span<const int64_t>(values));
}

// One node reading x (float32 of `shape`) and the given initializers, at `opset`.
ModelBuilder one_node(int64_t opset, const char* op, std::vector<int64_t> shape, std::vector<std::string> inputs,
                      std::vector<onnx::AttributeProto> attributes, DataType type = DataType::float32) {
  ModelBuilder b(opset);
  b.input("x", type, std::move(shape)).output("y");
  inputs.insert(inputs.begin(), "x");
  b.node(op, std::move(inputs), {"y"}, std::move(attributes), "n");
  return b;
}

}  // namespace

TEST_SUITE("engine.newer_opsets") {
  TEST_CASE("a model of opset 21 whose operators kept their form loads and runs: Conv, Relu, ReduceMean") {
    // Windows of 2x2 ones over 1..9: 12, 16, 24, 28; bias -14: -2, 2, 10, 14; Relu: 0, 2, 10, 14;
    // their mean (ReduceMean-18, axes as input): 26 / 4.
    ModelBuilder b(21);
    b.input("x", DataType::float32, {1, 1, 3, 3})
        .initializer("w", floats({1, 1, 2, 2}, {1, 1, 1, 1}))
        .initializer("bias", floats({1}, {-14}))
        .initializer("axes", int64s({2}, {2, 3}))
        .output("y")
        .node("Conv", {"x", "w", "bias"}, {"c"}, {}, "conv")
        .node("Relu", {"c"}, {"r"}, {}, "relu")
        .node("ReduceMean", {"r", "axes"}, {"y"}, {attr("keepdims", int64_t{0})}, "mean");
    CHECK(Graph(b.model()).opset() == 21);
    const Tensor y = run_one(b.model(), {floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
    CHECK(shape_string(y.shape()) == "[1, 1]");
    CHECK(values_of<float>(y) == std::vector<float>{6.5f});
  }

  TEST_CASE("Reduce*-18 take axes as input; the attribute form is refused from then on") {
    auto b = one_node(18, "ReduceMax", {2, 3}, {"axes"}, {});
    b.initializer("axes", int64s({1}, {-1}));
    const Tensor x = floats({2, 3}, {1, 5, 2, 7, 0, 3});
    CHECK(values_of<float>(run_one(b.model(), {x})) == std::vector<float>{5, 7});  // keepdims: [2, 1]
    // No axes and noop_with_empty_axes: the input unchanged.
    auto noop = one_node(18, "ReduceMin", {2, 3}, {}, {attr("noop_with_empty_axes", int64_t{1})});
    CHECK(values_of<float>(run_one(noop.model(), {x})) == std::vector<float>{1, 5, 2, 7, 0, 3});
    auto old_form = one_node(18, "ReduceProd", {2, 3}, {}, {attr("axes", std::vector<int64_t>{1})});
    CHECK(planning_refusal(old_form.model()) ==
          "node 'n' (ReduceProd): attribute 'axes' is the form before opset 18; at opset 18 the axes are input 1");
  }

  TEST_CASE("ReduceMax-20 and ReduceMin-20 take bool: any and all") {
    const bool rows[] = {true, false, false, false, false, false};
    const Tensor x = Tensor::from<bool>({2, 3}, std::span<const bool>(rows));
    auto any = one_node(20, "ReduceMax", {2, 3}, {"axes"}, {attr("keepdims", int64_t{0})}, DataType::boolean);
    any.initializer("axes", int64s({1}, {1}));
    const Tensor y = run_one(any.model(), {x});
    REQUIRE(y.dtype() == DataType::boolean);
    CHECK(values_of<bool>(y) == std::vector<bool>{true, false});
    const bool columns[] = {true, true, false, true, false, true};
    auto all = one_node(20, "ReduceMin", {2, 3}, {"axes"}, {attr("keepdims", int64_t{0})}, DataType::boolean);
    all.initializer("axes", int64s({1}, {0}));
    CHECK(values_of<bool>(run_one(all.model(), {Tensor::from<bool>({2, 3}, std::span<const bool>(columns))})) ==
          std::vector<bool>{true, false, false});
    auto early = one_node(19, "ReduceMax", {2, 3}, {}, {}, DataType::boolean);
    CHECK(planning_refusal(early.model()) ==
          "node 'n' (ReduceMax): bool input needs opset 20 or later (the model's opset is 19)");
  }

  TEST_CASE("Split-18 num_outputs: chunks of ceil(n / num_outputs), the last one shorter") {
    ModelBuilder b(18);
    b.input("x", DataType::float32, {7})
        .output("a")
        .output("b")
        .output("c")
        .node("Split", {"x"}, {"a", "b", "c"}, {attr("num_outputs", int64_t{3})}, "split");
    Session session(b.model(), SessionOptions{.threads = test_threads(2)});
    const std::vector<Tensor> inputs{floats({7}, {0, 1, 2, 3, 4, 5, 6})};
    const auto out = session.run(inputs);
    REQUIRE(out.size() == 3);
    CHECK(values_of<float>(out[0]) == std::vector<float>{0, 1, 2});
    CHECK(values_of<float>(out[1]) == std::vector<float>{3, 4, 5});
    CHECK(values_of<float>(out[2]) == std::vector<float>{6});
    b.model().graph.node[0].attribute[0].i = 2;
    CHECK(planning_refusal(b.model()) == "node 'split' (Split): attribute 'num_outputs' is 2, the node has 3 outputs");
    // 5 into 4: chunks of 2 leave nothing for the fourth.
    ModelBuilder odd(18);
    odd.input("x", DataType::float32, {5}).output("a").output("b").output("c").output("d");
    odd.node("Split", {"x"}, {"a", "b", "c", "d"}, {attr("num_outputs", int64_t{4})}, "split");
    CHECK(planning_refusal(odd.model()) == "node 'split' (Split): axis 0 of size 5 cannot be split into 4 chunks of 2");
  }

  TEST_CASE("Pad-18 pads only the listed axes; Pad-19 wraps around") {
    auto b = one_node(18, "Pad", {2, 3}, {"pads", "", "axes"}, {});
    b.initializer("pads", int64s({2}, {1, 2})).initializer("axes", int64s({1}, {-1}));
    CHECK(values_of<float>(run_one(b.model(), {floats({2, 3}, {1, 2, 3, 4, 5, 6})})) ==
          std::vector<float>{0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0});
    // numpy.pad([1, 2, 3], (2, 4), "wrap"): the last two, the row, then from its start again.
    auto wrap = one_node(19, "Pad", {1, 3}, {"pads"}, {attr("mode", "wrap")});
    wrap.initializer("pads", int64s({4}, {0, 2, 0, 4}));
    CHECK(values_of<float>(run_one(wrap.model(), {floats({1, 3}, {1, 2, 3})})) ==
          std::vector<float>{2, 3, 1, 2, 3, 1, 2, 3, 1});
    // A negative pad crops first (ONNX's reference): [1, 2, 3, 4] cropped to [2, 3, 4], then 2 wrapped.
    auto crop = one_node(19, "Pad", {4}, {"pads"}, {attr("mode", "wrap")});
    crop.initializer("pads", int64s({2}, {-1, 2}));
    CHECK(values_of<float>(run_one(crop.model(), {floats({4}, {1, 2, 3, 4})})) == std::vector<float>{2, 3, 4, 2, 3});
    auto early = one_node(18, "Pad", {1, 3}, {"pads"}, {attr("mode", "wrap")});
    early.initializer("pads", int64s({4}, {0, 2, 0, 4}));
    CHECK(planning_refusal(early.model()) ==
          "node 'n' (Pad): mode 'wrap' is not supported at opset 18 (constant, "
          "reflect or edge; wrap from opset 19 on)");
    auto twice = one_node(18, "Pad", {2, 3}, {"pads", "", "axes"}, {});
    twice.initializer("pads", int64s({4}, {1, 1, 1, 1})).initializer("axes", int64s({2}, {1, -1}));
    CHECK(planning_refusal(twice.model()) == "node 'n' (Pad): axes [1, -1] names axis 1 twice");
  }

  TEST_CASE("Resize-18 axes and keep_aspect_ratio_policy") {
    // Only the last axis, to 4: nearest with asymmetric floor doubles each column.
    auto b = one_node(18, "Resize", {1, 1, 2, 2}, {"", "", "sizes"},
                      {attr("axes", std::vector<int64_t>{3}), attr("coordinate_transformation_mode", "asymmetric"),
                       attr("nearest_mode", "floor")});
    b.initializer("sizes", int64s({1}, {4}));
    const Tensor y = run_one(b.model(), {floats({1, 1, 2, 2}, {1, 2, 3, 4})});
    CHECK(shape_string(y.shape()) == "[1, 1, 2, 4]");
    CHECK(values_of<float>(y) == std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4});
    // x[r][c] = 4r + c, 2x4, sizes 3x3, not_larger: the scale min(3/2, 3/4) = 0.75 for both axes,
    // lengths round(1.5) = 2 and 3. Linear half_pixel, source (j + 0.5) / 0.75 - 0.5: rows 1/6 and 1.5
    // (clamped to 1), columns 1/6, 1.5, 17/6; x is linear, so y = 4 * row + column.
    auto keep = one_node(18, "Resize", {2, 4}, {"", "", "sizes"},
                         {attr("mode", "linear"), attr("keep_aspect_ratio_policy", "not_larger")});
    keep.initializer("sizes", int64s({2}, {3, 3}));
    const Tensor k = run_one(keep.model(), {floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})});
    CHECK(shape_string(k.shape()) == "[2, 3]");
    const float r0 = 4.0f / 6.0f;
    check_close(k, floats({2, 3}, {r0 + 1.0f / 6, r0 + 1.5f, r0 + 17.0f / 6, 4 + 1.0f / 6, 5.5f, 4 + 17.0f / 6}));
    // not_smaller: max(3/2, 3/4) = 1.5, lengths 3 and 6.
    keep.model().graph.node[0].attribute[1].s = "not_smaller";
    CHECK(shape_string(run_one(keep.model(), {floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}).shape()) == "[3, 6]");
  }

  TEST_CASE("Resize-19 half_pixel_symmetric centres the rounded output") {
    // Length 4 at scale 0.6: 2.4, rounded down to 2. Offset 2 * (1 - 2 / 2.4) = 1/3, sources
    // 1/3 + (j + 0.5) / 0.6 - 0.5 = 2/3 and 7/3; x = position + 1. (half_pixel: 1/3 and 2.)
    auto b = one_node(19, "Resize", {1, 4}, {"", "scales"},
                      {attr("mode", "linear"), attr("coordinate_transformation_mode", "half_pixel_symmetric")});
    b.initializer("scales", floats({2}, {1.0f, 0.6f}));
    check_close(run_one(b.model(), {floats({1, 4}, {1, 2, 3, 4})}), floats({1, 2}, {5.0f / 3, 10.0f / 3}));
    auto early = b;
    early.model().opset_import[0].version = 18;
    CHECK(planning_refusal(early.model()) ==
          "node 'n' (Resize): coordinate_transformation_mode 'half_pixel_symmetric' is not supported at opset 18");
  }

  TEST_CASE("Resize-18 antialias=1 is refused when the model loads") {
    auto b = one_node(18, "Resize", {1, 4}, {"", "scales"}, {attr("mode", "linear"), attr("antialias", int64_t{1})});
    b.initializer("scales", floats({2}, {1.0f, 0.5f}));
    CHECK(load_refusal(b.model()) ==
          "node 'n' (Resize): Resize at opset 18 is not supported by the host engine: from opset 18 on antialias=1 "
          "widens the interpolation filter when downscaling, which the host engine does not implement");
    b.model().graph.node[0].attribute[1].i = 0;
    CHECK(load_refusal(b.model()).empty());
  }

  TEST_CASE("ScatterElements-18 and ScatterND-18 reduce with max and min") {
    auto b = one_node(18, "ScatterElements", {1, 4}, {"i", "u"}, {attr("axis", int64_t{1}), attr("reduction", "max")});
    b.initializer("i", int64s({1, 3}, {0, 0, 2})).initializer("u", floats({1, 3}, {4, 0, 9}));
    // [1, 5, 3, 7]: position 0 takes max(1, 4, 0), position 2 max(3, 9).
    CHECK(values_of<float>(run_one(b.model(), {floats({1, 4}, {1, 5, 3, 7})})) == std::vector<float>{4, 5, 9, 7});
    auto nd = one_node(18, "ScatterND", {4}, {"i", "u"}, {attr("reduction", "min")});
    nd.initializer("i", int64s({3, 1}, {1, 1, 3})).initializer("u", floats({3}, {3, 4, 9}));
    CHECK(values_of<float>(run_one(nd.model(), {floats({4}, {5, 5, 5, 5})})) == std::vector<float>{5, 3, 5, 5});
  }

  TEST_CASE("LpPool-18 ceil_mode and dilations; AveragePool-19 dilations") {
    const Tensor x = floats({1, 1, 5}, {1, 2, 3, 4, 5});
    auto ceil = one_node(18, "LpPool", {1, 1, 5}, {},
                         {attr("kernel_shape", std::vector<int64_t>{2}), attr("strides", std::vector<int64_t>{2}),
                          attr("ceil_mode", int64_t{1}), attr("p", int64_t{1})});
    CHECK(values_of<float>(run_one(ceil.model(), {x})) == std::vector<float>{3, 7, 5});  // |1|+|2|, |3|+|4|, |5|
    auto dilated =
        one_node(18, "LpPool", {1, 1, 5}, {},
                 {attr("kernel_shape", std::vector<int64_t>{2}), attr("dilations", std::vector<int64_t>{2})});
    check_close(run_one(dilated.model(), {x}),
                floats({1, 1, 3}, {std::sqrt(1.0f + 9), std::sqrt(4.0f + 16), std::sqrt(9.0f + 25)}));

    auto average = one_node(19, "AveragePool", {1, 1, 5}, {},
                            {attr("kernel_shape", std::vector<int64_t>{2}), attr("dilations", std::vector<int64_t>{2}),
                             attr("pads", std::vector<int64_t>{1, 1}), attr("count_include_pad", int64_t{1})});
    // Taps at start and start + 2, start = -1 .. 3 (x[-1] and x[5] are padding, counted as zeros):
    // (0 + 2) / 2, (1 + 3) / 2, (2 + 4) / 2, (3 + 5) / 2, (4 + 0) / 2.
    CHECK(values_of<float>(run_one(average.model(), {x})) == std::vector<float>{1, 2, 3, 4, 2});
    average.model().graph.node[0].attribute[3].i = 0;  // padding not counted: 2 / 1 and 4 / 1 at the ends
    CHECK(values_of<float>(run_one(average.model(), {x})) == std::vector<float>{2, 2, 3, 4, 4});
    average.model().opset_import[0].version = 18;
    CHECK(planning_refusal(average.model()) ==
          "node 'n' (AveragePool): dilations need AveragePool-19 (opset 19 or later; the model's opset is 18)");
  }

  TEST_CASE("DFT-20 takes the axis as an input, -2 when omitted") {
    // [1, 2, 3, 4]: X0 = 10, X1 = 1 - 2i - 3 + 4i = -2 + 2i, X2 = 1 - 2 + 3 - 4 = -2, X3 = -2 - 2i.
    const std::vector<float> want{10, 0, -2, 2, -2, 0, -2, -2};
    const Tensor x = floats({1, 4, 1}, {1, 2, 3, 4});
    auto b = one_node(20, "DFT", {1, 4, 1}, {"", "axis"}, {});
    b.initializer("axis", Tensor::scalar<int64_t>(1));
    check_close(run_one(b.model(), {x}), floats({1, 4, 2}, want));
    auto omitted = one_node(20, "DFT", {1, 4, 1}, {}, {});
    check_close(run_one(omitted.model(), {x}), floats({1, 4, 2}, want));
    auto attribute = one_node(20, "DFT", {1, 4, 1}, {}, {attr("axis", int64_t{1})});
    CHECK(planning_refusal(attribute.model()) ==
          "node 'n' (DFT): DFT-20 (opset 20) takes the axis as input 2, not as an attribute");
  }

  TEST_CASE("GridSample-20's mode names; its n-D form is refused") {
    // The grid point (0, 0) is the image's centre: the mean of the four pixels.
    auto b = one_node(20, "GridSample", {1, 1, 2, 2}, {"grid"}, {attr("mode", "linear")});
    b.initializer("grid", floats({1, 1, 1, 2}, {0, 0}));
    CHECK(values_of<float>(run_one(b.model(), {floats({1, 1, 2, 2}, {1, 2, 3, 4})})) == std::vector<float>{2.5f});
    auto volume = one_node(20, "GridSample", {1, 1, 2, 2, 2}, {"grid"}, {});
    volume.initializer("grid", floats({1, 1, 1, 1, 3}, {0, 0, 0}));
    CHECK(planning_refusal(volume.model()) ==
          "node 'n' (GridSample): input X has shape [1, 1, 2, 2, 2], expected [N, C, H, W] (GridSample-20's "
          "volumetric and other non-2-D forms are not implemented)");
  }

  TEST_CASE("QuantizeLinear-21 and DequantizeLinear-21 by blocks along an axis") {
    // Blocks of 2 along axis 1: scales [[1, 10], [100, 1000]].
    const Tensor scale = floats({2, 2}, {1, 10, 100, 1000});
    auto dq = one_node(21, "DequantizeLinear", {2, 4}, {"s"},
                       {attr("axis", int64_t{1}), attr("block_size", int64_t{2})}, DataType::int8);
    dq.initializer("s", scale);
    const Tensor q = Tensor::from<int8_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(values_of<float>(run_one(dq.model(), {q})) == std::vector<float>{1, 2, 30, 40, 500, 600, 7000, 8000});
    auto quantize = one_node(21, "QuantizeLinear", {2, 4}, {"s"},
                             {attr("axis", int64_t{1}), attr("block_size", int64_t{2}),
                              attr("output_dtype", static_cast<int64_t>(DataType::int8))});
    quantize.initializer("s", scale);
    const Tensor back = run_one(quantize.model(), {floats({2, 4}, {1, 2, 30, 40, 500, 600, 7000, 8000})});
    REQUIRE(back.dtype() == DataType::int8);
    CHECK(values_of<int8_t>(back) == values_of<int8_t>(q));
    // 3 along the axis in blocks of 2: the second block holds one element.
    auto uneven = one_node(21, "DequantizeLinear", {1, 3}, {"s"},
                           {attr("axis", int64_t{1}), attr("block_size", int64_t{2})}, DataType::int8);
    uneven.initializer("s", floats({1, 2}, {1, 10}));
    CHECK(values_of<float>(run_one(uneven.model(), {Tensor::from<int8_t>({1, 3}, {1, 2, 3})})) ==
          std::vector<float>{1, 2, 30});
    auto wrong = one_node(21, "DequantizeLinear", {1, 3}, {"s"},
                          {attr("axis", int64_t{1}), attr("block_size", int64_t{2})}, DataType::int8);
    wrong.initializer("s", floats({1, 3}, {1, 1, 1}));
    CHECK(planning_refusal(wrong.model()) ==
          "node 'n' (DequantizeLinear): scale 's' has shape [1, 3], expected [1, 2] "
          "for blocks of 2 along axis 1 of input [1, 3]");
  }

  TEST_CASE("QuantizeLinear-21 and DequantizeLinear-21 on int16 and uint16") {
    // Rounding half to even, then saturation: -70000 to -32768, 1.5 to 2, 2.5 to 2.
    auto q = one_node(21, "QuantizeLinear", {3}, {"s", "z"}, {});
    q.initializer("s", Tensor::scalar<float>(1.0f)).initializer("z", Tensor::scalar<int16_t>(0));
    const Tensor y = run_one(q.model(), {floats({3}, {-70000, 1.5f, 2.5f})});
    REQUIRE(y.dtype() == DataType::int16);
    CHECK(values_of<int16_t>(y) == std::vector<int16_t>{-32768, 2, 2});
    auto dq = one_node(21, "DequantizeLinear", {2}, {"s", "z"}, {}, DataType::uint16);
    dq.initializer("s", Tensor::scalar<float>(0.5f)).initializer("z", Tensor::scalar<uint16_t>(1));
    CHECK(values_of<float>(run_one(dq.model(), {Tensor::from<uint16_t>({2}, {65535, 0})})) ==
          std::vector<float>{32767, -0.5f});
    q.model().opset_import[0].version = 20;
    CHECK(planning_refusal(q.model()) ==
          "node 'n' (QuantizeLinear): int16 quantization needs opset 21 or later (the model's opset is 20)");
  }

  TEST_CASE("float8 and int4 of opsets 19 to 21 are refused by name") {
    auto cast = one_node(19, "Cast", {2}, {}, {attr("to", static_cast<int64_t>(DataType::float8e4m3fn))});
    CHECK(load_refusal(cast.model()) ==
          "node 'n' (Cast): Cast at opset 19 is not supported by the host engine: from opset 19 on it may produce "
          "float8, int4 and uint4 tensors, and this node does: the host engine has no such element type");
    auto quantize =
        one_node(21, "QuantizeLinear", {2}, {"s"}, {attr("output_dtype", static_cast<int64_t>(DataType::int4))});
    quantize.initializer("s", Tensor::scalar<float>(1.0f));
    CHECK(load_refusal(quantize.model()).find("QuantizeLinear at opset 21 is not supported by the host engine") !=
          std::string::npos);
    ModelBuilder weights(21);
    onnx::TensorProto w;
    w.name = "w";
    w.data_type = DataType::int4;
    w.dims = {2};
    w.raw_data = std::string(1, '\x21');
    weights.input("x", DataType::float32, {2}).output("y").node("Identity", {"x"}, {"y"});
    weights.model().graph.initializer.push_back(w);
    CHECK(load_refusal(weights.model()) ==
          "initializer 'w': tensor 'w': element type int4 is not supported by the host engine");
  }
}
