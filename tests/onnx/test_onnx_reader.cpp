// The ONNX wire-format reader: hand-encoded messages for each wire-format rule, corrupt
// input of every kind, and the real ONNX backend node tests when they are installed.

#include <doctest/doctest.h>

#include "onnx_reader.hpp"

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace onnx = rknnxx::host::onnx;
namespace fs = std::filesystem;

namespace {

// A minimal protobuf writer, the mirror of the reader, to build test inputs by hand.
struct Writer {
  std::string out;
  Writer& varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
    return *this;
  }
  Writer& tag(uint32_t field, uint32_t wire) { return varint(uint64_t{field} << 3 | wire); }
  Writer& int_field(uint32_t field, int64_t v) { return tag(field, 0).varint(static_cast<uint64_t>(v)); }
  Writer& bytes_field(uint32_t field, const std::string& s) {
    tag(field, 2).varint(s.size());
    out += s;
    return *this;
  }
  Writer& float_field(uint32_t field, float f) {
    tag(field, 5);
    char b[4];
    std::memcpy(b, &f, 4);
    out.append(b, 4);
    return *this;
  }
  Writer& fixed64_field(uint32_t field, double d) {
    tag(field, 1);
    char b[8];
    std::memcpy(b, &d, 8);
    out.append(b, 8);
    return *this;
  }
  Writer& packed_varints(uint32_t field, const std::vector<int64_t>& vs) {
    Writer inner;
    for (auto v : vs) inner.varint(static_cast<uint64_t>(v));
    return bytes_field(field, inner.out);
  }
  Writer& packed_floats(uint32_t field, const std::vector<float>& fs) {
    std::string s(fs.size() * 4, '\0');
    std::memcpy(s.data(), fs.data(), s.size());
    return bytes_field(field, s);
  }
};

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const onnx::ParseError& e) {
    return e.what();
  }
  return "<no error>";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A small model: one Add node with an int attribute, an initializer, typed input and output.
std::string small_model() {
  Writer tensor;
  tensor.packed_varints(1, {2, 3}).int_field(2, 1).bytes_field(8, "w").packed_floats(4, {1, 2, 3, 4, 5, 6});
  Writer attr;
  attr.bytes_field(1, "axis").int_field(20, 2).int_field(3, -1);
  Writer node;
  node.bytes_field(1, "x")
      .bytes_field(1, "w")
      .bytes_field(2, "y")
      .bytes_field(4, "Add")
      .bytes_field(3, "add0")
      .bytes_field(5, attr.out);
  Writer dim1, dim2, shape, tensor_type, type, vi;
  dim1.int_field(1, 2);
  dim2.bytes_field(2, "N");
  shape.bytes_field(1, dim1.out).bytes_field(1, dim2.out);
  tensor_type.int_field(1, 1).bytes_field(2, shape.out);
  type.bytes_field(1, tensor_type.out);
  vi.bytes_field(1, "x").bytes_field(2, type.out);
  Writer out_vi;
  out_vi.bytes_field(1, "y");
  Writer graph;
  graph.bytes_field(1, node.out)
      .bytes_field(2, "g")
      .bytes_field(5, tensor.out)
      .bytes_field(11, vi.out)
      .bytes_field(12, out_vi.out);
  Writer opset;
  opset.bytes_field(1, "").int_field(2, 13);
  Writer model;
  model.int_field(1, 8).bytes_field(2, "test").bytes_field(7, graph.out).bytes_field(8, opset.out);
  return model.out;
}

const fs::path node_tests = "/usr/share/libonnx-testdata/data/node";

}  // namespace

TEST_SUITE("onnx_reader") {

  TEST_CASE("a hand-encoded model reads back field by field") {
    const auto m = onnx::read_model(as_bytes(small_model()));
    CHECK(m.ir_version == 8);
    CHECK(m.producer_name == "test");
    REQUIRE(m.opset_import.size() == 1);
    CHECK(m.opset_import[0].version == 13);
    REQUIRE(m.graph.node.size() == 1);
    const auto& n = m.graph.node[0];
    CHECK(n.op_type == "Add");
    CHECK(n.name == "add0");
    CHECK(n.input == std::vector<std::string>{"x", "w"});
    CHECK(n.output == std::vector<std::string>{"y"});
    REQUIRE(n.attribute.size() == 1);
    CHECK(n.attribute[0].name == "axis");
    CHECK(n.attribute[0].type == onnx::AttributeProto::Type::int_);
    CHECK(n.attribute[0].i == -1);
    REQUIRE(m.graph.initializer.size() == 1);
    const auto& w = m.graph.initializer[0];
    CHECK(w.name == "w");
    CHECK(w.data_type == onnx::DataType::float32);
    CHECK(w.dims == std::vector<int64_t>{2, 3});
    CHECK(w.float_data == std::vector<float>{1, 2, 3, 4, 5, 6});
    REQUIRE(m.graph.input.size() == 1);
    const auto& x = m.graph.input[0];
    CHECK(x.kind == onnx::TypeKind::tensor);
    CHECK(x.elem_type == onnx::DataType::float32);
    CHECK(x.has_shape);
    REQUIRE(x.shape.size() == 2);
    CHECK(x.shape[0].has_value);
    CHECK(x.shape[0].value == 2);
    CHECK_FALSE(x.shape[1].has_value);
    CHECK(x.shape[1].param == "N");
    REQUIRE(m.graph.output.size() == 1);
    CHECK(m.graph.output[0].kind == onnx::TypeKind::none);
  }

  TEST_CASE("repeated scalars read the same packed and unpacked, and mixed") {
    Writer packed, unpacked, mixed;
    packed.packed_varints(1, {1, 300, 70000});
    unpacked.int_field(1, 1).int_field(1, 300).int_field(1, 70000);
    mixed.int_field(1, 1).packed_varints(1, {300, 70000});
    for (const auto* w : {&packed, &unpacked, &mixed}) {
      auto t = onnx::read_tensor(as_bytes(w->out));
      CHECK(t.dims == std::vector<int64_t>{1, 300, 70000});
    }
    Writer floats;
    floats.int_field(1, 3).float_field(4, 1.5f).packed_floats(4, {2.5f, -3.0f});
    CHECK(onnx::read_tensor(as_bytes(floats.out)).float_data == std::vector<float>{1.5f, 2.5f, -3.0f});
    Writer doubles;
    doubles.int_field(1, 1).int_field(2, 11).fixed64_field(10, 0.25);
    CHECK(onnx::read_tensor(as_bytes(doubles.out)).double_data == std::vector<double>{0.25});
  }

  TEST_CASE("negative int64 and int32 varints take ten bytes and read back") {
    Writer w;
    w.int_field(1, 2).int_field(2, 6).tag(5, 0).varint(static_cast<uint64_t>(int64_t{-5})).int_field(5, 2147483647);
    const auto t = onnx::read_tensor(as_bytes(w.out));
    CHECK(t.int32_data == std::vector<int32_t>{-5, 2147483647});
    Writer attr_model;
    Writer attr;
    attr.bytes_field(1, "a").int_field(3, std::numeric_limits<int64_t>::min());
    Writer node, graph;
    node.bytes_field(5, attr.out);
    graph.bytes_field(1, node.out);
    attr_model.bytes_field(7, graph.out);
    CHECK(onnx::read_model(as_bytes(attr_model.out)).graph.node.at(0).attribute.at(0).i ==
          std::numeric_limits<int64_t>::min());
  }

  TEST_CASE("unknown fields of every wire type are skipped") {
    Writer w;
    w.int_field(99, 12345)
        .fixed64_field(98, 1.0)
        .float_field(97, 2.0f)
        .bytes_field(96, "junk")
        .int_field(1, 4)
        .int_field(2, 7)
        .bytes_field(12, "doc string")
        .packed_varints(7, {1, -2, 3, 4});
    const auto t = onnx::read_tensor(as_bytes(w.out));
    CHECK(t.dims == std::vector<int64_t>{4});
    CHECK(t.int64_data == std::vector<int64_t>{1, -2, 3, 4});
  }

  TEST_CASE("every truncation of a valid model throws ParseError or parses, never crashes") {
    const auto full = small_model();
    int errors = 0;
    for (std::size_t n = 0; n < full.size(); ++n) {
      try {
        (void)onnx::read_model(as_bytes(full.substr(0, n)));
      } catch (const onnx::ParseError& e) {
        ++errors;
        CHECK(contains(e.what(), "at byte"));
      }
    }
    CHECK(errors > static_cast<int>(full.size()) / 2);
  }

  TEST_CASE("a length beyond the end names the message path, the field and the offset") {
    Writer tensor;
    tensor.int_field(1, 2).tag(9, 2).varint(1000).out += "ab";
    Writer graph;
    graph.bytes_field(5, tensor.out);
    Writer model;
    model.bytes_field(7, graph.out);
    const auto msg = error_of([&] { onnx::read_model(as_bytes(model.out)); });
    CHECK(contains(msg, "ModelProto.graph > GraphProto.initializer > TensorProto.raw_data (field 9)"));
    CHECK(contains(msg, "length 1000 exceeds the 2 bytes that remain"));
    // The raw_data tag is at byte 2 (model tag+len) + 2 (graph tag+len) + 2 (dims) = 6; the length at 7.
    CHECK(contains(msg, "at byte 7"));
  }

  TEST_CASE("corrupt scalars: truncated varint, overlong varint, truncated fixed, bad packed length") {
    CHECK(contains(error_of([] { onnx::read_tensor(as_bytes(std::string("\x08\x80", 2))); }), "truncated varint"));
    CHECK(contains(error_of([] { onnx::read_tensor(as_bytes(std::string(12, '\xff'))); }), "longer than 10 bytes"));
    CHECK(contains(error_of([] { onnx::read_tensor(as_bytes(std::string("\x25\x00\x00", 3))); }), "truncated fixed32"));
    Writer bad_packed;
    bad_packed.bytes_field(4, "abcdef");
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(bad_packed.out)); }), "not a multiple of 4"));
    CHECK(contains(error_of([] { onnx::read_tensor(as_bytes(std::string("\x00", 1))); }), "invalid field number 0"));
    CHECK(contains(error_of([] { onnx::read_tensor(as_bytes(std::string("\x0b", 1))); }), "wire type"));
  }

  TEST_CASE("a known field with the wrong wire type is refused") {
    Writer w;
    w.int_field(8, 3);  // name as a varint
    const auto msg = error_of([&] { onnx::read_tensor(as_bytes(w.out)); });
    CHECK(contains(msg, "TensorProto.name (field 8)"));
    CHECK(contains(msg, "wire type varint where length-delimited was expected"));
  }

  TEST_CASE("a huge length prefix does not allocate") {
    Writer w;
    w.tag(9, 2).varint(uint64_t{1} << 62);
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(w.out)); }), "exceeds"));
    Writer dims;
    dims.tag(1, 2).varint(uint64_t{1} << 40);
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(dims.out)); }), "exceeds"));
  }

  TEST_CASE("nesting deeper than the limit is refused") {
    // graph > node > attribute(g) > graph > node > ... : three messages per level.
    std::string inner;
    for (int i = 0; i < onnx::max_nesting_depth; ++i) {
      Writer attr;
      attr.bytes_field(1, "body").int_field(20, 5).bytes_field(6, inner);
      Writer node;
      node.bytes_field(4, "If").bytes_field(5, attr.out);
      Writer graph;
      graph.bytes_field(1, node.out);
      inner = graph.out;
    }
    Writer model;
    model.bytes_field(7, inner);
    CHECK(contains(error_of([&] { onnx::read_model(as_bytes(model.out)); }), "nested deeper than"));

    // A shallow subgraph is fine.
    Writer attr;
    attr.bytes_field(1, "then_branch").int_field(20, 5).bytes_field(6, Writer{}.bytes_field(2, "sub").out);
    Writer node, graph, m;
    node.bytes_field(4, "If").bytes_field(5, attr.out);
    graph.bytes_field(1, node.out);
    m.bytes_field(7, graph.out);
    const auto parsed = onnx::read_model(as_bytes(m.out));
    REQUIRE(parsed.graph.node.at(0).attribute.at(0).g.size() == 1);
    CHECK(parsed.graph.node[0].attribute[0].g[0].name == "sub");
  }

  TEST_CASE("external data is refused with a message that says what to do") {
    Writer entry;
    entry.bytes_field(1, "location").bytes_field(2, "weights.bin");
    Writer t;
    t.int_field(1, 4).int_field(2, 1).bytes_field(8, "w").bytes_field(13, entry.out).int_field(14, 1);
    const auto msg = error_of([&] { onnx::read_tensor(as_bytes(t.out)); });
    CHECK(contains(msg, "external file ('weights.bin')"));
    CHECK(contains(msg, "save_as_external_data=False"));
  }

  TEST_CASE("tensor data must agree with the dims") {
    Writer raw;
    raw.int_field(1, 3).int_field(2, 1).bytes_field(9, std::string(8, '\0'));
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(raw.out)); }),
                   "8 bytes of raw_data where 12 were expected"));
    Writer neg;
    neg.int_field(1, -1);
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(neg.out)); }), "negative dimension"));
    Writer overflow;
    overflow.int_field(1, int64_t{1} << 40).int_field(1, int64_t{1} << 40);
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(overflow.out)); }), "more elements than int64"));
    Writer typed;
    typed.int_field(1, 2).int_field(2, 7).packed_varints(7, {1, 2, 3});
    CHECK(contains(error_of([&] { onnx::read_tensor(as_bytes(typed.out)); }), "holds 3 values where 2"));
    Writer scalar;  // no dims: a scalar of one element
    scalar.int_field(2, 1).float_field(4, 7.0f);
    CHECK(onnx::element_count(onnx::read_tensor(as_bytes(scalar.out))) == 1);
  }

  TEST_CASE("an empty input is an empty message") {
    CHECK(onnx::read_model({}).graph.node.empty());
    CHECK(onnx::read_tensor({}).dims.empty());
  }

  TEST_CASE("a missing file names the path") {
    CHECK(contains(error_of([] { onnx::read_model_file("/nonexistent/model.onnx"); }), "/nonexistent/model.onnx"));
  }

  TEST_CASE("a real conformance model and its tensors read as the ONNX reference says") {
    const auto dir = node_tests / "test_add";
    if (!fs::exists(dir)) return;
    const auto m = onnx::read_model_file(dir / "model.onnx");
    REQUIRE(m.graph.node.size() == 1);
    CHECK(m.graph.node[0].op_type == "Add");
    REQUIRE(m.graph.input.size() == 2);
    CHECK(m.graph.input[0].elem_type == onnx::DataType::float32);
    REQUIRE(m.graph.input[0].shape.size() == 3);
    CHECK(m.graph.input[0].shape[2].value == 5);
    const auto x = onnx::read_tensor_file(dir / "test_data_set_0" / "input_0.pb");
    CHECK(x.dims == std::vector<int64_t>{3, 4, 5});
    CHECK(x.data_type == onnx::DataType::float32);
    CHECK(x.raw_data.size() == 3 * 4 * 5 * 4);
  }

  TEST_CASE("every model and tensor of the ONNX backend node tests parses") {
    if (!fs::exists(node_tests)) return;
    int models = 0, tensors = 0;
    for (const auto& test : fs::directory_iterator(node_tests)) {
      const auto path = test.path() / "model.onnx";
      if (!fs::exists(path)) continue;
      onnx::ModelProto m;
      CHECK_NOTHROW(m = onnx::read_model_file(path));
      ++models;
      CHECK_MESSAGE(!m.graph.node.empty(), path.string());
      // Inputs and outputs that are tensors are stored as TensorProto; sequences and optionals are not.
      bool all_tensors = true;
      for (const auto& v : m.graph.input) all_tensors = all_tensors && v.kind == onnx::TypeKind::tensor;
      for (const auto& v : m.graph.output) all_tensors = all_tensors && v.kind == onnx::TypeKind::tensor;
      if (!all_tensors) continue;
      for (const auto& file : fs::directory_iterator(test.path() / "test_data_set_0")) {
        CHECK_NOTHROW(onnx::read_tensor_file(file.path()));
        ++tensors;
      }
    }
    MESSAGE(models << " models and " << tensors << " tensors read");
    CHECK(models > 500);
  }

}  // TEST_SUITE
