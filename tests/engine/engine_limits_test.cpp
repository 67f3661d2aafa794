// Sizes the engine refuses instead of wrapping: shapes whose element count overflows 64 bits, and
// tensors beyond max_tensor_bytes (the runtime's 32-bit size fields). Each graph of issue 12 that
// crashed the converter or the runtime is refused while planning, naming the node and the value.

#include "engine_test_model.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

constexpr int64_t two_32 = int64_t{1} << 32;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Tensor int64s(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return Tensor::from<int64_t>({n}, std::span<const int64_t>(values));
}

// The message of planning `model` for one float input x of shape [1, 1].
std::string planning_error(const onnx::ModelProto& model) {
  return error_of([&] {
    Session session(model, SessionOptions{.threads = 1});
    const std::vector<TensorInfo> inputs{{DataType::float32, {1, 1}}};
    session.prepare(inputs);
  });
}

// x [1, 1] + Slice(<big> [2^32, 2^32], [0, 0], [1, 1]): the attack's shape (issue 12).
ModelBuilder sliced_into_sum() {
  ModelBuilder b;
  b.input("x", DataType::float32, {1, 1})
      .initializer("starts", int64s({0, 0}))
      .initializer("ends", int64s({1, 1}))
      .node("Slice", {"big", "starts", "ends"}, {"corner"}, {}, "slice")
      .node("Add", {"x", "corner"}, {"y"}, {}, "add")
      .output("y");
  return b;
}

}  // namespace

TEST_SUITE("engine limits") {
  TEST_CASE("element_count and byte_count refuse instead of wrapping") {
    CHECK(element_count(std::vector<int64_t>{2, 3, 4}) == 24);
    CHECK(element_count(std::vector<int64_t>{}) == 1);
    CHECK(element_count(std::vector<int64_t>{0, 5}) == 0);
    CHECK(contains(error_of([] { (void)element_count(std::vector<int64_t>{two_32, two_32}); }), "overflows 64 bits"));
    CHECK(contains(error_of([] { (void)element_count(std::vector<int64_t>{0, two_32, two_32}); }), "overflows"));
    CHECK(contains(error_of([] { (void)element_count(std::vector<int64_t>{2, -3}); }), "negative dimension"));
    CHECK(byte_count(DataType::float32, std::vector<int64_t>{2, 3}) == 24);
    // 2^31 x 2^31 int8 counts fine in 64 bits but is far beyond what a tensor may take.
    const std::vector<int64_t> square{int64_t{1} << 31, int64_t{1} << 31};
    const std::string too_big = error_of([&] { (void)byte_count(DataType::int8, square); });
    CHECK(contains(too_big, "int8 [2147483648, 2147483648]"));
    CHECK(contains(too_big, "4294967295 bytes"));
    CHECK(byte_count(DataType::uint8, std::vector<int64_t>{int64_t{max_tensor_bytes}}) == max_tensor_bytes);
    CHECK(
        !error_of([] { (void)byte_count(DataType::int16, std::vector<int64_t>{int64_t{max_tensor_bytes}}); }).empty());
    CHECK(contains(error_of([] { (void)checked_mul(two_32, two_32, "the product"); }), "the product overflows"));
    CHECK(contains(error_of([] { (void)checked_add(INT64_MAX, 1, "the test sum"); }), "the test sum overflows"));
  }

  TEST_CASE("a tensor initializer with impossible dims is refused before anything is allocated") {
    onnx::TensorProto proto;
    proto.name = "w";
    proto.data_type = DataType::float32;
    proto.dims = {two_32, two_32};
    CHECK(contains(error_of([&] { (void)tensor_from_proto(proto); }), "overflows"));
    proto.dims = {1 << 20, 1 << 20};  // counts in 64 bits; 4 TiB of floats
    CHECK(contains(error_of([&] { (void)tensor_from_proto(proto); }), "bytes a tensor may take"));
    proto.dims = {1 << 28};  // 1 GiB of floats promised, none given: no allocation, one error
    CHECK(contains(error_of([&] { (void)tensor_from_proto(proto); }), "float_data holds 0"));
  }

  TEST_CASE("ConstantOfShape to [2^32, 2^32] then Slice is refused naming the node and the value") {
    ModelBuilder b = sliced_into_sum();
    b.initializer("shape", int64s({two_32, two_32})).node("ConstantOfShape", {"shape"}, {"big"}, {}, "fill");
    const std::string e = planning_error(b.model());
    CHECK(contains(e, "node 'fill' (ConstantOfShape)"));
    CHECK(contains(e, "'big'"));
    CHECK(contains(e, "overflows 64 bits"));
  }

  TEST_CASE("Expand to [2^32, 2^32] then Slice is refused naming the node and the value") {
    ModelBuilder b = sliced_into_sum();
    b.initializer("shape", int64s({two_32, two_32})).node("Expand", {"x", "shape"}, {"big"}, {}, "expand");
    const std::string e = planning_error(b.model());
    CHECK(contains(e, "node 'expand' (Expand)"));
    CHECK(contains(e, "'big'"));
    CHECK(contains(e, "overflows 64 bits"));
  }

  TEST_CASE("Tile to [2^32, 2^32] then Slice is refused naming the node and the value") {
    ModelBuilder b = sliced_into_sum();
    b.initializer("repeats", int64s({two_32, two_32})).node("Tile", {"x", "repeats"}, {"big"}, {}, "tile");
    const std::string e = planning_error(b.model());
    CHECK(contains(e, "node 'tile' (Tile)"));
    CHECK(contains(e, "'big'"));
    CHECK(contains(e, "overflows 64 bits"));
  }

  TEST_CASE("a shape that counts in 64 bits but exceeds max_tensor_bytes is refused, not allocated") {
    ModelBuilder b = sliced_into_sum();
    b.initializer("repeats", int64s({1 << 20, 1 << 20})).node("Tile", {"x", "repeats"}, {"big"}, {}, "tile");
    const std::string e = planning_error(b.model());
    CHECK(contains(e, "node 'tile' (Tile): output 'big'"));
    CHECK(contains(e, "bytes a tensor may take"));
  }

  TEST_CASE("Reshape, Pad and DepthToSpace arguments that overflow are refused") {
    ModelBuilder reshape;
    reshape.input("x", DataType::float32, {1, 1})
        .initializer("shape", int64s({two_32, two_32, -1}))
        .node("Reshape", {"x", "shape"}, {"y"}, {}, "reshape")
        .output("y");
    CHECK(contains(planning_error(reshape.model()), "node 'reshape' (Reshape) making 'y'"));

    ModelBuilder pad;
    pad.input("x", DataType::float32, {1, 1})
        .initializer("pads", int64s({0, INT64_MAX, 0, INT64_MAX}))
        .node("Pad", {"x", "pads"}, {"y"}, {}, "pad")
        .output("y");
    const std::string pad_error = planning_error(pad.model());
    CHECK(contains(pad_error, "node 'pad' (Pad)"));
    CHECK(contains(pad_error, "overflows"));

    ModelBuilder huge_pad;  // no overflow, but far too big to build the padding tables for
    huge_pad.input("x", DataType::float32, {1, 1})
        .initializer("pads", int64s({0, 0, 0, int64_t{1} << 40}))
        .node("Pad", {"x", "pads"}, {"y"}, {}, "pad")
        .output("y");
    CHECK(contains(planning_error(huge_pad.model()), "bytes a tensor may take"));

    ModelBuilder d2s;
    d2s.input("x", DataType::float32, {1, 1})
        .node("Reshape", {"x", "four_d"}, {"x4"}, {}, "to4d")
        .initializer("four_d", int64s({1, 1, 1, 1}))
        .node("DepthToSpace", {"x4"}, {"y"}, {attr("blocksize", int64_t{1} << 40)}, "d2s")
        .output("y");
    const std::string d2s_error = planning_error(d2s.model());
    CHECK(contains(d2s_error, "node 'd2s' (DepthToSpace)"));
    CHECK(contains(d2s_error, "blocksize^2 overflows"));
  }

  TEST_CASE("Split sizes that add up past the axis are refused without overflowing") {
    ModelBuilder b;
    b.input("x", DataType::float32, {1, 4})
        .initializer("split", int64s({INT64_MAX, INT64_MAX, 4}))
        .node("Split", {"x", "split"}, {"a", "b", "c"}, {attr("axis", int64_t{1})}, "split")
        .output("a");
    const std::string e = error_of([&] {
      Session session(b.model(), SessionOptions{.threads = 1});
      const std::vector<TensorInfo> inputs{{DataType::float32, {1, 4}}};
      session.prepare(inputs);
    });
    CHECK(contains(e, "node 'split' (Split)"));
    CHECK(contains(e, "adds up to more than the size 4"));
  }

  TEST_CASE("an input beyond max_tensor_bytes is refused when planning, naming the input") {
    ModelBuilder b;
    b.input("image", DataType::float32, {1, 1, -1, -1}).node("Relu", {"image"}, {"y"}).output("y");
    Session session(b.model(), SessionOptions{.threads = 1});
    const std::vector<TensorInfo> inputs{{DataType::float32, {1, 1, 100000, 100000}}};
    const std::string e = error_of([&] { session.prepare(inputs); });
    CHECK(contains(e, "input 'image'"));
    CHECK(contains(e, "bytes a tensor may take"));
  }
}
