// The shape, data-movement, reduction and resize operators on hand-made one-node graphs:
// the edge cases the ONNX node tests cover thinly, and a run on every platform (the
// conformance suite is heavy and skipped under qemu).

#include <doctest/doctest.h>

#include "../engine/engine_test_model.hpp"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace onnx = rknnxx::host::onnx;
using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// One node: input "x" fed at run time, the other inputs constants; one output "y".
struct OneNode {
  std::string op;
  std::vector<Tensor> constants;  // inputs 1.. (a default-constructed tensor marks an omitted input)
  std::vector<onnx::AttributeProto> attributes;
  int64_t opset = 17;

  Tensor operator()(const Tensor& x) const {
    ModelBuilder b(opset);
    b.input("x", x.dtype(), x.shape()).output("y");
    std::vector<std::string> inputs{"x"};
    for (std::size_t i = 0; i < constants.size(); ++i) {
      inputs.push_back(constants[i].dtype() == DataType::undefined ? "" : "c" + std::to_string(i));
      if (!inputs.back().empty()) {
        b.initializer(inputs.back(), constants[i]);
      }
    }
    b.node(op, inputs, {"y"}, attributes);
    return run_one(b.model(), {x}, {.threads = 2});
  }
};

OneNode make_op(std::string op, std::vector<Tensor> constants = {}, std::vector<onnx::AttributeProto> attributes = {},
                int64_t opset = 17) {
  return OneNode{std::move(op), std::move(constants), std::move(attributes), opset};
}

template <class T> std::vector<T> values(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

Tensor ints(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({n}, std::span<const int64_t>(v));
}

Tensor floats(std::vector<int64_t> shape, std::vector<float> v) {
  return Tensor::from<float>(std::move(shape), std::span<const float>(v));
}

Tensor iota(std::vector<int64_t> shape) {
  Tensor t(DataType::float32, std::move(shape));
  auto v = t.values<float>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(i);
  }
  return t;
}

}  // namespace

TEST_SUITE("onnx_ops") {

  TEST_CASE("Reshape: 0 copies a dimension, -1 is inferred, allowzero keeps a 0") {
    const auto x = iota({2, 3, 4});
    CHECK(make_op("Reshape", {ints({0, -1})})(x).shape() == std::vector<int64_t>{2, 12});
    const auto empty = Tensor(DataType::float32, {0, 3});
    CHECK(make_op("Reshape", {ints({3, 0})}, {attr("allowzero", int64_t{1})})(empty).shape() ==
          std::vector<int64_t>{3, 0});
    CHECK_THROWS_AS(make_op("Reshape", {ints({5, -1})})(x), EngineError);
    CHECK_THROWS_AS(make_op("Reshape", {ints({-1, -1})})(x), EngineError);
  }

  TEST_CASE("Squeeze and Unsqueeze take axes as attribute before opset 13 and as input from 13") {
    const auto x = iota({1, 3, 1});
    CHECK(make_op("Squeeze", {}, {attr("axes", std::vector<int64_t>{0})}, 11)(x).shape() == std::vector<int64_t>{3, 1});
    CHECK(make_op("Squeeze", {ints({-1})})(x).shape() == std::vector<int64_t>{1, 3});
    CHECK(make_op("Squeeze", {})(x).shape() == std::vector<int64_t>{3});
    CHECK(make_op("Unsqueeze", {ints({0, 4})})(x).shape() == std::vector<int64_t>{1, 1, 3, 1, 1});
    CHECK(make_op("Unsqueeze", {}, {attr("axes", std::vector<int64_t>{-1})}, 11)(x).shape() ==
          std::vector<int64_t>{1, 3, 1, 1});
    CHECK_THROWS_AS(make_op("Squeeze", {ints({1})})(x), EngineError);  // size 3, not 1
  }

  TEST_CASE("Slice: negative steps, clamped and sentinel bounds") {
    const auto x = iota({2, 5});
    const int64_t max = std::numeric_limits<int64_t>::max();
    const int64_t min = std::numeric_limits<int64_t>::min();
    // Reverse axis 1 entirely with the usual exporter idiom.
    auto y = make_op("Slice", {ints({-1}), ints({min}), ints({1}), ints({-1})})(x);
    CHECK(y.shape() == std::vector<int64_t>{2, 5});
    CHECK(values<float>(y) == std::vector<float>{4, 3, 2, 1, 0, 9, 8, 7, 6, 5});
    y = make_op("Slice", {ints({1}), ints({max}), ints({1}), ints({2})})(x);
    CHECK(values<float>(y) == std::vector<float>{1, 3, 6, 8});
    y = make_op("Slice", {ints({10}), ints({20})})(x);  // starts beyond the end: empty
    CHECK(y.shape() == std::vector<int64_t>{0, 5});
    y = make_op("Slice", {}, {attr("starts", std::vector<int64_t>{0, 1}), attr("ends", std::vector<int64_t>{1, 3})},
                9)(x);
    CHECK(values<float>(y) == std::vector<float>{1, 2});
  }

  TEST_CASE("Transpose and Concat and Split") {
    const auto x = iota({2, 3});
    CHECK(values<float>(make_op("Transpose", {})(x)) == std::vector<float>{0, 3, 1, 4, 2, 5});
    auto y = make_op("Concat", {floats({2, 1}, {9, 9})}, {attr("axis", int64_t{-1})})(x);
    CHECK(values<float>(y) == std::vector<float>{0, 1, 2, 9, 3, 4, 5, 9});
  }

  TEST_CASE("Gather with negative indices, and out of range is an error") {
    const auto x = iota({3, 2});
    CHECK(values<float>(make_op("Gather", {ints({-1, 0})})(x)) == std::vector<float>{4, 5, 0, 1});
    CHECK(values<float>(make_op("Gather", {Tensor::scalar<int64_t>(1)}, {attr("axis", int64_t{1})})(x)) ==
          std::vector<float>{1, 3, 5});
    CHECK_THROWS_AS(make_op("Gather", {ints({3})})(x), EngineError);
  }

  TEST_CASE("Pad: constant, reflect, edge and negative pads") {
    const auto x = iota({1, 3});
    CHECK(values<float>(make_op("Pad", {ints({0, 2, 0, 2}), Tensor::scalar<float>(-1.0f)})(x)) ==
          std::vector<float>{-1, -1, 0, 1, 2, -1, -1});
    CHECK(values<float>(make_op("Pad", {ints({0, 2, 0, 2})}, {attr("mode", "reflect")})(x)) ==
          std::vector<float>{2, 1, 0, 1, 2, 1, 0});
    CHECK(values<float>(make_op("Pad", {ints({0, 1, 0, 1})}, {attr("mode", "edge")})(x)) ==
          std::vector<float>{0, 0, 1, 2, 2});
    CHECK(values<float>(make_op("Pad", {ints({0, -1, 0, 1})})(x)) == std::vector<float>{1, 2, 0});
  }

  TEST_CASE("Expand, Tile, Where-free broadcasting of shape ops") {
    const auto x = floats({2, 1}, {1, 2});
    CHECK(values<float>(make_op("Expand", {ints({2, 3})})(x)) == std::vector<float>{1, 1, 1, 2, 2, 2});
    CHECK(values<float>(make_op("Tile", {ints({2, 2})})(x)) == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2});
  }

  TEST_CASE("Cast saturates out-of-range floats instead of undefined behaviour") {
    const auto x = floats({4}, {1e20f, -1e20f, 2.7f, std::numeric_limits<float>::quiet_NaN()});
    auto y = make_op("Cast", {}, {attr("to", static_cast<int64_t>(DataType::int32))})(x);
    CHECK(values<int32_t>(y) ==
          std::vector<int32_t>{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 2, 0});
    y = make_op("Cast", {}, {attr("to", static_cast<int64_t>(DataType::float16))})(floats({1}, {0.5f}));
    CHECK(y.dtype() == DataType::float16);
  }

  TEST_CASE("Reductions: axes, keepdims, noop_with_empty_axes; ArgMax") {
    const auto x = iota({2, 3});
    auto y = make_op("ReduceMean", {}, {attr("axes", std::vector<int64_t>{1}), attr("keepdims", int64_t{0})})(x);
    CHECK(y.shape() == std::vector<int64_t>{2});
    CHECK(values<float>(y) == std::vector<float>{1, 4});
    y = make_op("ReduceSum", {ints({0})})(x);
    CHECK(y.shape() == std::vector<int64_t>{1, 3});
    CHECK(values<float>(y) == std::vector<float>{3, 5, 7});
    y = make_op("ReduceSum", {}, {attr("noop_with_empty_axes", int64_t{1})})(x);
    CHECK(values<float>(y) == values<float>(x));
    y = make_op("ReduceMax", {}, {attr("keepdims", int64_t{0})})(x);
    CHECK(y.shape().empty());
    CHECK(values<float>(y) == std::vector<float>{5});
    y = make_op("ArgMax", {}, {attr("axis", int64_t{1})})(floats({2, 3}, {1, 3, 3, 2, 0, 2}));
    CHECK(values<int64_t>(y) == std::vector<int64_t>{1, 0});
  }

  TEST_CASE("Resize: nearest and linear, scales and sizes") {
    const auto x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
    const Tensor omitted;
    auto y = make_op("Resize", {omitted, floats({4}, {1, 1, 2, 2})}, {attr("mode", "nearest")})(x);
    CHECK(y.shape() == std::vector<int64_t>{1, 1, 4, 4});
    CHECK(values<float>(y) == std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
    y = make_op("Resize", {omitted, omitted, ints({1, 1, 1, 3})},
                {attr("mode", "linear"), attr("coordinate_transformation_mode", "align_corners")})(
        floats({1, 1, 1, 2}, {0, 10}));
    CHECK(values<float>(y) == std::vector<float>{0, 5, 10});
    CHECK_THROWS_AS(make_op("Resize", {omitted, floats({4}, {1, 1, 2, 2}), ints({1, 1, 4, 4})})(x), EngineError);
  }

  TEST_CASE("DepthToSpace and SpaceToDepth are inverse") {
    const auto x = iota({1, 8, 2, 3});
    const auto space = make_op("DepthToSpace", {}, {attr("blocksize", int64_t{2}), attr("mode", "CRD")})(x);
    CHECK(space.shape() == std::vector<int64_t>{1, 2, 4, 6});
    const auto dcr = make_op("DepthToSpace", {}, {attr("blocksize", int64_t{2})})(x);
    const auto back = make_op("SpaceToDepth", {}, {attr("blocksize", int64_t{2})})(dcr);
    CHECK(values<float>(back) == values<float>(x));
  }

  TEST_CASE("a shape argument computed at run time is refused with a message naming it") {
    ModelBuilder b(17);
    b.input("x", DataType::float32, {2, 2}).input("shape", DataType::int64, {1}).output("y");
    b.node("Reshape", {"x", "shape"}, {"y"});
    const auto message = error_of([&] { run_one(b.model(), {iota({2, 2}), ints({4})}); });
    CHECK(message.find("'shape'") != std::string::npos);
    CHECK(message.find("must be a constant") != std::string::npos);
  }

}  // TEST_SUITE
