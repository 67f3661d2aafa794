#pragma once
// An ONNX graph made ready to plan: names resolved to value ids, initializers and Constant
// nodes folded to constant tensors, every node bound to its registered operator, nodes in
// topological order, and nodes that no graph output depends on removed.

#include "onnx_model.hpp"
#include "tensor.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rknnxx::host {

struct OpDefinition;

using ValueId = int32_t;
inline constexpr ValueId no_value = -1;  // an omitted optional input

// Opsets before 9 are accepted where the engine implements the operators' forms of that opset,
// and opsets 18 to 21 where it implements the forms those opsets changed (legacy_opsets.hpp;
// docs/conformance.md, "Opsets 18 to 21").
inline constexpr int64_t min_opset = 1;
inline constexpr int64_t max_opset = 21;

struct Value {
  std::string name;
  DataType dtype = DataType::undefined;  // declared (graph input/output, value_info) or of the constant
  bool has_declared_shape = false;
  std::vector<onnx::Dimension> declared_shape;
  int32_t producer = -1;  // index into Graph::nodes(), -1 for inputs and constants
};

// An operator type the engine lacks that a model may still hold: its nodes are planned from the
// types and shapes the model declares for their outputs and run by the session's custom-op runner
// (Session::set_custom_op_runner; the runtime's rknn_register_custom_ops, docs/custom-operators.md).
// The conversion config's custom_ops entries are of this type.
using CustomOpType = toolkit::CustomOpType;

// The names a subgraph reads from enclosing scopes: read by its nodes (or its nested subgraphs) and
// defined neither by its inputs, initializers or Constant/other nodes; in first-use order, once each.
std::vector<std::string> subgraph_free_names(const onnx::GraphProto& graph);

// ONNX's default operator set: named by "" or "ai.onnx". A Graph's nodes carry "" for it.
bool is_default_domain(std::string_view domain);

// What Graph::fuse_for_inference fuses after a Conv: one Relu or Clip, or the whole element-wise chain.
enum class FusionScope { clamp, all };

// The integers a value's elements are known to be (docs/quantization.md#integer-kernels): every element
// is `scale[i] * (q - zero_point[i])` computed in double and rounded to float32 (AffineParams::dequantize),
// q an integer in [min, max], i its index along `axis` (one entry: the whole tensor). A promise made by
// whoever sets it (quantize::QuantizedSession, whose step observer rounds every such value before it is
// read): a kernel may compute on the integers q instead of the floats, with the same results up to the
// float sums' rounding.
struct IntegerGrid {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;  // as many as scale
  int64_t axis = 0;
  int32_t min = -128;
  int32_t max = 127;

  // One grid for the whole tensor, of int8 integers (an activation's in a w8a8 model): what the integer kernels
  // read as bytes and the byte lookup of element-wise chains writes.
  bool tensor_wide_int8() const noexcept {
    return scale.size() == 1 && zero_point.size() == 1 && min >= -128 && max <= 127 && zero_point[0] >= -128 &&
        zero_point[0] <= 127 && std::isfinite(scale[0]) && scale[0] > 0.0f;
  }
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<ValueId> inputs;  // no_value for an omitted optional input
  // The last `captured_inputs` of `inputs` are the outer-scope values the node's subgraphs (If,
  // Loop, Scan) read by name: their names are the subgraphs' free names (subgraph_free_names).
  std::size_t captured_inputs = 0;
  std::vector<ValueId> outputs;  // no_value for an omitted optional output
  std::vector<onnx::AttributeProto> attributes;
  const OpDefinition* op = nullptr;  // nullptr for a custom operator
  bool custom = false;               // of a type Graph was given as custom: no OpDefinition

  // "node 'conv1' (Conv)" for messages.
  std::string label() const;
  const onnx::AttributeProto* attribute(std::string_view attribute_name) const;
};

class Graph {
public:
  // Throws EngineError for an opset outside [min_opset, max_opset], unsupported operators or
  // operator forms of an older opset (legacy_opsets.hpp),
  // dangling names, duplicate outputs and cycles, naming the node and operator. Nodes of the
  // `custom_ops` types are kept as custom nodes (Node::custom); a listed type the engine implements
  // is refused, as its nodes would be ambiguous.
  explicit Graph(const onnx::ModelProto& model, std::span<const CustomOpType> custom_ops = {});

  int64_t opset() const noexcept { return opset_; }
  std::span<const Value> values() const noexcept { return values_; }
  const Value& value(ValueId id) const { return values_.at(static_cast<std::size_t>(id)); }
  std::span<const Node> nodes() const noexcept { return nodes_; }
  std::span<const ValueId> inputs() const noexcept { return inputs_; }  // initializers excluded
  std::span<const ValueId> outputs() const noexcept { return outputs_; }
  // The constant tensor of a value, or nullptr when it is computed or an input.
  const Tensor* constant(ValueId id) const;
  std::optional<ValueId> find(std::string_view name) const;
  // Replaces the value of a constant with one of the same type and shape (the quantizer stores
  // weights quantized and dequantized, docs/quantization.md). Sessions made before keep the old
  // value. Throws EngineError naming the value when it is not a constant or the type or shape differs.
  void replace_constant(ValueId id, Tensor tensor);

  // The integer grid of a value (IntegerGrid), or nullptr when none is known. Set before a session plans
  // the graph (its kernels read it while planning); replace_constant forgets a constant's grid.
  void set_integer_grid(ValueId id, IntegerGrid grid);
  const IntegerGrid* integer_grid(ValueId id) const;

  // The bytes the constants that nodes and outputs use take when placed one after another,
  // each at an `alignment` boundary (what place_constants needs).
  std::size_t constant_bytes(std::size_t alignment) const;
  // Copies those constants into `memory` and keeps them there (rknn_set_weight_mem); the
  // memory must outlive the graph's use. Plans made before hold the old addresses.
  void place_constants(std::span<std::byte> memory, std::size_t alignment);

  // Plan-independent rewrites: BatchNormalization folded into a preceding Conv, then the
  // element-wise chain after a Conv fused into it (fusion.cpp; FusionScope::clamp: one Relu or
  // Clip only, the quantizer's view of the graph). Keeps the graph's observable results.
  void fuse_for_inference(FusionScope scope = FusionScope::all);

private:
  ValueId add_value(std::string name);
  ValueId add_constant(std::string name, Tensor tensor);
  // Orders nodes topologically (throws naming a node on a cycle) and drops dead nodes.
  void sort_and_prune();
  // Ids of the constants the nodes and outputs use, ascending.
  std::vector<ValueId> used_constants() const;

  int64_t opset_ = 0;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> by_name_;
  std::unordered_map<ValueId, Tensor> constants_;
  std::unordered_map<ValueId, IntegerGrid> grids_;
};

}  // namespace rknnxx::host
