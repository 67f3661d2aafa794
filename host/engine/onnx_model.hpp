#pragma once
// The ONNX protobuf messages the host engine reads, as plain C++ values.
// Only the fields the engine uses are kept; field numbers live in onnx_reader.cpp.
// The reader fills these and checks wire-level validity; graph-level checks
// (dangling names, cycles, shapes) belong to the graph builder.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rknnxx::host::onnx {

// TensorProto.DataType values (onnx.proto).
enum class DataType : int32_t {
  undefined = 0,
  float32 = 1,
  uint8 = 2,
  int8 = 3,
  uint16 = 4,
  int16 = 5,
  int32 = 6,
  int64 = 7,
  string = 8,
  boolean = 9,
  float16 = 10,
  float64 = 11,
  uint32 = 12,
  uint64 = 13,
  complex64 = 14,
  complex128 = 15,
  bfloat16 = 16,
  // Added with opsets 19 to 23; the engine has no element of these types and refuses them by name.
  float8e4m3fn = 17,
  float8e4m3fnuz = 18,
  float8e5m2 = 19,
  float8e5m2fnuz = 20,
  uint4 = 21,
  int4 = 22,
  float4e2m1 = 23,
};

// Bytes per element of the fixed-size types; 0 for string and undefined.
constexpr std::size_t bytes_per_element(DataType type) noexcept {
  switch (type) {
    case DataType::uint8:
    case DataType::int8:
    case DataType::boolean: return 1;
    case DataType::uint16:
    case DataType::int16:
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::float32:
    case DataType::int32:
    case DataType::uint32: return 4;
    case DataType::int64:
    case DataType::float64:
    case DataType::uint64:
    case DataType::complex64: return 8;
    case DataType::complex128: return 16;
    default: return 0;
  }
}

struct TensorProto {
  std::string name;
  DataType data_type = DataType::undefined;
  std::vector<int64_t> dims;
  // Exactly one of these holds the data, as in the file. raw_data is little-endian bytes.
  std::string raw_data;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;  // also int8/int16/uint8/uint16/bool/float16 (as bits)
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;  // also uint32
  std::vector<std::string> string_data;
  bool has_external_data = false;  // external data is refused with a clear error
};

struct Dimension {
  bool has_value = false;  // dim_value set; otherwise dim_param (symbolic) or unknown
  int64_t value = 0;
  std::string param;
};

// Which member of TypeProto's oneof a value has; the engine runs only tensors.
enum class TypeKind : int32_t { none = 0, tensor, sequence, map, optional, sparse_tensor, other };

struct ValueInfoProto {
  std::string name;
  TypeKind kind = TypeKind::none;
  DataType elem_type = DataType::undefined;  // tensor and sparse_tensor only
  bool has_shape = false;
  std::vector<Dimension> shape;
};

struct GraphProto;

struct AttributeProto {
  enum class Type : int32_t {
    undefined = 0,
    float_ = 1,
    int_ = 2,
    string = 3,
    tensor = 4,
    graph = 5,
    floats = 6,
    ints = 7,
    strings = 8,
    tensors = 9,
    graphs = 10,
  };
  std::string name;
  Type type = Type::undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<TensorProto> t;  // 0 or 1 element (a vector keeps the struct copyable and simple)
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorProto> tensors;
  std::vector<GraphProto> graphs;  // subgraphs (If/Loop bodies): parsed, refused by the engine
  std::vector<GraphProto> g;       // 0 or 1 element: the GRAPH attribute value
  std::string ref_attr_name;       // set inside functions only; the engine refuses it
};

struct NodeProto {
  std::vector<std::string> input;  // "" marks an omitted optional input
  std::vector<std::string> output;
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<AttributeProto> attribute;
};

struct GraphProto {
  std::string name;
  std::vector<NodeProto> node;
  std::vector<TensorProto> initializer;
  std::vector<ValueInfoProto> input;
  std::vector<ValueInfoProto> output;
  std::vector<ValueInfoProto> value_info;
};

struct OperatorSetId {
  std::string domain;  // "" or "ai.onnx" is the default domain
  int64_t version = 0;
};

struct ModelProto {
  int64_t ir_version = 0;
  std::vector<OperatorSetId> opset_import;
  std::string producer_name;
  std::string producer_version;
  GraphProto graph;
};

}  // namespace rknnxx::host::onnx
