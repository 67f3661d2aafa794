#pragma once
// The custom operators of one context (rknn_register_custom_ops, docs/custom-operators.md): the
// registered rknn_custom_op structs, and per custom node of the model the rknn_custom_op_context
// its callbacks see. The context's session runs custom nodes through run(): init at a node's first
// run, prepare whenever its input shapes differ from the last prepared ones, compute on every run,
// all on the calling thread; destroy for every initialized node when the context is destroyed.

#include <rknnxx/abi/c_custom_op.h>

#include "../engine/graph.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace rknnxx::host {

struct KernelContext;

class CustomOps {
public:
  CustomOps();
  ~CustomOps();  // calls destroy for every node whose init succeeded
  CustomOps(const CustomOps&) = delete;
  CustomOps& operator=(const CustomOps&) = delete;

  // Checks every entry (CPU target, op_type set and terminated, compute set, no op_type registered
  // twice) before keeping any: ApiError(RKNN_ERR_PARAM_INVALID) naming the entry and the field.
  void add(std::span<const rknn_custom_op> ops);
  // Before a run: every custom node of `graph` has a registered op, else
  // ApiError(RKNN_ERR_MODEL_INVALID) naming the node and its op type.
  void require_registered(const Graph& graph) const;
  // The session's custom-op runner for the node of `graph` (Session::set_custom_op_runner). A
  // callback that fails ends the run with ApiError naming the callback and what it returned.
  void run(const Graph& graph, const Node& node, KernelContext& kernel);

  // rknn_custom_op_get_op_attr: the attribute `name` of the node behind `op_ctx`, as the ONNX node
  // holds it (docs/custom-operators.md#attributes); n_elems 0 (data NULL) for a name the node lacks.
  // An op_ctx that is not one a live context handed to a callback is logged and answered with n_elems 0.
  static void get_attr(const rknn_custom_op_context* op_ctx, const char* name, rknn_custom_op_attr* attr) noexcept;

private:
  struct NodeState;
  [[nodiscard]] const rknn_custom_op* find(std::string_view op_type) const;

  std::vector<std::unique_ptr<rknn_custom_op>> ops_;  // stable addresses: node states point at them
  std::vector<std::unique_ptr<NodeState>> nodes_;     // by node index in the graph, created at first run
};

}  // namespace rknnxx::host
