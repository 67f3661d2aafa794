// The operators of issue 15's last step (docs/conformance.md, "Operators of opsets 18 to 21" and
// the three of opset <= 17 no node test covers): GlobalLpPool, LpNormalization, MaxRoiPool,
// GroupNormalization, Gelu, Mish, the Bitwise operators, CenterCropPad, Col2Im, AffineGrid and
// DeformConv. The
// expected values are worked out by hand in the comments, or computed here by a direct loop over
// the operator's definition; every operator's refusals are checked word for word.

#include "engine_test_model.hpp"

#include <cmath>
#include <cstdint>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// A one-node model of `op` on float input x of `shape`, the other inputs initializers.
onnx::ModelProto one_node(int64_t opset, const std::string& op, std::vector<int64_t> shape,
                          std::vector<std::pair<std::string, Tensor>> initializers = {},
                          std::vector<onnx::AttributeProto> attributes = {}, DataType type = DataType::float32) {
  ModelBuilder m(opset);
  m.input("x", type, std::move(shape)).output("y");
  std::vector<std::string> inputs{"x"};
  for (auto& [name, tensor] : initializers) {
    m.initializer(name, tensor);
    inputs.push_back(name);
  }
  m.node(op, inputs, {"y"}, std::move(attributes), "n");
  return m.model();
}

Tensor floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::from<float>(std::move(shape), std::span<const float>(values));
}

}  // namespace

TEST_SUITE("engine.new_ops") {
  TEST_CASE("GlobalLpPool is the p-norm of each channel") {
    // Channel 0: 1, -2, 2, 0 (2-norm 3, 1-norm 5, 3-norm cbrt(17)); channel 1: 3, 4, 0, 0 (5, 7, cbrt(91)).
    const Tensor x = floats({1, 2, 2, 2}, {1, -2, 2, 0, 3, 4, 0, 0});
    check_close(run_one(one_node(13, "GlobalLpPool", {1, 2, 2, 2}), {x}), floats({1, 2, 1, 1}, {3, 5}));
    check_close(run_one(one_node(13, "GlobalLpPool", {1, 2, 2, 2}, {}, {attr("p", int64_t{1})}), {x}),
                floats({1, 2, 1, 1}, {5, 7}));
    check_close(run_one(one_node(13, "GlobalLpPool", {1, 2, 2, 2}, {}, {attr("p", int64_t{3})}), {x}),
                floats({1, 2, 1, 1}, {std::cbrt(17.0f), std::cbrt(91.0f)}), 1e-5f);
    // Opset 1 had a float p.
    check_close(run_one(one_node(1, "GlobalLpPool", {1, 2, 4}, {}, {attr("p", 2.0f)}),
                        {floats({1, 2, 4}, {1, -2, 2, 0, 3, 4, 0, 0})}),
                floats({1, 2, 1}, {3, 5}));
    CHECK(planning_refusal(one_node(13, "GlobalLpPool", {2, 4})) ==
          "node 'n' (GlobalLpPool): input 'x' has shape [2, 4], expected rank 3 or more");
    CHECK(planning_refusal(one_node(13, "GlobalLpPool", {1, 2, 4}, {}, {attr("p", int64_t{0})})) ==
          "node 'n' (GlobalLpPool): attribute 'p' is 0, expected a positive exponent");
  }

  TEST_CASE("LpNormalization divides by the norm along the axis; a zero vector stays zero") {
    // Rows (3, 4, 0), (0, 0, 0), (1, -1, 2): 2-norms 5, 0, sqrt(6); 1-norms 7, 0, 4.
    const Tensor x = floats({3, 3}, {3, 4, 0, 0, 0, 0, 1, -1, 2});
    const float r6 = 1.0f / std::sqrt(6.0f);
    check_close(run_one(one_node(13, "LpNormalization", {3, 3}), {x}),
                floats({3, 3}, {0.6f, 0.8f, 0, 0, 0, 0, r6, -r6, 2 * r6}), 1e-6f);
    check_close(run_one(one_node(13, "LpNormalization", {3, 3}, {}, {attr("p", int64_t{1})}), {x}),
                floats({3, 3}, {3.0f / 7, 4.0f / 7, 0, 0, 0, 0, 0.25f, -0.25f, 0.5f}), 1e-6f);
    // Along axis 0 the columns are (3, 0, 1), (4, 0, -1), (0, 0, 2): 2-norms sqrt(10), sqrt(17), 2.
    const float r10 = 1.0f / std::sqrt(10.0f), r17 = 1.0f / std::sqrt(17.0f);
    check_close(run_one(one_node(13, "LpNormalization", {3, 3}, {}, {attr("axis", int64_t{0})}), {x}),
                floats({3, 3}, {3 * r10, 4 * r17, 0, 0, 0, 0, r10, -r17, 1}), 1e-6f);
    // A middle axis of a rank-3 tensor against the definition.
    const Tensor z = random_tensor({2, 5, 3}, 7);
    const Tensor y = run_one(one_node(13, "LpNormalization", {2, 5, 3}, {}, {attr("axis", int64_t{1})}), {z});
    const auto zv = z.values<float>(), yv = y.values<float>();
    for (std::size_t o = 0; o < 2; ++o)
      for (std::size_t i = 0; i < 3; ++i) {
        double sum = 0.0;
        for (std::size_t a = 0; a < 5; ++a) sum += zv[(o * 5 + a) * 3 + i] * zv[(o * 5 + a) * 3 + i];
        for (std::size_t a = 0; a < 5; ++a)
          CHECK(yv[(o * 5 + a) * 3 + i] == doctest::Approx(zv[(o * 5 + a) * 3 + i] / std::sqrt(sum)).epsilon(1e-6));
      }
    CHECK(planning_refusal(one_node(13, "LpNormalization", {3, 3}, {}, {attr("p", int64_t{3})})) ==
          "node 'n' (LpNormalization): attribute 'p' is 3, expected 1 or 2");
    CHECK(planning_refusal(one_node(13, "LpNormalization", {3, 3}, {}, {attr("axis", int64_t{2})}))
              .find("node 'n' (LpNormalization): ") == 0);
  }

  TEST_CASE("MaxRoiPool takes the maximum of each bin of each region") {
    // Two images of two channels; image b channel c holds 100 * b + 10 * c + (4 * row + column).
    std::vector<float> xv(2 * 2 * 4 * 4);
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(100 * (i / 32) + 10 * (i / 16 % 2) + i % 16);
    const Tensor x = floats({2, 2, 4, 4}, xv);
    auto model = [](std::vector<int64_t> pooled, float scale, int64_t regions) {
      ModelBuilder m(13);
      m.input("x", DataType::float32, {2, 2, 4, 4})
          .input("rois", DataType::float32, {regions, 5})
          .output("y")
          .node("MaxRoiPool", {"x", "rois"}, {"y"},
                {attr("pooled_shape", std::move(pooled)), attr("spatial_scale", scale)}, "n");
      return m.model();
    };
    // Region (0,0)-(3,3) is the whole 4x4 plane: 2x2 bins of 2x2 pixels, maxima at pixels 5, 7, 13, 15.
    // 3x3 bins of 4/3 pixels cover rows (and columns) [0, 2), [1, 3), [2, 4): maxima at 4 * (end - 1) + (end - 1).
    // Region (1,1)-(2,2) of image 1 is 2x2 pixels: bins of one pixel, 5, 6, 9, 10.
    // Region (2,2)-(5,5): its first bin covers rows and columns [2, 4) (maximum pixel 15), the other
    // three lie outside the plane and cover nothing: 0.
    // Region (5,5)-(8,8) lies outside the plane: its bins cover nothing and give 0.
    const Tensor rois = floats({4, 5}, {0, 0, 0, 3, 3, 1, 1, 1, 2, 2, 0, 2, 2, 5, 5, 1, 5, 5, 8, 8});
    const Tensor y22 = run_one(model({2, 2}, 1.0f, 4), {x, rois});
    check_close(y22, floats({4, 2, 2, 2}, {5,  7, 13, 15, 15, 17, 23, 25, 105, 106, 109, 110, 115, 116, 119, 120,
                                           15, 0, 0,  0,  25, 0,  0,  0,  0,   0,   0,   0,   0,   0,   0,   0}));
    const Tensor y33 = run_one(model({3, 3}, 1.0f, 1), {x, floats({1, 5}, {0, 0, 0, 3, 3})});
    check_close(y33, floats({1, 2, 3, 3}, {5, 6, 7, 9, 10, 11, 13, 14, 15, 15, 16, 17, 19, 20, 21, 23, 24, 25}));
    // spatial_scale 0.5: region (0,0)-(6,6) becomes (0,0)-(3,3).
    check_close(run_one(model({2, 2}, 0.5f, 1), {x, floats({1, 5}, {0, 0, 0, 6, 6})}),
                floats({1, 2, 2, 2}, {5, 7, 13, 15, 15, 17, 23, 25}));
    CHECK(error_of([&] {
            run_one(model({2, 2}, 1.0f, 1), {x, floats({1, 5}, {2, 0, 0, 3, 3})});
          }) == "node 'n' (MaxRoiPool): batch index 2 of region 0 is not an image of the batch of 2");
    CHECK(error_of([&] {
            run_one(model({2, 2}, 1.0f, 1), {x, floats({1, 5}, {0.5f, 0, 0, 3, 3})});
          }) == "node 'n' (MaxRoiPool): batch index 0.5 of region 0 is not an image of the batch of 2");
    CHECK(planning_refusal(model({2}, 1.0f, 1)) ==
          "node 'n' (MaxRoiPool): attribute 'pooled_shape' is [2], expected two positive extents [height, width]");
    ModelBuilder bad(13);
    bad.input("x", DataType::float32, {2, 2, 4, 4})
        .input("rois", DataType::float32, {3, 4})
        .output("y")
        .node("MaxRoiPool", {"x", "rois"}, {"y"}, {attr("pooled_shape", std::vector<int64_t>{2, 2})}, "n");
    CHECK(planning_refusal(bad.model()) ==
          "node 'n' (MaxRoiPool): input 'rois' has shape [3, 4], expected [num_rois, 5]");
  }

  TEST_CASE("GroupNormalization: scale and bias per group in opset 18, per channel in opset 21") {
    const int64_t n = 2, c = 6, groups = 3, plane = 5;
    const Tensor x = random_tensor({n, c, plane}, 11, -2.0f, 3.0f);
    for (const int64_t opset : {18, 21}) {
      CAPTURE(opset);
      const int64_t params = opset == 18 ? groups : c;
      const Tensor scale = random_tensor({params}, 12, 0.5f, 2.0f);
      const Tensor bias = random_tensor({params}, 13);
      const Tensor y = run_one(one_node(opset, "GroupNormalization", {n, c, plane}, {{"s", scale}, {"b", bias}},
                                        {attr("num_groups", groups), attr("epsilon", 1e-3f)}),
                               {x});
      const auto xv = x.values<float>(), yv = y.values<float>(), sv = scale.values<float>(), bv = bias.values<float>();
      const std::size_t group_size = static_cast<std::size_t>(c / groups * plane);
      for (std::size_t g = 0; g < static_cast<std::size_t>(n * groups); ++g) {
        double mean = 0.0, var = 0.0;
        for (std::size_t i = 0; i < group_size; ++i) mean += xv[g * group_size + i];
        mean /= static_cast<double>(group_size);
        for (std::size_t i = 0; i < group_size; ++i) var += std::pow(xv[g * group_size + i] - mean, 2);
        var /= static_cast<double>(group_size);
        for (std::size_t i = 0; i < group_size; ++i) {
          const std::size_t channel = g * group_size / static_cast<std::size_t>(plane) % static_cast<std::size_t>(c) +
              i / static_cast<std::size_t>(plane);
          const std::size_t p = opset == 18 ? g % static_cast<std::size_t>(groups) : channel;
          const double want = sv[p] * (xv[g * group_size + i] - mean) / std::sqrt(var + 1e-3) + bv[p];
          CHECK(yv[g * group_size + i] == doctest::Approx(want).epsilon(1e-5));
        }
      }
    }
    const Tensor three = floats({3}, {1, 1, 1});
    CHECK(planning_refusal(one_node(17, "GroupNormalization", {1, 6, 2}, {{"s", three}, {"b", three}},
                                    {attr("num_groups", int64_t{3})})) ==
          "node 'n' (GroupNormalization): the operator was introduced in opset 18; the model imports opset 17");
    CHECK(planning_refusal(one_node(18, "GroupNormalization", {1, 6, 2}, {{"s", three}, {"b", three}},
                                    {attr("num_groups", int64_t{4})})) ==
          "node 'n' (GroupNormalization): attribute 'num_groups' is 4, expected a positive divisor of the 6 channels");
    CHECK(planning_refusal(one_node(21, "GroupNormalization", {1, 6, 2}, {{"s", three}, {"b", three}},
                                    {attr("num_groups", int64_t{3})})) ==
          "node 'n' (GroupNormalization): input 's' has shape [3], expected [6] (one value per channel in opset 21)");
  }

  TEST_CASE("Gelu, exact and tanh-approximated") {
    const Tensor x = floats({8}, {-3, -1, -0.5f, 0, 0.5f, 1, 2, 4});
    // 0.5 x (1 + erf(x / sqrt 2)) and 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in double.
    check_close(run_one(one_node(20, "Gelu", {8}), {x}),
                floats({8},
                       {-0.00404969409489031f, -0.15865525393145707f, -0.15426876936299344f, 0.0f, 0.34573123063700656f,
                        0.8413447460685429f, 1.9544997361036416f, 3.9998733150326675f}),
                1e-6f);
    check_close(run_one(one_node(20, "Gelu", {8}, {}, {attr("approximate", "tanh")}), {x}),
                floats({8},
                       {-0.0036373920817729943f, -0.15880800939172324f, -0.15428599017485606f, 0.0f,
                        0.34571400982514394f, 0.8411919906082768f, 1.954597694087775f, 3.9999297540518075f}),
                1e-6f);
    CHECK(planning_refusal(one_node(20, "Gelu", {8}, {}, {attr("approximate", "fast")})) ==
          "node 'n' (Gelu): attribute 'approximate' is 'fast', expected none or tanh");
    CHECK(planning_refusal(one_node(19, "Gelu", {8})) ==
          "node 'n' (Gelu): the operator was introduced in opset 20; the model imports opset 19");
  }

  TEST_CASE("Mish is x tanh(softplus(x))") {
    // x tanh(log(1 + e^x)), in double.
    check_close(
        run_one(one_node(18, "Mish", {5}), {floats({5}, {-3, -1, 0, 1, 2.5f})}),
        floats({5}, {-0.1456474612756246f, -0.30340146137410895f, 0.0f, 0.8650983882673103f, 2.471392304557881f}),
        1e-6f);
    CHECK(planning_refusal(one_node(17, "Mish", {5})) ==
          "node 'n' (Mish): the operator was introduced in opset 18; the model imports opset 17");
  }

  TEST_CASE("BitwiseAnd, BitwiseOr, BitwiseXor broadcast; BitwiseNot") {
    auto binary = [](const std::string& op, DataType type, std::vector<int64_t> a, std::vector<int64_t> b) {
      ModelBuilder m(18);
      m.input("a", type, std::move(a)).input("b", type, std::move(b)).output("y").node(op, {"a", "b"}, {"y"}, {}, "n");
      return m.model();
    };
    // 12 = 0b1100, 10 = 0b1010, -1 all ones, 5 = 0b0101 against the column (6 = 0b0110, -8 = ...11111000).
    const Tensor a = Tensor::from<int32_t>({2, 2}, {12, -1, 5, 0});
    const Tensor b = Tensor::from<int32_t>({2, 1}, {10, -8});
    auto ints = [](const Tensor& t) {
      const auto v = t.values<int32_t>();
      return std::vector<int32_t>(v.begin(), v.end());
    };
    CHECK(ints(run_one(binary("BitwiseAnd", DataType::int32, {2, 2}, {2, 1}), {a, b})) ==
          std::vector<int32_t>{8, 10, 0, 0});
    CHECK(ints(run_one(binary("BitwiseOr", DataType::int32, {2, 2}, {2, 1}), {a, b})) ==
          std::vector<int32_t>{14, -1, -3, -8});
    CHECK(ints(run_one(binary("BitwiseXor", DataType::int32, {2, 2}, {2, 1}), {a, b})) ==
          std::vector<int32_t>{6, -11, -3, -8});
    CHECK(ints(run_one(one_node(18, "BitwiseNot", {2, 2}, {}, {}, DataType::int32), {a})) ==
          std::vector<int32_t>{-13, 0, -6, -1});
    const Tensor u = Tensor::from<uint8_t>({3}, {0xF0, 0x0F, 0xAA});
    const Tensor not_u = run_one(one_node(18, "BitwiseNot", {3}, {}, {}, DataType::uint8), {u});
    CHECK(std::vector<uint8_t>(not_u.values<uint8_t>().begin(), not_u.values<uint8_t>().end()) ==
          std::vector<uint8_t>{0x0F, 0xF0, 0x55});
    const Tensor xor_u =
        run_one(binary("BitwiseXor", DataType::uint8, {3}, {}), {u, Tensor::from<uint8_t>({}, {0xFF})});
    CHECK(std::vector<uint8_t>(xor_u.values<uint8_t>().begin(), xor_u.values<uint8_t>().end()) ==
          std::vector<uint8_t>{0x0F, 0xF0, 0x55});
    CHECK(planning_refusal(binary("BitwiseAnd", DataType::float32, {2}, {2}))
              .find("node 'n' (BitwiseAnd): input 0 has element type float32") == 0);
    CHECK(planning_refusal(binary("BitwiseOr", DataType::int32, {2}, {3}))
              .find("node 'n' (BitwiseOr): inputs 'a', 'b'") == 0);
    ModelBuilder old(17);
    old.input("a", DataType::int32, {2}).output("y").node("BitwiseNot", {"a"}, {"y"}, {}, "n");
    CHECK(planning_refusal(old.model()) ==
          "node 'n' (BitwiseNot): the operator was introduced in opset 18; the model imports opset 17");
  }

  TEST_CASE("CenterCropPad crops and pads about the centre") {
    // [3, 5] (values 10 * row + column) to [4, 2]: axis 0 is padded with (4 - 3) / 2 = 0 rows before and 1 after;
    // axis 1 is cropped from column (5 - 2) / 2 = 1.
    const Tensor x = floats({3, 5}, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24});
    auto model = [](std::vector<int64_t> target, std::vector<onnx::AttributeProto> attributes = {}) {
      const auto count = static_cast<int64_t>(target.size());
      return one_node(18, "CenterCropPad", {3, 5},
                      {{"shape", Tensor::from<int64_t>({count}, std::span<const int64_t>(target))}},
                      std::move(attributes));
    };
    check_close(run_one(model({4, 2}), {x}), floats({4, 2}, {1, 2, 11, 12, 21, 22, 0, 0}));
    // Axis 1 only, padded to 8: (8 - 5) / 2 = 1 zero before, 2 after.
    check_close(run_one(model({8}, {attr("axes", std::vector<int64_t>{-1})}), {x}),
                floats({3, 8}, {0, 0, 1, 2, 3, 4, 0, 0, 0, 10, 11, 12, 13, 14, 0, 0, 0, 20, 21, 22, 23, 24, 0, 0}));
    // Axis 0 cropped to 1 row: from row (3 - 1) / 2 = 1.
    check_close(run_one(model({1}, {attr("axes", std::vector<int64_t>{0})}), {x}),
                floats({1, 5}, {10, 11, 12, 13, 14}));
    CHECK(planning_refusal(model({4})) ==
          "node 'n' (CenterCropPad): input 'shape' (the target shape) has 1 values for 2 axes");
    CHECK(planning_refusal(model({4, -1})) == "node 'n' (CenterCropPad): target length -1 for axis 1 is negative");
    CHECK(planning_refusal(model({4, 4}, {attr("axes", std::vector<int64_t>{1, -1})})) ==
          "node 'n' (CenterCropPad): attribute 'axes' names axis 1 twice");
    // Any element type: int64 moved as bytes.
    ModelBuilder m(18);
    m.input("x", DataType::int64, {4}).initializer("shape", Tensor::from<int64_t>({1}, {2})).output("y");
    m.node("CenterCropPad", {"x", "shape"}, {"y"}, {}, "n");
    const Tensor y = run_one(m.model(), {Tensor::from<int64_t>({4}, {7, 8, 9, 10})});
    CHECK(std::vector<int64_t>(y.values<int64_t>().begin(), y.values<int64_t>().end()) == std::vector<int64_t>{8, 9});
  }

  TEST_CASE("Col2Im adds the blocks back into the image") {
    auto model = [](std::vector<int64_t> x, std::vector<int64_t> image, std::vector<int64_t> block,
                    std::vector<onnx::AttributeProto> attributes = {}) {
      const auto n = static_cast<int64_t>(image.size());
      return one_node(18, "Col2Im", std::move(x),
                      {{"image", Tensor::from<int64_t>({n}, std::span<const int64_t>(image))},
                       {"block", Tensor::from<int64_t>({n}, std::span<const int64_t>(block))}},
                      std::move(attributes));
    };
    // A 1x3 image of 1x2 blocks at columns 0 and 1: rows (block column 0) 1, 2 and (block column 1) 3, 4;
    // image column 0 = 1, column 1 = 2 + 3, column 2 = 4.
    check_close(run_one(model({1, 2, 2}, {1, 3}, {1, 2}), {floats({1, 2, 2}, {1, 2, 3, 4})}),
                floats({1, 1, 1, 3}, {1, 5, 4}));
    // 2-D with strides, dilations and pads against the definition: image 5x6, block 2x3, dilations (2, 1),
    // strides (1, 2), pads (1, 0, 0, 1): blocks (5 + 1 - 3) / 1 + 1 = 4 down, (6 + 1 - 3) / 2 + 1 = 3 across.
    const int64_t channels = 2, bh = 2, bw = 3, lh = 4, lw = 3, ih = 5, iw = 6;
    const Tensor x = random_tensor({1, channels * bh * bw, lh * lw}, 21);
    const Tensor y =
        run_one(model({1, channels * bh * bw, lh * lw}, {ih, iw}, {bh, bw},
                      {attr("dilations", std::vector<int64_t>{2, 1}), attr("strides", std::vector<int64_t>{1, 2}),
                       attr("pads", std::vector<int64_t>{1, 0, 0, 1})}),
                {x});
    REQUIRE(y.shape() == std::vector<int64_t>{1, channels, ih, iw});
    std::vector<double> want(static_cast<std::size_t>(channels * ih * iw), 0.0);
    const auto xv = x.values<float>();
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t kh = 0; kh < bh; ++kh)
        for (int64_t kw = 0; kw < bw; ++kw)
          for (int64_t oh = 0; oh < lh; ++oh)
            for (int64_t ow = 0; ow < lw; ++ow) {
              const int64_t r = oh * 1 - 1 + kh * 2, col = ow * 2 - 0 + kw * 1;
              if (r < 0 || r >= ih || col < 0 || col >= iw) continue;
              want[static_cast<std::size_t>((c * ih + r) * iw + col)] +=
                  xv[static_cast<std::size_t>(((c * bh + kh) * bw + kw) * lh * lw + oh * lw + ow)];
            }
    const auto yv = y.values<float>();
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(yv[i] == doctest::Approx(want[i]).epsilon(1e-5));
    CHECK(planning_refusal(model({1, 2, 3}, {1, 3}, {1, 2})) ==
          "node 'n' (Col2Im): input 'x' has 3 columns; the blocks fit 2 times ([1, 2] per axis)");
    CHECK(planning_refusal(model({1, 3, 2}, {1, 3}, {1, 2})) ==
          "node 'n' (Col2Im): input 'x' has 3 rows per image, not a multiple of the block size 2");
    CHECK(planning_refusal(model({1, 2, 2}, {1, 3}, {1, 4})) ==
          "node 'n' (Col2Im): the block (extent 4) is larger than the padded image (3) along axis 1");
  }

  TEST_CASE("AffineGrid maps the normalized base grid through theta") {
    auto model = [](std::vector<int64_t> theta, std::vector<int64_t> size, int64_t align_corners) {
      const auto n = static_cast<int64_t>(size.size());
      return one_node(20, "AffineGrid", std::move(theta),
                      {{"size", Tensor::from<int64_t>({n}, std::span<const int64_t>(size))}},
                      {attr("align_corners", align_corners)});
    };
    // The identity on a 2x3 grid: x at pixel centres (2i + 1) / 3 - 1 = -2/3, 0, 2/3; y = -1/2, 1/2.
    const Tensor identity = floats({1, 2, 3}, {1, 0, 0, 0, 1, 0});
    const float t = 2.0f / 3.0f;
    check_close(run_one(model({1, 2, 3}, {1, 1, 2, 3}, 0), {identity}),
                floats({1, 2, 3, 2}, {-t, -0.5f, 0, -0.5f, t, -0.5f, -t, 0.5f, 0, 0.5f, t, 0.5f}), 1e-6f);
    // With align_corners the corners are -1 and 1: x = -1, 0, 1; y = -1, 1.
    check_close(run_one(model({1, 2, 3}, {1, 1, 2, 3}, 1), {identity}),
                floats({1, 2, 3, 2}, {-1, -1, 0, -1, 1, -1, -1, 1, 0, 1, 1, 1}), 1e-6f);
    // 3-D, two batches, general theta, against theta * (x, y, z, 1).
    const Tensor theta = random_tensor({2, 3, 4}, 31);
    const Tensor grid = run_one(model({2, 3, 4}, {2, 1, 3, 2, 4}, 0), {theta});
    REQUIRE(grid.shape() == std::vector<int64_t>{2, 3, 2, 4, 3});
    const auto tv = theta.values<float>(), gv = grid.values<float>();
    std::size_t at = 0;
    for (std::size_t n = 0; n < 2; ++n)
      for (int d = 0; d < 3; ++d)
        for (int h = 0; h < 2; ++h)
          for (int w = 0; w < 4; ++w) {
            const double p[4] = {(2.0 * w + 1) / 4 - 1, (2.0 * h + 1) / 2 - 1, (2.0 * d + 1) / 3 - 1, 1.0};
            for (std::size_t j = 0; j < 3; ++j) {
              double want = 0.0;
              for (std::size_t q = 0; q < 4; ++q) want += tv[n * 12 + j * 4 + q] * p[q];
              CHECK(gv[at++] == doctest::Approx(want).epsilon(1e-5).scale(1.0));
            }
          }
    CHECK(planning_refusal(model({1, 2, 4}, {1, 1, 2, 3}, 0)) ==
          "node 'n' (AffineGrid): input 'x' has shape [1, 2, 4], expected [N, 2, 3] or [N, 3, 4]");
    CHECK(planning_refusal(model({1, 2, 3}, {2, 1, 2, 3}, 0)) ==
          "node 'n' (AffineGrid): input 'size' (the size) is [2, 1, 2, 3], expected [1, C, H, W] for theta of shape "
          "[1, 2, 3]");
  }

  TEST_CASE("DeformConv samples each tap at its offset position") {
    // N 2, C 4, 5x6 input, M 4, 3x3 kernel, group 2, offset_group 2, stride (2, 1), dilation (1, 2), pads (1, 2, 0, 1):
    // output (5 + 1 - 3) / 2 + 1 = 2 rows, (6 + 3 - 5) / 1 + 1 = 5 columns.
    const int64_t n = 2, c = 4, h = 5, w = 6, m = 4, kh = 3, kw = 3, group = 2, og = 2, oh = 2, ow = 5;
    const Tensor x = random_tensor({n, c, h, w}, 41);
    const Tensor wt = random_tensor({m, c / group, kh, kw}, 42);
    const Tensor offset = random_tensor({n, og * 2 * kh * kw, oh, ow}, 43, -2.5f, 2.5f);
    const Tensor bias = random_tensor({m}, 44);
    const Tensor mask = random_tensor({n, og * kh * kw, oh, ow}, 45, 0.0f, 1.0f);
    auto model = [&](bool with_mask, int64_t opset = 19) {
      ModelBuilder b(opset);
      b.input("x", DataType::float32, {n, c, h, w})
          .input("offset", DataType::float32, {n, og * 2 * kh * kw, oh, ow})
          .initializer("w", wt)
          .initializer("b", bias)
          .output("y");
      std::vector<std::string> inputs{"x", "w", "offset", "b"};
      if (with_mask) {
        b.initializer("mask", mask);
        inputs.push_back("mask");
      }
      b.node("DeformConv", inputs, {"y"},
             {attr("group", group), attr("offset_group", og), attr("strides", std::vector<int64_t>{2, 1}),
              attr("dilations", std::vector<int64_t>{1, 2}), attr("pads", std::vector<int64_t>{1, 2, 0, 1})},
             "n");
      return b.model();
    };
    // The definition: bilinear samples of x at (oy * 2 - 1 + i + dy, ox - 2 + 2 j + dx), zero outside.
    const auto xv = x.values<float>(), wv = wt.values<float>(), ov = offset.values<float>(), bv = bias.values<float>(),
               mv = mask.values<float>();
    auto pixel = [&](int64_t b, int64_t ch, int64_t r, int64_t col) -> double {
      return r < 0 || r >= h || col < 0 || col >= w ? 0.0
                                                    : xv[static_cast<std::size_t>(((b * c + ch) * h + r) * w + col)];
    };
    auto reference = [&](bool with_mask) {
      std::vector<double> y(static_cast<std::size_t>(n * m * oh * ow));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t o = 0; o < m; ++o)
          for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
              double sum = bv[static_cast<std::size_t>(o)];
              const int64_t g = o / (m / group);
              for (int64_t cl = 0; cl < c / group; ++cl)
                for (int64_t i = 0; i < kh; ++i)
                  for (int64_t j = 0; j < kw; ++j) {
                    const int64_t ch = g * (c / group) + cl, offset_group = ch / (c / og), tap = i * kw + j;
                    const auto at = [&](int64_t channel) {
                      return static_cast<std::size_t>(((b * (og * 2 * kh * kw) + channel) * oh + oy) * ow + ox);
                    };
                    const double y0 = oy * 2 - 1 + i + ov[at(offset_group * 2 * kh * kw + 2 * tap)];
                    const double x0 = ox - 2 + 2 * j + ov[at(offset_group * 2 * kh * kw + 2 * tap + 1)];
                    const double fy = std::floor(y0), fx = std::floor(x0), ly = y0 - fy, lx = x0 - fx;
                    const auto r = static_cast<int64_t>(fy), col = static_cast<int64_t>(fx);
                    double v = (1 - ly) * ((1 - lx) * pixel(b, ch, r, col) + lx * pixel(b, ch, r, col + 1)) +
                        ly * ((1 - lx) * pixel(b, ch, r + 1, col) + lx * pixel(b, ch, r + 1, col + 1));
                    if (with_mask) {
                      v *= mv[static_cast<std::size_t>(
                          ((b * og * kh * kw + offset_group * kh * kw + tap) * oh + oy) * ow + ox)];
                    }
                    sum += wv[static_cast<std::size_t>(((o * (c / group) + cl) * kh + i) * kw + j)] * v;
                  }
              y[static_cast<std::size_t>(((b * m + o) * oh + oy) * ow + ox)] = sum;
            }
      return y;
    };
    for (const bool with_mask : {false, true}) {
      CAPTURE(with_mask);
      const Tensor y = run_one(model(with_mask), {x, offset});
      REQUIRE(y.shape() == std::vector<int64_t>{n, m, oh, ow});
      const auto want = reference(with_mask);
      const auto yv = y.values<float>();
      for (std::size_t i = 0; i < want.size(); ++i) CHECK(yv[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(1.0));
    }
    // Zero offsets make it a Conv.
    const Tensor zero =
        Tensor::from<float>({n, og * 2 * kh * kw, oh, ow},
                            std::vector<float>(static_cast<std::size_t>(n * og * 2 * kh * kw * oh * ow), 0.0f));
    ModelBuilder conv(13);
    conv.input("x", DataType::float32, {n, c, h, w}).initializer("w", wt).initializer("b", bias).output("y");
    conv.node("Conv", {"x", "w", "b"}, {"y"},
              {attr("group", group), attr("strides", std::vector<int64_t>{2, 1}),
               attr("dilations", std::vector<int64_t>{1, 2}), attr("pads", std::vector<int64_t>{1, 2, 0, 1})});
    check_close(run_one(model(false), {x, zero}), run_one(conv.model(), {x}), 1e-5f);
    CHECK(planning_refusal(model(false, 18)) ==
          "node 'n' (DeformConv): the operator was introduced in opset 19; the model imports opset 18");
    ModelBuilder bad(19);
    bad.input("x", DataType::float32, {n, c, h, w})
        .input("offset", DataType::float32, {n, 2 * kh * kw, oh, ow})
        .initializer("w", wt)
        .output("y")
        .node("DeformConv", {"x", "w", "offset"}, {"y"},
              {attr("group", group), attr("strides", std::vector<int64_t>{2, 1}),
               attr("dilations", std::vector<int64_t>{1, 2}), attr("pads", std::vector<int64_t>{1, 2, 0, 1}),
               attr("offset_group", int64_t{2})},
              "n");
    CHECK(planning_refusal(bad.model()) ==
          "node 'n' (DeformConv): input 'offset' (the offsets) has shape [2, 18, 2, 5], expected [2, 36, 2, 5]");
  }
}
