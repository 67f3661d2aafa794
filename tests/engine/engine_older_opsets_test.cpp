// Issue 15's second round: models of opsets 1 to 8 (legacy_opsets.hpp), float64 and unsigned
// tensors, and the operators added for the ONNX node tests, where those tests leave behaviour
// uncovered: the refusals of older operator forms, requantization's rounding and saturation,
// padding in integer convolutions, and the messages for bad inputs.

#include "engine_test_model.hpp"

#include <cmath>
#include <limits>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

std::string refusal(const onnx::ModelProto& model) {
  return error_of([&] { Graph g(model); });
}

std::string run_error(const onnx::ModelProto& model, std::vector<Tensor> inputs) {
  return error_of([&] {
    Session session(model, SessionOptions{.threads = test_threads(2)});
    (void)session.run(inputs);
  });
}

ModelBuilder binary(int64_t opset, const char* op, std::vector<onnx::AttributeProto> attributes) {
  ModelBuilder b(opset);
  b.input("a", DataType::float32, {2, 3}).input("b", DataType::float32, {3}).output("y");
  b.node(op, {"a", "b"}, {"y"}, std::move(attributes), "n");
  return b;
}

}  // namespace

TEST_SUITE("engine.older_opsets") {
  TEST_CASE("an operator form that changed before opset 9 is refused, naming operator, opset and difference") {
    CHECK(refusal(binary(6, "Add", {attr("broadcast", int64_t{1}), attr("axis", int64_t{1})}).model()) ==
          "node 'n' (Add): Add at opset 6 is not supported by the host engine: before opset 7 its broadcast attribute "
          "with an axis aligns the second input at that axis (numpy broadcasting from opset 7 on)");
    // Without an axis the legacy broadcast aligns from the end, as numpy does: it runs.
    const auto sum = binary(6, "Add", {attr("broadcast", int64_t{1})});
    const Tensor a = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor b = Tensor::from<float>({3}, {10, 20, 30});
    const Tensor y = run_one(sum.model(), {a, b});
    CHECK(std::vector<float>(y.values<float>().begin(), y.values<float>().end()) ==
          std::vector<float>{11, 22, 33, 14, 25, 36});

    ModelBuilder reshape(4);
    reshape.input("x", DataType::float32, {2, 3})
        .output("y")
        .node("Reshape", {"x"}, {"y"}, {attr("shape", std::vector<int64_t>{6})}, "r");
    CHECK(refusal(reshape.model())
              .find("Reshape at opset 4 is not supported by the host engine: before opset 5 its "
                    "shape is an attribute") != std::string::npos);

    ModelBuilder bn(8);
    bn.input("x", DataType::float32, {1, 2, 2})
        .initializer("s", Tensor(DataType::float32, {2, 2}))
        .initializer("b", Tensor(DataType::float32, {2, 2}))
        .initializer("m", Tensor(DataType::float32, {2, 2}))
        .initializer("v", Tensor(DataType::float32, {2, 2}))
        .output("y")
        .node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {attr("spatial", int64_t{0})}, "bn");
    CHECK(refusal(bn.model())
              .find("BatchNormalization at opset 8 is not supported by the host engine: before opset "
                    "9 spatial=0 normalizes per activation") != std::string::npos);
    ModelBuilder concat(3);
    concat.input("x", DataType::float32, {2}).output("y").node("Concat", {"x", "x"}, {"y"}, {}, "c");
    CHECK(refusal(concat.model()).find("before opset 4 its axis may be omitted") != std::string::npos);
    concat.model().graph.node[0].attribute.push_back(attr("axis", int64_t{0}));
    CHECK(refusal(concat.model()).empty());
  }

  TEST_CASE("Upsample of opsets 7 and 8 takes its scales from the attribute") {
    ModelBuilder b(7);
    b.input("x", DataType::float32, {1, 1, 2, 2})
        .output("y")
        .node("Upsample", {"x"}, {"y"}, {attr_floats("scales", {1, 1, 2, 1})}, "up");
    const Tensor y = run_one(b.model(), {Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4})});
    REQUIRE(y.shape() == std::vector<int64_t>{1, 1, 4, 2});
    CHECK(std::vector<float>(y.values<float>().begin(), y.values<float>().end()) ==
          std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4});
    ModelBuilder missing(8);
    missing.input("x", DataType::float32, {1, 1, 2, 2}).output("y").node("Upsample", {"x"}, {"y"}, {}, "up");
    CHECK(run_error(missing.model(), {Tensor(DataType::float32, {1, 1, 2, 2})})
              .find("attribute 'scales' is required before opset 9") != std::string::npos);
  }

  TEST_CASE("float64 casts saturate and map NaN to 0, as float32 casts do") {
    ModelBuilder b;
    b.input("x", DataType::float64, {4}).output("y").node("Cast", {"x"}, {"y"}, {attr("to", int64_t{6})});
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Tensor y = run_one(b.model(), {Tensor::from<double>({4}, {1e300, -1e300, nan, -2.75})});
    CHECK(std::vector<int32_t>(y.values<int32_t>().begin(), y.values<int32_t>().end()) ==
          std::vector<int32_t>{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0, -2});
  }

  TEST_CASE("an initializer of uint32 or uint64 values in uint64_data decodes") {
    onnx::TensorProto p;
    p.name = "u";
    p.data_type = DataType::uint32;
    p.dims = {2};
    p.uint64_data = {7, 4000000000};
    const Tensor t = tensor_from_proto(p);
    CHECK(t.data<uint32_t>()[1] == 4000000000u);
    p.data_type = DataType::uint64;
    p.uint64_data = {7};
    CHECK(error_of([&] { (void)tensor_from_proto(p); }).find("uint64_data holds 1") != std::string::npos);
  }
}

TEST_SUITE("engine.integer_ops") {
  TEST_CASE("QLinearMatMul rounds half to even and saturates") {
    // acc = (a - 1) * (b - 0): 5 and 7 over y_scale 2 give 2.5 and 3.5, which round to 2 and 4.
    ModelBuilder b(10);
    b.input("a", DataType::uint8, {2, 1})
        .initializer("as", Tensor::scalar<float>(1.0f))
        .initializer("az", Tensor::scalar<uint8_t>(1))
        .initializer("b", Tensor::from<uint8_t>({1, 2}, {1, 200}))
        .initializer("bs", Tensor::scalar<float>(1.0f))
        .initializer("bz", Tensor::scalar<uint8_t>(0))
        .initializer("ys", Tensor::scalar<float>(2.0f))
        .initializer("yz", Tensor::scalar<uint8_t>(0))
        .output("y")
        .node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"});
    const Tensor y = run_one(b.model(), {Tensor::from<uint8_t>({2, 1}, {6, 8})});
    // Row 0: 5 * 1 / 2 = 2.5 -> 2, 5 * 200 / 2 = 500 -> 255; row 1: 3.5 -> 4, 700 -> 255.
    CHECK(std::vector<uint8_t>(y.values<uint8_t>().begin(), y.values<uint8_t>().end()) ==
          std::vector<uint8_t>{2, 255, 4, 255});
  }

  TEST_CASE("ConvInteger's padding contributes nothing, whatever the zero point") {
    ModelBuilder b(10);
    b.input("x", DataType::uint8, {1, 1, 1, 2})
        .initializer("w", Tensor::from<uint8_t>({1, 1, 1, 3}, {1, 1, 1}))
        .initializer("xz", Tensor::scalar<uint8_t>(10))
        .output("y")
        .node("ConvInteger", {"x", "w", "xz"}, {"y"}, {attr("pads", std::vector<int64_t>{0, 1, 0, 1})});
    const Tensor y = run_one(b.model(), {Tensor::from<uint8_t>({1, 1, 1, 2}, {13, 20})});
    // Windows: [pad, 13, 20] and [13, 20, pad]: (13 - 10) + (20 - 10) each.
    CHECK(std::vector<int32_t>(y.values<int32_t>().begin(), y.values<int32_t>().end()) == std::vector<int32_t>{13, 13});
  }

  TEST_CASE("a per-column zero point of the wrong length is named") {
    ModelBuilder b(10);
    b.input("a", DataType::int8, {2, 3})
        .initializer("b", Tensor(DataType::int8, {3, 4}))
        .initializer("az", Tensor::scalar<int8_t>(0))
        .initializer("bz", Tensor(DataType::int8, {3}))
        .output("y")
        .node("MatMulInteger", {"a", "b", "az", "bz"}, {"y"}, {}, "mmi");
    CHECK(refusal(b.model()).empty());
    CHECK(run_error(b.model(), {Tensor(DataType::int8, {2, 3})}) ==
          "node 'mmi' (MatMulInteger): zero point 'bz' has shape [3], expected one value or [4]");
  }
}

TEST_SUITE("engine.more_added_ops") {
  TEST_CASE("ReverseSequence refuses a length beyond the time steps when it runs") {
    ModelBuilder b(10);
    b.input("x", DataType::float32, {3, 2}).input("len", DataType::int64, {2}).output("y");
    b.node("ReverseSequence", {"x", "len"}, {"y"}, {attr("batch_axis", int64_t{1}), attr("time_axis", int64_t{0})},
           "rs");
    const Tensor x = Tensor::from<float>({3, 2}, {1, 2, 3, 4, 5, 6});
    const Tensor y = run_one(b.model(), {x, Tensor::from<int64_t>({2}, {3, 2})});
    CHECK(std::vector<float>(y.values<float>().begin(), y.values<float>().end()) ==
          std::vector<float>{5, 4, 3, 2, 1, 6});
    CHECK(run_error(b.model(), {x, Tensor::from<int64_t>({2}, {4, 1})}) ==
          "node 'rs' (ReverseSequence): sequence_lens[0] is 4, outside 0 to 3 (the time steps)");
  }

  TEST_CASE("MaxUnpool refuses an index outside its output") {
    ModelBuilder b(11);
    b.input("x", DataType::float32, {1, 1, 1, 1}).input("i", DataType::int64, {1, 1, 1, 1}).output("y");
    b.node("MaxUnpool", {"x", "i"}, {"y"},
           {attr("kernel_shape", std::vector<int64_t>{2, 2}), attr("strides", std::vector<int64_t>{2, 2})}, "unpool");
    const Tensor x = Tensor::from<float>({1, 1, 1, 1}, {7});
    const Tensor y = run_one(b.model(), {x, Tensor::from<int64_t>({1, 1, 1, 1}, {3})});
    CHECK(std::vector<float>(y.values<float>().begin(), y.values<float>().end()) == std::vector<float>{0, 0, 0, 7});
    CHECK(run_error(b.model(), {x, Tensor::from<int64_t>({1, 1, 1, 1}, {4})}) ==
          "node 'unpool' (MaxUnpool): index 4 at position 0 is outside the 4 elements of shape [1, 1, 2, 2]");
  }

  TEST_CASE("Det pivots, and a singular matrix has determinant 0") {
    ModelBuilder b(11);
    b.input("x", DataType::float32, {2, 2, 2}).output("y").node("Det", {"x"}, {"y"});
    const Tensor y = run_one(b.model(), {Tensor::from<float>({2, 2, 2}, {0, 1, 1, 0, 1, 2, 2, 4})});
    CHECK(y.data<float>()[0] == -1.0f);
    CHECK(y.data<float>()[1] == 0.0f);
  }

  TEST_CASE("a window's size must be a constant; a one-point symmetric window is 1") {
    ModelBuilder b(17);
    b.input("n", DataType::int64, {}).output("w").node("HannWindow", {"n"}, {"w"}, {}, "hann");
    CHECK(run_error(b.model(), {Tensor::scalar<int64_t>(4)}).find("must be a constant") != std::string::npos);
    ModelBuilder one(17);
    one.initializer("n", Tensor::scalar<int64_t>(1))
        .output("w")
        .node("HammingWindow", {"n"}, {"w"}, {attr("periodic", int64_t{0})});
    const Tensor w = run_one(one.model(), {});
    CHECK(w.data<float>()[0] == doctest::Approx(1.0f));
  }

  TEST_CASE("DFT transforms along an inner axis, forward and back") {
    ModelBuilder b(17);
    b.input("x", DataType::float32, {1, 2, 3, 1}).output("y").node("DFT", {"x"}, {"y"}, {attr("axis", int64_t{2})});
    const Tensor y = run_one(b.model(), {Tensor::from<float>({1, 2, 3, 1}, {1, 0, 0, 1, 1, 1})});
    REQUIRE(y.shape() == std::vector<int64_t>{1, 2, 3, 2});
    // An impulse has a flat spectrum; a constant has all its energy at frequency 0.
    const std::vector<float> want{1, 0, 1, 0, 1, 0, 3, 0, 0, 0, 0, 0};
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(y.data<float>()[i] == doctest::Approx(want[i]).epsilon(1e-6));
    }
    ModelBuilder bad(17);
    bad.input("x", DataType::float32, {1, 3, 2})
        .output("y")
        .node("DFT", {"x"}, {"y"}, {attr("onesided", int64_t{1})}, "dft");
    CHECK(refusal(bad.model()).empty());
    CHECK(run_error(bad.model(), {Tensor(DataType::float32, {1, 3, 2})}) ==
          "node 'dft' (DFT): onesided=1 needs a real input ([..., 1])");
  }
}
