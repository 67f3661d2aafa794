#pragma once
// Reads serialized ONNX protobuf messages (ModelProto, TensorProto) into the plain
// structs of onnx_model.hpp. A small wire-format reader of our own rather than
// libprotobuf: the host runtime (and its aarch64 build) needs no protobuf library,
// and the parser is our code, fuzzed as such (tests/fuzz/onnx_reader_fuzz.cpp).
//
// Every length is checked against the bytes that remain, nesting is bounded, and
// any truncated or corrupt input throws ParseError naming the message, the field
// and the byte offset; the reader never reads out of bounds and never allocates
// more than a small multiple of the input size.

#include "onnx_model.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace rknnxx::host::onnx {

class ParseError : public std::runtime_error {
public:
  // what() reads e.g. "ONNX parse error in ModelProto.graph > GraphProto.node >
  // NodeProto.attribute > AttributeProto.t > TensorProto.raw_data (field 9) at byte 1234:
  // length 4096 exceeds the 12 bytes that remain".
  ParseError(std::string message_path, std::string field, std::size_t offset, const std::string& reason);
  // For failures outside the wire format (unreadable file).
  explicit ParseError(const std::string& reason);

  const std::string& message_path() const noexcept { return message_path_; }  // "ModelProto.graph > GraphProto"
  const std::string& field() const noexcept { return field_; }                // "node (field 1)"
  std::size_t offset() const noexcept { return offset_; }                     // from the start of the input
  const std::string& reason() const noexcept { return reason_; }              // what() without the location

private:
  std::string message_path_;
  std::string field_;
  std::size_t offset_ = 0;
  std::string reason_;
};

// Nested messages deeper than this are refused (subgraph in attribute in node in graph ...).
inline constexpr int max_nesting_depth = 64;

ModelProto read_model(std::span<const std::byte> bytes);
TensorProto read_tensor(std::span<const std::byte> bytes);

// Reads a whole file (model.onnx, or a serialized TensorProto such as test_data_set_0/input_0.pb).
// An unreadable file throws ParseError naming the path.
std::vector<std::byte> read_file_bytes(const std::filesystem::path& path);
ModelProto read_model_file(const std::filesystem::path& path);
TensorProto read_tensor_file(const std::filesystem::path& path);

// Number of elements a tensor's dims describe (1 for a scalar); throws ParseError on overflow.
int64_t element_count(const TensorProto& tensor);

// "float32", "int64", ... for messages.
const char* to_string(DataType type) noexcept;

}  // namespace rknnxx::host::onnx
