#include "custom_ops.hpp"

#include "api_error.hpp"
#include "c_string.hpp"
#include "tensor_codec.hpp"

#include "../engine/engine_error.hpp"
#include "../engine/op_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_set>

namespace rknnxx::host {

namespace {

// One attribute of a custom node as rknn_custom_op_get_op_attr hands it out
// (docs/custom-operators.md#attributes).
struct OpAttr {
  std::string name;
  rknn_tensor_type dtype = RKNN_TENSOR_FLOAT32;
  uint32_t n_elems = 0;
  std::vector<std::byte> data;  // operator new's alignment: enough for int64 and float reads
};

// The element type a custom op sees for an engine tensor: the engine's own (no model-level
// float16 or int8 view applies between operators).
rknn_tensor_type tensor_type_of(DataType dtype) {
  if (const auto type = rknn_type_of(dtype)) return *type;
  fail(RKNN_ERR_FAIL, "element type {} has no rknn_tensor_type", dtype_name(dtype));
}

template <class T> OpAttr values_attr(std::string name, rknn_tensor_type dtype, std::span<const T> values) {
  OpAttr a{std::move(name), dtype, 0, {}};
  if (values.size() > std::numeric_limits<uint32_t>::max()) return a;  // n_elems cannot say it: none
  a.n_elems = static_cast<uint32_t>(values.size());
  a.data.resize(values.size_bytes());
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), values.size_bytes());
  return a;
}

// INT and INTS as INT64, FLOAT and FLOATS as FLOAT32, STRING as its UINT8 bytes (NUL-terminated,
// the NUL not counted), TENSOR as its elements; other kinds (graphs, lists of strings or tensors)
// have no form in rknn_custom_op_attr and are reported with n_elems 0.
OpAttr op_attr(const onnx::AttributeProto& a) {
  using T = onnx::AttributeProto::Type;
  switch (a.type) {
    case T::int_: return values_attr<int64_t>(a.name, RKNN_TENSOR_INT64, {&a.i, 1});
    case T::ints: return values_attr<int64_t>(a.name, RKNN_TENSOR_INT64, a.ints);
    case T::float_: return values_attr<float>(a.name, RKNN_TENSOR_FLOAT32, {&a.f, 1});
    case T::floats: return values_attr<float>(a.name, RKNN_TENSOR_FLOAT32, a.floats);
    case T::string: {
      OpAttr s = values_attr<char>(a.name, RKNN_TENSOR_UINT8, a.s);
      s.data.push_back(std::byte{0});
      return s;
    }
    case T::tensor:
      if (!a.t.empty()) {
        try {
          const Tensor t = tensor_from_proto(a.t.front());
          OpAttr values = values_attr<std::byte>(a.name, tensor_type_of(t.dtype()), {t.raw(), t.bytes()});
          values.n_elems = static_cast<uint64_t>(t.elements()) <= std::numeric_limits<uint32_t>::max()
              ? static_cast<uint32_t>(t.elements())
              : 0;  // n_elems counts elements, not bytes; too many: none
          return values;
        } catch (const std::exception&) {
          break;  // an element type the engine does not hold: no form
        }
      }
      break;
    default: break;
  }
  return OpAttr{a.name, RKNN_TENSOR_FLOAT32, 0, {}};
}

// Copies text into a fixed char array, cut to fit, NUL-terminated.
std::string_view op_type_of(const rknn_custom_op& op) { return {op.op_type, strnlen(op.op_type, sizeof op.op_type)}; }

}  // namespace

struct CustomOps::NodeState {
  rknn_custom_op_context context{};  // what the callbacks see; internal_ctx points back here
  const rknn_custom_op* op = nullptr;
  std::vector<OpAttr> attrs;
  bool initialized = false;
  bool prepared = false;
  std::vector<std::vector<int64_t>> prepared_shapes;  // the input shapes prepare last saw
};

namespace {

// The node states alive in the process: rknn_custom_op_get_op_attr accepts only these, so a stale or
// made-up op_ctx is an error and not a wild read.
std::mutex live_mutex;
std::unordered_set<const void*> live_nodes;

}  // namespace

CustomOps::CustomOps() = default;

CustomOps::~CustomOps() {
  for (auto& node : nodes_) {
    if (!node) continue;
    if (node->initialized && node->op->destroy != nullptr) {
      const int status = node->op->destroy(&node->context);
      if (status != RKNN_SUCC)
        log_warning("rknn_destroy: custom operator {}: destroy returned {}", op_type_of(*node->op), status);
    }
    const std::lock_guard lock(live_mutex);
    live_nodes.erase(node.get());
  }
}

const rknn_custom_op* CustomOps::find(std::string_view op_type) const {
  for (const auto& op : ops_)
    if (op_type_of(*op) == op_type) return op.get();
  return nullptr;
}

void CustomOps::add(std::span<const rknn_custom_op> ops) {
  if (ops.empty()) fail(RKNN_ERR_PARAM_INVALID, "custom_op_num is 0: give at least one rknn_custom_op");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const rknn_custom_op& op = ops[i];
    const auto refuse = [&](std::string_view why) {
      fail(RKNN_ERR_PARAM_INVALID, "op[{}] ('{}'): {}", i, op_type_of(op).substr(0, 64), why);
    };
    if (op_type_of(op).empty()) refuse("op_type is empty");
    if (op_type_of(op).size() == sizeof op.op_type) refuse("op_type is not NUL-terminated within its 256 bytes");
    if (op.target != RKNN_TARGET_TYPE_CPU)
      refuse(fmt::format("target is {}; the host runtime runs custom operators on the CPU only "
                         "(RKNN_TARGET_TYPE_CPU, {})",
                         static_cast<int>(op.target), static_cast<int>(RKNN_TARGET_TYPE_CPU)));
    if (op.compute == nullptr) refuse("compute is NULL");
    if (find(op_type_of(op)) != nullptr) refuse("this op_type is already registered on the context");
    for (std::size_t j = 0; j < i; ++j)
      if (op_type_of(ops[j]) == op_type_of(op)) refuse(fmt::format("op[{}] has the same op_type", j));
  }
  for (const rknn_custom_op& op : ops) ops_.push_back(std::make_unique<rknn_custom_op>(op));
}

void CustomOps::require_registered(const Graph& graph) const {
  for (const Node& node : graph.nodes())
    if (node.custom && find(node.op_type) == nullptr)
      fail(RKNN_ERR_MODEL_INVALID,
           "{}: custom operator {}{} is not registered: call rknn_register_custom_ops with an "
           "rknn_custom_op whose op_type is '{}' before rknn_run",
           node.label(), node.domain.empty() ? "" : node.domain + ".", node.op_type, node.op_type);
}

namespace {

// The rknn_custom_op_tensor of one engine tensor (a zeroed one, with no data, for an omitted optional one).
rknn_custom_op_tensor describe(const Tensor* tensor, uint32_t index, std::string_view name) {
  rknn_custom_op_tensor t{};
  t.attr.index = index;
  t.mem.fd = -1;
  copy_c_string(t.attr.name, name);
  if (tensor == nullptr) return t;
  const auto& shape = tensor->shape();
  if (shape.size() > RKNN_MAX_DIMS)
    fail(RKNN_ERR_FAIL, "tensor '{}' has rank {}; rknn_tensor_attr holds at most {} dims", name, shape.size(),
         RKNN_MAX_DIMS);
  const std::size_t bytes = tensor->bytes();
  const auto elements = static_cast<uint64_t>(tensor->elements());
  if (bytes > std::numeric_limits<uint32_t>::max() || elements > std::numeric_limits<uint32_t>::max())
    fail(RKNN_ERR_FAIL, "tensor '{}' has {} bytes; rknn_tensor_attr's sizes are 32-bit", name, bytes);
  t.attr.n_dims = static_cast<uint32_t>(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > std::numeric_limits<uint32_t>::max())
      fail(RKNN_ERR_FAIL, "tensor '{}' has the extent {}; rknn_tensor_attr's dims are 32-bit", name, shape[d]);
    t.attr.dims[d] = static_cast<uint32_t>(shape[d]);
  }
  t.attr.n_elems = static_cast<uint32_t>(elements);
  t.attr.size = static_cast<uint32_t>(bytes);
  t.attr.size_with_stride = t.attr.size;
  t.attr.fmt = shape.size() == 4 ? RKNN_TENSOR_NCHW : RKNN_TENSOR_UNDEFINED;  // the ONNX order, dense
  t.attr.type = tensor_type_of(tensor->dtype());
  t.attr.qnt_type = RKNN_TENSOR_QNT_NONE;
  t.attr.scale = 1.0f;
  t.mem.virt_addr = const_cast<std::byte*>(tensor->raw());  // inputs too: the C struct has no const
  t.mem.size = t.attr.size;
  return t;
}

}  // namespace

void CustomOps::run(const Graph& graph, const Node& node, KernelContext& kernel) {
  const auto index = static_cast<std::size_t>(&node - graph.nodes().data());
  if (index >= graph.nodes().size()) fail(RKNN_ERR_FAIL, "{}: not a node of the context's graph", node.label());
  if (nodes_.size() < graph.nodes().size()) nodes_.resize(graph.nodes().size());
  std::unique_ptr<NodeState>& state = nodes_[index];
  if (!state) {
    const rknn_custom_op* op = find(node.op_type);
    if (op == nullptr) require_registered(graph);  // names this node (run() checks before, this is a backstop)
    state = std::make_unique<NodeState>();
    state->op = op;
    state->context.target = RKNN_TARGET_TYPE_CPU;
    state->context.internal_ctx =
        static_cast<rknn_custom_op_interal_context>(reinterpret_cast<std::uintptr_t>(state.get()));
    for (const auto& a : node.attributes) state->attrs.push_back(op_attr(a));
    const std::lock_guard lock(live_mutex);
    live_nodes.insert(state.get());
  }
  NodeState& s = *state;

  std::vector<rknn_custom_op_tensor> inputs;
  std::vector<rknn_custom_op_tensor> outputs;
  std::vector<std::vector<int64_t>> shapes;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const Tensor* t = i < kernel.inputs.size() ? kernel.inputs[i] : nullptr;
    inputs.push_back(
        describe(t, static_cast<uint32_t>(i), node.inputs[i] == no_value ? "" : graph.value(node.inputs[i]).name));
    shapes.push_back(t != nullptr ? t->shape() : std::vector<int64_t>{});
  }
  for (std::size_t o = 0; o < node.outputs.size(); ++o) {
    const Tensor* t = o < kernel.outputs.size() ? kernel.outputs[o] : nullptr;
    outputs.push_back(
        describe(t, static_cast<uint32_t>(o), node.outputs[o] == no_value ? "" : graph.value(node.outputs[o]).name));
  }
  const auto call = [&](const char* what, auto callback) {
    // The application's code may wait for another thread's run, which may be waiting for this slot.
    const ComputeSlotReleased released;
    const int status = callback(&s.context, inputs.data(), static_cast<uint32_t>(inputs.size()), outputs.data(),
                                static_cast<uint32_t>(outputs.size()));
    if (status == RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE)
      fail(RKNN_ERR_FAIL,
           "custom operator {}: {} returned RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE, asking for the "
           "runtime's own implementation, which the host engine does not have",
           op_type_of(*s.op), what);
    if (status != RKNN_SUCC) fail(RKNN_ERR_FAIL, "custom operator {}: {} returned {}", op_type_of(*s.op), what, status);
  };
  if (!s.initialized) {
    if (s.op->init != nullptr) call("init", s.op->init);
    s.initialized = true;  // destroy is owed from here on
  }
  if (!s.prepared || s.prepared_shapes != shapes) {
    if (s.op->prepare != nullptr) call("prepare", s.op->prepare);
    s.prepared = true;
    s.prepared_shapes = std::move(shapes);
  }
  call("compute", s.op->compute);
}

void CustomOps::get_attr(const rknn_custom_op_context* op_ctx, const char* name, rknn_custom_op_attr* attr) noexcept {
  try {
    if (attr == nullptr) {
      log_error("rknn_custom_op_get_op_attr: op_attr is NULL");
      return;
    }
    std::memset(attr, 0, sizeof *attr);
    if (name == nullptr) {
      log_error("rknn_custom_op_get_op_attr: attr_name is NULL");
      return;
    }
    copy_c_string(attr->name, name);
    if (op_ctx == nullptr) {
      log_error("rknn_custom_op_get_op_attr: op_ctx is NULL");
      return;
    }
    const void* node = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(op_ctx->internal_ctx));
    const std::lock_guard lock(live_mutex);
    if (!live_nodes.contains(node)) {
      log_error("rknn_custom_op_get_op_attr: op_ctx is not the context of a live custom operator (pass the op_ctx "
                "its callback was given)");
      return;
    }
    // Alive while the lock is held; its attributes never change after the node's first run.
    for (const OpAttr& a : static_cast<const NodeState*>(node)->attrs)
      if (a.name == name) {
        attr->dtype = a.dtype;
        attr->n_elems = a.n_elems;
        attr->data = a.n_elems == 0 ? nullptr : const_cast<std::byte*>(a.data.data());  // the node's own copy
        return;
      }
  } catch (const std::exception& e) {
    log_error("rknn_custom_op_get_op_attr: {}", e.what());
  }
}

}  // namespace rknnxx::host
