#pragma once
// The operator registry. An operator is one self-contained .cpp file in host/engine/ops/:
// a prepare function that checks the node, infers its output types and shapes from the input
// types and shapes (and constant inputs), and returns the kernel to run, registered with
//
//   namespace { const OpRegistrar relu{"Relu", prepare_relu}; }
//
// (the engine library is linked whole, so the registrar's constructor always runs).
// Inputs whose values are all constant at plan time are folded: the planner runs the kernel
// once while planning and its outputs become constants, so shape subgraphs
// (Shape -> Gather -> Concat -> Reshape) cost nothing per run.

#include "engine_error.hpp"
#include "float16.hpp"
#include "graph.hpp"
#include "tensor.hpp"
#include "thread_pool.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::host {

struct BlockedPorts;  // blocked_layout.hpp

// Rounds a float32 value as it is stored: to float16 (float16 activations) and then by the session's element-wise
// rounding (Session::set_output_rounding: a quantized grid), the same whoever applies it, in any pieces.
// Then, when the value is the input of a step its producer runs (docs/runtime-extensions.md, "Steps run by their
// producer"), `then` runs that step on each piece as stored, while in cache.
struct OutputFinish {
  bool to_half = false;
  const std::function<void(ValueId, std::span<float>)>* rounding = nullptr;
  ValueId id = no_value;  // the value, for `rounding`
  // The piece as stored; `then` may round it itself when `rounding` is left empty (OutputRoundingWithLookup).
  const std::function<void(float*, std::size_t)>* then = nullptr;

  explicit operator bool() const noexcept { return to_half || rounding != nullptr || then != nullptr; }
  void operator()(float* data, std::size_t count) const {
    if (to_half) round_to_half(data, count);
    if (rounding != nullptr) (*rounding)(id, std::span<float>(data, count));
    if (then != nullptr) (*then)(data, count);
  }
};

// The most values a kernel writes before it rounds them as stored (KernelContext::finish_output): 16 KiB, so that
// they are still in the first-level cache for the rounding and whatever reads them then (OutputFinish::then). A
// thread's share of a loop is far larger (all of it on one thread).
inline constexpr int64_t finish_piece = 4096;

// What a kernel sees when it runs. Inputs and outputs are views with the planned shapes;
// outputs live in the session's arena and hold garbage on entry.
struct KernelContext {
  std::span<const Tensor* const> inputs;  // nullptr for an omitted optional input
  std::span<Tensor* const> outputs;       // nullptr for an omitted optional output
  ThreadPool& pool;
  std::byte* scratch;  // PreparedOp::scratch_bytes, 64-byte aligned, only for this call
  // Output 0 is rounded as it is stored and this kernel said it does that itself (PreparedOp::finishes_output):
  // apply it to each part as it is written, while in cache, instead of the session's pass over the whole output
  // afterwards. Empty when there is nothing to round.
  OutputFinish finish_output{};

  const Tensor& input(std::size_t i) const { return *inputs[i]; }
  const Tensor* optional_input(std::size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Tensor& output(std::size_t i) const { return *outputs[i]; }
};

using Kernel = std::function<void(KernelContext&)>;

// An element-wise float32 operator's arithmetic on a piece of its output 0: `count` values from the same piece of
// each input that has the output's size, and from the one value of each input that has one (`inputs[i]` points at
// either; nullptr for an omitted optional input). The session runs chains of such operators piece by piece
// (elementwise_chain.hpp); it must compute what the kernel computes, value for value.
using ElementwiseTile = std::function<void(std::span<const float* const> inputs, float* out, int64_t count)>;

// The most inputs of an operator whose tile the session runs (Clip has three).
inline constexpr std::size_t max_tile_inputs = 8;

struct PreparedOp {
  std::vector<TensorInfo> outputs;  // one per node output (omitted outputs too: give any info)
  Kernel kernel;
  std::size_t scratch_bytes = 0;
  // The kernel applies KernelContext::finish_output to every element of its float32 output 0 it stores, padding
  // of a kept layout included (blocked_layout.hpp).
  bool finishes_output = false;
  // When not empty (one per output): the outputs are known while planning and no kernel runs
  // (e.g. Shape). `kernel` may then be empty.
  std::vector<Tensor> constant_outputs;
  // The output shapes depend on input values that are not constant while planning (NonZero of a
  // computed tensor, NonMaxSuppression, TopK with a computed k; docs/conformance.md#run-time-shapes):
  // `outputs` are then upper bounds (a negative dimension: no bound known), `kernel` is not used,
  // and the session prepares the node again when it runs, with every input known, and computes it
  // as it folds constants. The nodes downstream of it are prepared at run time the same way.
  bool shape_from_data = false;
  // Output 0 is input 0's bytes unchanged (Reshape and its kin): the session may store it in input 0's memory
  // and skip the kernel (Session, "aliases").
  bool aliases_input = false;
  // A oneDNN Conv's offer to keep its input or output in oneDNN's layout (blocked_layout.hpp).
  std::shared_ptr<const BlockedPorts> blocked;
  // Set by an element-wise float32 operator whose output has the shape of each input but those of one element
  // (elementwise_chain.hpp): the kernel's arithmetic on a piece.
  ElementwiseTile tile;
};

// The PreparedOp of a node whose output shapes are decided by data: `bounds` are the largest
// shapes the outputs can take (bounded by the node's input sizes).
inline PreparedOp run_time_shaped(std::vector<TensorInfo> bounds) {
  PreparedOp op;
  op.outputs = std::move(bounds);
  op.shape_from_data = true;
  return op;
}

// The PreparedOp of a node whose outputs are computed while planning (Shape, Range, NonZero of a
// constant, a Loop run to its end, ...): the values themselves, no kernel.
inline PreparedOp constant_result(std::vector<Tensor> values) {
  PreparedOp op;
  for (const Tensor& value : values) {
    op.outputs.push_back(value.info());
  }
  op.constant_outputs = std::move(values);
  return op;
}

inline PreparedOp constant_result(Tensor value) {
  std::vector<Tensor> values;
  values.push_back(std::move(value));
  return constant_result(std::move(values));
}

// What prepare sees: the node, its attributes, and the types, shapes and constant values of
// its inputs. Every error goes through fail(), which names the node and operator.
class OpContext {
public:
  OpContext(const Graph& graph, const Node& node, std::span<const TensorInfo* const> inputs,
            std::span<const Tensor* const> constants, std::size_t threads)
      : graph_(graph), node_(node), opset_(graph.opset()), inputs_(inputs), constants_(constants), threads_(threads) {}

  const Node& node() const noexcept { return node_; }
  int64_t opset() const noexcept { return opset_; }
  std::size_t threads() const noexcept { return threads_; }

  std::size_t input_count() const noexcept { return inputs_.size(); }
  bool has_input(std::size_t i) const noexcept { return i < inputs_.size() && inputs_[i] != nullptr; }
  const TensorInfo& input(std::size_t i) const;
  // The input's value when it is constant while planning, else nullptr.
  const Tensor* constant(std::size_t i) const noexcept { return has_input(i) ? constants_[i] : nullptr; }
  // The integer grid of the value feeding input i (Graph::integer_grid), or nullptr.
  const IntegerGrid* input_grid(std::size_t i) const {
    return has_input(i) ? graph_.integer_grid(node_.inputs[i]) : nullptr;
  }
  // The name of the value feeding input i ("" when omitted), for messages.
  std::string_view input_name(std::size_t i) const;
  std::size_t output_count() const noexcept { return node_.outputs.size(); }
  bool has_output(std::size_t i) const noexcept { return i < node_.outputs.size() && node_.outputs[i] != no_value; }

  // Input count within [min, max]; input types among `types`.
  void expect_inputs(std::size_t min, std::size_t max) const;
  void expect_dtype(std::size_t i, std::initializer_list<DataType> types) const;
  // Input i must be a constant (e.g. weights of a fused op); returns it.
  const Tensor& expect_constant(std::size_t i) const;

  const onnx::AttributeProto* attribute(std::string_view name) const { return node_.attribute(name); }
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, std::string_view fallback) const;
  std::vector<int64_t> attr_ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(std::string_view name, std::vector<float> fallback = {}) const;
  std::optional<Tensor> attr_tensor(std::string_view name) const;

  // Normalizes a possibly negative axis against `rank`; fails when out of range.
  int64_t normalize_axis(int64_t axis, int64_t rank) const;

  [[noreturn]] void fail(std::string_view message) const;
  template <class... Args> [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    fail(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
  }

private:
  const onnx::AttributeProto& typed_attribute(std::string_view name, onnx::AttributeProto::Type type) const;

  const Graph& graph_;
  const Node& node_;
  int64_t opset_;
  std::span<const TensorInfo* const> inputs_;
  std::span<const Tensor* const> constants_;
  std::size_t threads_;
};

using PrepareFunction = PreparedOp (*)(OpContext&);

struct OpDefinition {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  PrepareFunction prepare = nullptr;
  // Each float32 output value is one of the float32 input values, moved (Reshape, Transpose, Concat, Slice,
  // ...): with float16 activation storage its outputs need no rounding when every float32 input is a float16
  // value already (the session's rule).
  bool moves_values = false;
};

// OpRegistrar's mark of an operator that only moves values (OpDefinition::moves_values).
inline constexpr struct MovesValues {
} moves_values;

class OpRegistry {
public:
  static OpRegistry& instance();
  // Aborts on a second registration of the same operator: a build mistake every test run shows.
  void add(OpDefinition definition);
  const OpDefinition* find(std::string_view domain, std::string_view op_type) const;
  std::vector<std::string> op_types() const;

private:
  std::vector<std::unique_ptr<OpDefinition>> definitions_;
};

// Why the engine refuses an operator by design, or "" when it is not one of them: training
// operators (losses, optimizers, the ai.onnx.preview.training domain), string operators, sequence
// and optional values, and random generators have no place in an inference engine planned ahead
// of running. `domain` as in the model ("" or "ai.onnx" for the standard one).
std::string_view excluded_operator_reason(std::string_view domain, std::string_view op_type) noexcept;

struct OpRegistrar {
  OpRegistrar(std::string_view op_type, PrepareFunction prepare, std::string_view domain = "");
  OpRegistrar(std::string_view op_type, PrepareFunction prepare, MovesValues);
};

}  // namespace rknnxx::host
