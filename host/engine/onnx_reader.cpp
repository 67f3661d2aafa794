// Protobuf wire format, as much as ONNX needs (https://protobuf.dev/programming-guides/encoding/):
// a message is a sequence of (tag, value); tag = field_number << 3 | wire_type;
// wire types 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 (3/4, groups, are not
// used by ONNX and are refused). Repeated scalars come packed (one length-delimited
// run) or unpacked (one tag per element); both are accepted, as protobuf requires.
// Field numbers are those of onnx.proto (IR version 8).

#include "onnx_reader.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>

namespace rknnxx::host::onnx {

static_assert(std::endian::native == std::endian::little,
              "the wire format is decoded by memcpy of little-endian values");

ParseError::ParseError(std::string message_path, std::string field, std::size_t offset, const std::string& reason)
    : std::runtime_error(fmt::format("ONNX parse error in {}{}{} at byte {}: {}", message_path,
                                     field.empty() ? "" : ".", field, offset, reason)),
      message_path_(std::move(message_path)), field_(std::move(field)), offset_(offset), reason_(reason) {}

ParseError::ParseError(const std::string& reason) : std::runtime_error(reason), reason_(reason) {}

namespace {

enum class WireType : uint32_t {
  varint = 0,
  fixed64 = 1,
  length_delimited = 2,
  group_start = 3,
  group_end = 4,
  fixed32 = 5
};

struct Field {
  uint32_t number = 0;
  WireType wire = WireType::varint;
  std::size_t offset = 0;  // of the tag, from the start of the input
};

// A view of one message's bytes inside the whole input. Cursors of nested messages point
// to their parent so that an error can name the path from the root message.
class Cursor {
public:
  Cursor(std::span<const std::byte> input, std::string_view message)
      : input_(input), pos_(0), end_(input.size()), message_(message) {}

  // The cursor of a nested message occupying the next `length` bytes (already checked).
  Cursor(const Cursor& parent, std::string_view via_field, std::size_t length, std::string_view message)
      : input_(parent.input_), pos_(parent.pos_), end_(parent.pos_ + length), message_(message), parent_(&parent),
        via_field_(via_field), depth_(parent.depth_ + 1) {}

  // The next n bytes (already checked) as a cursor of the same message, for packed runs.
  Cursor slice(std::size_t n) const {
    Cursor s = *this;
    s.end_ = pos_ + n;
    return s;
  }

  bool at_end() const noexcept { return pos_ >= end_; }
  std::size_t pos() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return end_ - pos_; }
  int depth() const noexcept { return depth_; }

  [[noreturn]] void fail(std::string_view field, std::size_t offset, const std::string& reason) const {
    throw ParseError(path(), std::string(field), offset, reason);
  }

  std::string path() const {
    std::string p = parent_ ? parent_->path() + "." + std::string(via_field_) + " > " : std::string();
    p += message_;
    return p;
  }

  uint64_t varint(std::string_view field) {
    const std::size_t start = pos_;
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= end_) fail(field, start, "truncated varint");
      const auto b = static_cast<uint8_t>(input_[pos_++]);
      if (shift < 64) value |= static_cast<uint64_t>(b & 0x7fu) << shift;
      if ((b & 0x80u) == 0) return value;
    }
    fail(field, start, "varint longer than 10 bytes");
  }

  template <class T> T fixed(std::string_view field) {
    if (remaining() < sizeof(T))
      fail(field, pos_, fmt::format("truncated fixed{}: {} bytes remain", sizeof(T) * 8, remaining()));
    T value;
    std::memcpy(&value, input_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // Reads a length prefix and checks it against what remains of this message.
  std::size_t length(std::string_view field) {
    const std::size_t at = pos_;
    const uint64_t n = varint(field);
    if (n > remaining()) fail(field, at, fmt::format("length {} exceeds the {} bytes that remain", n, remaining()));
    return static_cast<std::size_t>(n);
  }

  std::span<const std::byte> bytes(std::size_t n) {  // n already checked by length()
    auto s = input_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

  void skip(std::size_t n) { pos_ += n; }

  bool next(Field& f) {
    if (at_end()) return false;
    f.offset = pos_;
    const uint64_t tag = varint("<tag>");
    const uint64_t number = tag >> 3;
    if (number == 0 || number > 536870911u) fail("<tag>", f.offset, fmt::format("invalid field number {}", number));
    f.number = static_cast<uint32_t>(number);
    f.wire = static_cast<WireType>(tag & 7u);
    return true;
  }

  void skip_field(const Field& f) {
    const std::string name = fmt::format("unknown field {}", f.number);
    switch (f.wire) {
      case WireType::varint: varint(name); return;
      case WireType::fixed64: fixed<uint64_t>(name); return;
      case WireType::fixed32: fixed<uint32_t>(name); return;
      case WireType::length_delimited: skip(length(name)); return;
      default:
        fail(name, f.offset,
             fmt::format("unsupported wire type {} (groups are not used by ONNX)", static_cast<uint32_t>(f.wire)));
    }
  }

private:
  std::span<const std::byte> input_;
  std::size_t pos_;
  std::size_t end_;
  std::string_view message_;
  const Cursor* parent_ = nullptr;
  std::string_view via_field_;
  int depth_ = 0;
};

const char* wire_name(WireType w) {
  switch (w) {
    case WireType::varint: return "varint";
    case WireType::fixed64: return "fixed64";
    case WireType::length_delimited: return "length-delimited";
    case WireType::fixed32: return "fixed32";
    default: return "group";
  }
}

std::string field_label(std::string_view name, const Field& f) { return fmt::format("{} (field {})", name, f.number); }

void expect_wire(Cursor& c, const Field& f, std::string_view name, WireType want) {
  if (f.wire != want)
    c.fail(field_label(name, f), f.offset,
           fmt::format("wire type {} where {} was expected", wire_name(f.wire), wire_name(want)));
}

// ---- scalar fields ----

uint64_t read_varint_field(Cursor& c, const Field& f, std::string_view name) {
  expect_wire(c, f, name, WireType::varint);
  return c.varint(field_label(name, f));
}

int64_t read_int64(Cursor& c, const Field& f, std::string_view name) {
  return static_cast<int64_t>(read_varint_field(c, f, name));
}

int32_t read_int32(Cursor& c, const Field& f, std::string_view name) {
  // int32 is sent as the varint of its sign-extended 64-bit value; keep the low 32 bits.
  return static_cast<int32_t>(static_cast<uint32_t>(read_varint_field(c, f, name)));
}

float read_float(Cursor& c, const Field& f, std::string_view name) {
  expect_wire(c, f, name, WireType::fixed32);
  return c.fixed<float>(field_label(name, f));
}

std::string read_string(Cursor& c, const Field& f, std::string_view name) {
  expect_wire(c, f, name, WireType::length_delimited);
  const auto n = c.length(field_label(name, f));
  const auto b = c.bytes(n);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// ---- repeated scalars, packed or not ----

enum class Scalar { varint64, varint32, varint_u64, fixed32_float, fixed64_double };

template <class T> T decode_one(Cursor& c, Scalar kind, const std::string& label) {
  switch (kind) {
    case Scalar::varint64: return static_cast<T>(static_cast<int64_t>(c.varint(label)));
    case Scalar::varint32: return static_cast<T>(static_cast<int32_t>(static_cast<uint32_t>(c.varint(label))));
    case Scalar::varint_u64: return static_cast<T>(c.varint(label));
    case Scalar::fixed32_float: return static_cast<T>(c.fixed<float>(label));
    case Scalar::fixed64_double: return static_cast<T>(c.fixed<double>(label));
  }
  return T{};
}

template <class T>
void read_repeated(Cursor& c, const Field& f, std::string_view name, Scalar kind, std::vector<T>& out) {
  const WireType element_wire = kind == Scalar::fixed32_float ? WireType::fixed32
      : kind == Scalar::fixed64_double                        ? WireType::fixed64
                                                              : WireType::varint;
  const std::string label = field_label(name, f);
  if (f.wire == element_wire) {
    out.push_back(decode_one<T>(c, kind, label));
    return;
  }
  if (f.wire != WireType::length_delimited)
    c.fail(label, f.offset,
           fmt::format("wire type {} where {} or packed was expected", wire_name(f.wire), wire_name(element_wire)));
  const std::size_t at = c.pos();
  const std::size_t n = c.length(label);
  Cursor packed = c.slice(n);
  if (element_wire != WireType::varint) {
    const std::size_t size = element_wire == WireType::fixed32 ? 4 : 8;
    if (n % size != 0) c.fail(label, at, fmt::format("packed length {} is not a multiple of {}", n, size));
    out.reserve(out.size() + n / size);  // bounded by the input size
  }
  // Each varint takes at least one byte, so a packed run never holds more than n elements.
  while (!packed.at_end()) out.push_back(decode_one<T>(packed, kind, label));
  c.skip(n);
}

// ---- messages ----

template <class Parse>
void read_message(Cursor& c, const Field& f, std::string_view name, std::string_view type, Parse&& parse) {
  expect_wire(c, f, name, WireType::length_delimited);
  const std::string label = field_label(name, f);
  const std::size_t n = c.length(label);
  if (c.depth() + 1 >= max_nesting_depth)
    c.fail(label, f.offset, fmt::format("messages nested deeper than {}", max_nesting_depth));
  Cursor inner(c, name, n, type);
  parse(inner);
  c.skip(n);
}

void parse_graph(Cursor& c, GraphProto& g);

void parse_string_string_entry(Cursor& c, std::string& key, std::string& value) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: key = read_string(c, f, "key"); break;
      case 2: value = read_string(c, f, "value"); break;
      default: c.skip_field(f);
    }
  }
}

void check_tensor(Cursor& c, const TensorProto& t, std::size_t start);

void parse_tensor(Cursor& c, TensorProto& t) {
  const std::size_t start = c.pos();
  int64_t data_location = 0;
  std::string external_location;
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: read_repeated(c, f, "dims", Scalar::varint64, t.dims); break;
      case 2: t.data_type = static_cast<DataType>(read_int32(c, f, "data_type")); break;
      case 4: read_repeated(c, f, "float_data", Scalar::fixed32_float, t.float_data); break;
      case 5: read_repeated(c, f, "int32_data", Scalar::varint32, t.int32_data); break;
      case 6: t.string_data.push_back(read_string(c, f, "string_data")); break;
      case 7: read_repeated(c, f, "int64_data", Scalar::varint64, t.int64_data); break;
      case 8: t.name = read_string(c, f, "name"); break;
      case 9: t.raw_data = read_string(c, f, "raw_data"); break;
      case 10: read_repeated(c, f, "double_data", Scalar::fixed64_double, t.double_data); break;
      case 11: read_repeated(c, f, "uint64_data", Scalar::varint_u64, t.uint64_data); break;
      case 13:
        read_message(c, f, "external_data", "StringStringEntryProto", [&](Cursor& e) {
          std::string key, value;
          parse_string_string_entry(e, key, value);
          if (key == "location") external_location = value;
        });
        break;
      case 14: data_location = read_int64(c, f, "data_location"); break;
      default: c.skip_field(f);
    }
  }
  if (data_location == 1) {
    t.has_external_data = true;
    c.fail("data_location (field 14)", start,
           fmt::format("tensor '{}' keeps its data in an external file{}; the host runtime reads self-contained "
                       "models only: save the model with its data inside (onnx.save_model(model, path, "
                       "save_as_external_data=False))",
                       t.name, external_location.empty() ? std::string() : fmt::format(" ('{}')", external_location)));
  }
  check_tensor(c, t, start);
}

// Wire-level consistency of a tensor: dims are sizes, and the data present matches them.
void check_tensor(Cursor& c, const TensorProto& t, std::size_t start) {
  int64_t count = 1;
  for (auto d : t.dims) {
    if (d < 0) c.fail("dims (field 1)", start, fmt::format("tensor '{}' has negative dimension {}", t.name, d));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      c.fail("dims (field 1)", start, fmt::format("tensor '{}' has more elements than int64 can count", t.name));
    count *= d;
  }
  const auto mismatch = [&](std::string_view field, std::size_t have, uint64_t want) {
    c.fail(field, start,
           fmt::format("tensor '{}' of type {} and {} elements holds {} values where {} were expected", t.name,
                       to_string(t.data_type), count, have, want));
  };
  const auto ucount = static_cast<uint64_t>(count);
  const bool is_complex = t.data_type == DataType::complex64 || t.data_type == DataType::complex128;
  const uint64_t per_element = is_complex ? 2 : 1;
  if (!t.raw_data.empty()) {
    const std::size_t size = bytes_per_element(t.data_type);
    if (size != 0 && (ucount > std::numeric_limits<uint64_t>::max() / size || t.raw_data.size() != ucount * size))
      c.fail("raw_data (field 9)", start,
             fmt::format("tensor '{}' of type {} and {} elements has {} bytes of raw_data where {} were expected",
                         t.name, to_string(t.data_type), count, t.raw_data.size(), ucount * size));
    return;
  }
  if (!t.float_data.empty() && t.float_data.size() != ucount * per_element)
    mismatch("float_data (field 4)", t.float_data.size(), ucount * per_element);
  if (!t.int32_data.empty() && t.int32_data.size() != ucount)
    mismatch("int32_data (field 5)", t.int32_data.size(), ucount);
  if (!t.int64_data.empty() && t.int64_data.size() != ucount)
    mismatch("int64_data (field 7)", t.int64_data.size(), ucount);
  if (!t.double_data.empty() && t.double_data.size() != ucount * per_element)
    mismatch("double_data (field 10)", t.double_data.size(), ucount * per_element);
  if (!t.uint64_data.empty() && t.uint64_data.size() != ucount)
    mismatch("uint64_data (field 11)", t.uint64_data.size(), ucount);
  if (!t.string_data.empty() && t.string_data.size() != ucount)
    mismatch("string_data (field 6)", t.string_data.size(), ucount);
}

void parse_shape(Cursor& c, std::vector<Dimension>& dims) {
  Field f;
  while (c.next(f)) {
    if (f.number != 1) {
      c.skip_field(f);
      continue;
    }
    Dimension& d = dims.emplace_back();
    read_message(c, f, "dim", "TensorShapeProto.Dimension", [&](Cursor& dc) {
      Field g;
      while (dc.next(g)) {
        switch (g.number) {
          case 1:
            d.has_value = true;
            d.value = read_int64(dc, g, "dim_value");
            d.param.clear();
            break;
          case 2:
            d.has_value = false;
            d.param = read_string(dc, g, "dim_param");
            break;
          default: dc.skip_field(g);
        }
      }
    });
  }
}

// TypeProto.Tensor and TypeProto.SparseTensor share their layout.
void parse_tensor_type(Cursor& c, ValueInfoProto& v) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: v.elem_type = static_cast<DataType>(read_int32(c, f, "elem_type")); break;
      case 2:
        v.has_shape = true;
        v.shape.clear();
        read_message(c, f, "shape", "TensorShapeProto", [&](Cursor& s) { parse_shape(s, v.shape); });
        break;
      default: c.skip_field(f);
    }
  }
}

void parse_type(Cursor& c, ValueInfoProto& v) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1:
        v.kind = TypeKind::tensor;
        read_message(c, f, "tensor_type", "TypeProto.Tensor", [&](Cursor& t) { parse_tensor_type(t, v); });
        break;
      case 8:
        v.kind = TypeKind::sparse_tensor;
        read_message(c, f, "sparse_tensor_type", "TypeProto.SparseTensor", [&](Cursor& t) { parse_tensor_type(t, v); });
        break;
      case 4:
        v.kind = TypeKind::sequence;
        c.skip_field(f);
        break;
      case 5:
        v.kind = TypeKind::map;
        c.skip_field(f);
        break;
      case 9:
        v.kind = TypeKind::optional;
        c.skip_field(f);
        break;
      case 6: c.skip_field(f); break;  // denotation
      default: v.kind = TypeKind::other; c.skip_field(f);
    }
  }
}

void parse_value_info(Cursor& c, ValueInfoProto& v) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: v.name = read_string(c, f, "name"); break;
      case 2: read_message(c, f, "type", "TypeProto", [&](Cursor& t) { parse_type(t, v); }); break;
      default: c.skip_field(f);
    }
  }
}

void parse_attribute(Cursor& c, AttributeProto& a) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: a.name = read_string(c, f, "name"); break;
      case 20: a.type = static_cast<AttributeProto::Type>(read_int32(c, f, "type")); break;
      case 2: a.f = read_float(c, f, "f"); break;
      case 3: a.i = read_int64(c, f, "i"); break;
      case 4: a.s = read_string(c, f, "s"); break;
      case 5:
        a.t.clear();
        read_message(c, f, "t", "TensorProto", [&](Cursor& t) { parse_tensor(t, a.t.emplace_back()); });
        break;
      case 6:
        a.g.clear();
        read_message(c, f, "g", "GraphProto", [&](Cursor& g) { parse_graph(g, a.g.emplace_back()); });
        break;
      case 7: read_repeated(c, f, "floats", Scalar::fixed32_float, a.floats); break;
      case 8: read_repeated(c, f, "ints", Scalar::varint64, a.ints); break;
      case 9: a.strings.push_back(read_string(c, f, "strings")); break;
      case 10:
        read_message(c, f, "tensors", "TensorProto", [&](Cursor& t) { parse_tensor(t, a.tensors.emplace_back()); });
        break;
      case 11:
        read_message(c, f, "graphs", "GraphProto", [&](Cursor& g) { parse_graph(g, a.graphs.emplace_back()); });
        break;
      case 21: a.ref_attr_name = read_string(c, f, "ref_attr_name"); break;
      default: c.skip_field(f);
    }
  }
}

void parse_node(Cursor& c, NodeProto& n) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: n.input.push_back(read_string(c, f, "input")); break;
      case 2: n.output.push_back(read_string(c, f, "output")); break;
      case 3: n.name = read_string(c, f, "name"); break;
      case 4: n.op_type = read_string(c, f, "op_type"); break;
      case 7: n.domain = read_string(c, f, "domain"); break;
      case 5:
        read_message(c, f, "attribute", "AttributeProto",
                     [&](Cursor& a) { parse_attribute(a, n.attribute.emplace_back()); });
        break;
      default: c.skip_field(f);
    }
  }
}

void parse_graph(Cursor& c, GraphProto& g) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: read_message(c, f, "node", "NodeProto", [&](Cursor& n) { parse_node(n, g.node.emplace_back()); }); break;
      case 2: g.name = read_string(c, f, "name"); break;
      case 5:
        read_message(c, f, "initializer", "TensorProto",
                     [&](Cursor& t) { parse_tensor(t, g.initializer.emplace_back()); });
        break;
      case 11:
        read_message(c, f, "input", "ValueInfoProto", [&](Cursor& v) { parse_value_info(v, g.input.emplace_back()); });
        break;
      case 12:
        read_message(c, f, "output", "ValueInfoProto",
                     [&](Cursor& v) { parse_value_info(v, g.output.emplace_back()); });
        break;
      case 13:
        read_message(c, f, "value_info", "ValueInfoProto",
                     [&](Cursor& v) { parse_value_info(v, g.value_info.emplace_back()); });
        break;
      default: c.skip_field(f);
    }
  }
}

void parse_model(Cursor& c, ModelProto& m) {
  Field f;
  while (c.next(f)) {
    switch (f.number) {
      case 1: m.ir_version = read_int64(c, f, "ir_version"); break;
      case 2: m.producer_name = read_string(c, f, "producer_name"); break;
      case 3: m.producer_version = read_string(c, f, "producer_version"); break;
      case 7:
        // Protobuf merges repeated occurrences of a singular message; a second graph replaces
        // nothing but adds to the first, which is what the merge rule gives for our fields.
        read_message(c, f, "graph", "GraphProto", [&](Cursor& g) { parse_graph(g, m.graph); });
        break;
      case 8:
        read_message(c, f, "opset_import", "OperatorSetIdProto", [&](Cursor& o) {
          OperatorSetId& id = m.opset_import.emplace_back();
          Field g;
          while (o.next(g)) {
            switch (g.number) {
              case 1: id.domain = read_string(o, g, "domain"); break;
              case 2: id.version = read_int64(o, g, "version"); break;
              default: o.skip_field(g);
            }
          }
        });
        break;
      default: c.skip_field(f);
    }
  }
}

}  // namespace

ModelProto read_model(std::span<const std::byte> bytes) {
  ModelProto model;
  Cursor c(bytes, "ModelProto");
  parse_model(c, model);
  return model;
}

TensorProto read_tensor(std::span<const std::byte> bytes) {
  TensorProto tensor;
  Cursor c(bytes, "TensorProto");
  parse_tensor(c, tensor);
  return tensor;
}

std::vector<std::byte> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(fmt::format("cannot open ONNX file '{}'", path.string()));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) throw ParseError(fmt::format("cannot determine the size of '{}'", path.string()));
  // Protobuf messages are limited to 2 GiB; a larger file is not a single ONNX message.
  if (size > std::streamoff{std::numeric_limits<int32_t>::max()})
    throw ParseError(
        fmt::format("'{}' is {} bytes, more than a protobuf message can hold (2 GiB)", path.string(), size));
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw ParseError(fmt::format("cannot read '{}'", path.string()));
  return bytes;
}

namespace {
template <class F> auto with_file_context(const std::filesystem::path& path, F&& parse) {
  const auto bytes = read_file_bytes(path);
  try {
    return parse(std::span<const std::byte>(bytes));
  } catch (const ParseError& e) {
    if (e.message_path().empty()) throw ParseError(fmt::format("{} (file '{}')", e.reason(), path.string()));
    throw ParseError(e.message_path(), e.field(), e.offset(), fmt::format("{} (file '{}')", e.reason(), path.string()));
  }
}
}  // namespace

ModelProto read_model_file(const std::filesystem::path& path) { return with_file_context(path, read_model); }
TensorProto read_tensor_file(const std::filesystem::path& path) { return with_file_context(path, read_tensor); }

int64_t element_count(const TensorProto& tensor) {
  int64_t count = 1;
  for (auto d : tensor.dims) {
    if (d < 0) throw ParseError(fmt::format("tensor '{}' has negative dimension {}", tensor.name, d));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      throw ParseError(fmt::format("tensor '{}' has more elements than int64 can count", tensor.name));
    count *= d;
  }
  return count;
}

const char* to_string(DataType type) noexcept {
  switch (type) {
    case DataType::undefined: return "undefined";
    case DataType::float32: return "float32";
    case DataType::uint8: return "uint8";
    case DataType::int8: return "int8";
    case DataType::uint16: return "uint16";
    case DataType::int16: return "int16";
    case DataType::int32: return "int32";
    case DataType::int64: return "int64";
    case DataType::string: return "string";
    case DataType::boolean: return "bool";
    case DataType::float16: return "float16";
    case DataType::float64: return "float64";
    case DataType::uint32: return "uint32";
    case DataType::uint64: return "uint64";
    case DataType::complex64: return "complex64";
    case DataType::complex128: return "complex128";
    case DataType::bfloat16: return "bfloat16";
    case DataType::float8e4m3fn: return "float8e4m3fn";
    case DataType::float8e4m3fnuz: return "float8e4m3fnuz";
    case DataType::float8e5m2: return "float8e5m2";
    case DataType::float8e5m2fnuz: return "float8e5m2fnuz";
    case DataType::uint4: return "uint4";
    case DataType::int4: return "int4";
    case DataType::float4e2m1: return "float4e2m1";
  }
  return "unknown";
}

}  // namespace rknnxx::host::onnx
