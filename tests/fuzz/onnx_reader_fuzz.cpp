// libFuzzer target for the ONNX wire-format reader: any input either parses or throws
// ParseError. Anything else (a crash, a sanitizer report, another exception such as
// std::bad_alloc from an absurd allocation) is a bug. Run with tests/fuzz/run.sh.

#include "engine/onnx_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace onnx = rknnxx::host::onnx;

namespace {

// Touches what a parse produced so that a dangling or short buffer shows under ASan.
std::size_t touch(const onnx::TensorProto& t) {
  std::size_t sum = t.name.size() + t.raw_data.size() + t.float_data.size() + t.int32_data.size() +
      t.int64_data.size() + t.double_data.size() + t.uint64_data.size() + t.string_data.size();
  (void)onnx::element_count(t);  // checked by the reader: must not throw for a parsed tensor
  return sum;
}

std::size_t touch(const onnx::GraphProto& g) {
  std::size_t sum = g.name.size();
  for (const auto& n : g.node) {
    sum += n.input.size() + n.output.size() + n.op_type.size();
    for (const auto& a : n.attribute) {
      sum += a.name.size() + a.ints.size() + a.floats.size() + a.strings.size();
      for (const auto& t : a.t) sum += touch(t);
      for (const auto& t : a.tensors) sum += touch(t);
      for (const auto& sub : a.g) sum += touch(sub);
      for (const auto& sub : a.graphs) sum += touch(sub);
    }
  }
  for (const auto& t : g.initializer) sum += touch(t);
  for (const auto* values : {&g.input, &g.output, &g.value_info})
    for (const auto& v : *values) sum += v.name.size() + v.shape.size();
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  volatile std::size_t sink = 0;
  try {
    sink = sink + touch(onnx::read_model(bytes).graph);
  } catch (const onnx::ParseError&) {}
  try {
    sink = sink + touch(onnx::read_tensor(bytes));
  } catch (const onnx::ParseError&) {}
  return 0;
}
