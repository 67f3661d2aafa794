#include "graph.hpp"

#include "legacy_opsets.hpp"
#include "op_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_set>

namespace rknnxx::host {

std::string Node::label() const {
  if (!name.empty()) {
    return fmt::format("node '{}' ({})", name, op_type);
  }
  return fmt::format("unnamed node ({})", op_type);
}

const onnx::AttributeProto* Node::attribute(std::string_view attribute_name) const {
  for (const auto& a : attributes) {
    if (a.name == attribute_name) {
      return &a;
    }
  }
  return nullptr;
}

bool is_default_domain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

namespace {

std::string node_label(const onnx::NodeProto& node) {
  if (!node.name.empty()) {
    return fmt::format("node '{}' ({})", node.name, node.op_type);
  }
  if (!node.output.empty()) {
    return fmt::format("node producing '{}' ({})", node.output.front(), node.op_type);
  }
  return fmt::format("unnamed node ({})", node.op_type);
}

// The value of a Constant node, from whichever attribute holds it.
Tensor constant_node_value(const onnx::NodeProto& node) {
  if (node.attribute.size() != 1) {
    throw EngineError(
        fmt::format("{}: expected exactly one value attribute, given {}", node_label(node), node.attribute.size()));
  }
  const auto& a = node.attribute.front();
  try {
    if (a.name == "value") {
      if (a.t.empty()) {
        throw EngineError("attribute 'value' holds no tensor");
      }
      return tensor_from_proto(a.t.front());
    }
    if (a.name == "value_float") {
      return Tensor::scalar<float>(a.f);
    }
    if (a.name == "value_floats") {
      return Tensor::from<float>({static_cast<int64_t>(a.floats.size())}, std::span<const float>(a.floats));
    }
    if (a.name == "value_int") {
      return Tensor::scalar<int64_t>(a.i);
    }
    if (a.name == "value_ints") {
      return Tensor::from<int64_t>({static_cast<int64_t>(a.ints.size())}, std::span<const int64_t>(a.ints));
    }
  } catch (const EngineError& e) {
    throw EngineError(fmt::format("{}: {}", node_label(node), e.what()));
  }
  throw EngineError(fmt::format("{}: attribute '{}' is not supported by the host engine", node_label(node), a.name));
}

}  // namespace

ValueId Graph::add_value(std::string name) {
  const auto id = static_cast<ValueId>(values_.size());
  by_name_.emplace(name, id);
  values_.push_back(Value{std::move(name), DataType::undefined, false, {}, -1});
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor tensor) {
  const ValueId id = add_value(std::move(name));
  values_.back().dtype = tensor.dtype();
  constants_.emplace(id, std::move(tensor));
  return id;
}

const Tensor* Graph::constant(ValueId id) const {
  const auto it = constants_.find(id);
  return it == constants_.end() ? nullptr : &it->second;
}

void Graph::replace_constant(ValueId id, Tensor tensor) {
  const auto it = constants_.find(id);
  if (it == constants_.end()) {
    throw EngineError(fmt::format("replace_constant: '{}' is not a constant", value(id).name));
  }
  if (tensor.info() != it->second.info()) {
    throw EngineError(fmt::format("replace_constant: '{}' is {}, given {}", value(id).name,
                                  info_string(it->second.info()), info_string(tensor.info())));
  }
  it->second = std::move(tensor);
  grids_.erase(id);
}

void Graph::set_integer_grid(ValueId id, IntegerGrid grid) {
  (void)value(id);  // throws for an id outside the graph
  if (grid.scale.empty() || grid.scale.size() != grid.zero_point.size() || grid.axis < 0 || grid.min > grid.max) {
    throw EngineError(fmt::format("set_integer_grid: '{}' is given {} scales and {} zero points on axis {}, [{}, {}]",
                                  value(id).name, grid.scale.size(), grid.zero_point.size(), grid.axis, grid.min,
                                  grid.max));
  }
  grids_.insert_or_assign(id, std::move(grid));
}

const IntegerGrid* Graph::integer_grid(ValueId id) const {
  const auto it = grids_.find(id);
  return it == grids_.end() ? nullptr : &it->second;
}

std::vector<ValueId> Graph::used_constants() const {
  std::vector<ValueId> used;
  auto note = [&](ValueId id) {
    if (id != no_value && constants_.contains(id)) used.push_back(id);
  };
  for (const Node& node : nodes_) {
    for (ValueId in : node.inputs) note(in);
  }
  for (ValueId out : outputs_) note(out);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

std::size_t Graph::constant_bytes(std::size_t alignment) const {
  std::size_t total = 0;
  for (ValueId id : used_constants()) total = align_up(total, alignment) + constants_.at(id).bytes();
  return total;
}

void Graph::place_constants(std::span<std::byte> memory, std::size_t alignment) {
  const std::size_t needed = constant_bytes(alignment);
  if (memory.size() < needed) {
    throw EngineError(fmt::format("the weight memory of {} bytes is smaller than the {} bytes of the constants",
                                  memory.size(), needed));
  }
  require_aligned(memory.data(), alignment, "weight memory");
  std::size_t offset = 0;
  for (ValueId id : used_constants()) {
    offset = align_up(offset, alignment);
    Tensor& constant = constants_.at(id);
    std::byte* target = memory.data() + offset;
    if (constant.bytes() != 0 && target != constant.raw()) {
      std::memmove(target, constant.raw(), constant.bytes());
    }
    constant = Tensor::view(constant.dtype(), constant.shape(), static_cast<void*>(target));
    offset += constant.bytes();
  }
}

std::vector<std::string> subgraph_free_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> defined;
  for (const auto& init : graph.initializer) {
    defined.insert(init.name);
  }
  for (const auto& in : graph.input) {
    defined.insert(in.name);
  }
  for (const auto& node : graph.node) {
    defined.insert(node.output.begin(), node.output.end());
  }
  std::vector<std::string> free;
  std::unordered_set<std::string> listed;
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.contains(name) && listed.insert(name).second) {
      free.push_back(name);
    }
  };
  for (const auto& node : graph.node) {
    for (const auto& in : node.input) {
      use(in);
    }
    // Nesting is bounded by the reader (onnx::max_nesting_depth), so is this recursion.
    for (const auto& attribute : node.attribute) {
      for (const auto* subgraphs : {&attribute.g, &attribute.graphs}) {
        for (const auto& subgraph : *subgraphs) {
          for (const auto& name : subgraph_free_names(subgraph)) {
            use(name);
          }
        }
      }
    }
  }
  for (const auto& out : graph.output) {
    use(out.name);  // a branch may return an outer value as it is
  }
  return free;
}

std::optional<ValueId> Graph::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? std::nullopt : std::optional<ValueId>(it->second);
}

Graph::Graph(const onnx::ModelProto& model, std::span<const CustomOpType> custom_ops) {
  for (const CustomOpType& custom : custom_ops) {
    if (OpRegistry::instance().find(custom.domain, custom.op_type) != nullptr) {
      throw EngineError(fmt::format("custom operator {}{} is an operator the host engine implements; list only "
                                    "operators it lacks as custom",
                                    is_default_domain(custom.domain) ? "" : custom.domain + ".", custom.op_type));
    }
  }
  const auto is_custom = [&](const onnx::NodeProto& n) {
    return std::any_of(custom_ops.begin(), custom_ops.end(), [&](const CustomOpType& c) {
      return c.op_type == n.op_type &&
          (c.domain == n.domain || (is_default_domain(c.domain) && is_default_domain(n.domain)));
    });
  };
  bool found_opset = false;
  for (const auto& o : model.opset_import) {
    if (is_default_domain(o.domain)) {
      opset_ = o.version;
      found_opset = true;
    }
  }
  if (!found_opset) {
    throw EngineError("model imports no opset of the default ONNX domain");
  }
  if (opset_ < min_opset || opset_ > max_opset) {
    throw EngineError(fmt::format("model opset {} is not supported by the host engine (supported: {} to {})", opset_,
                                  min_opset, max_opset));
  }
  const onnx::GraphProto& g = model.graph;

  for (const auto& init : g.initializer) {
    if (init.name.empty()) {
      throw EngineError("an initializer has no name");
    }
    if (by_name_.contains(init.name)) {
      throw EngineError(fmt::format("initializer '{}' is defined twice", init.name));
    }
    try {
      add_constant(init.name, tensor_from_proto(init));
    } catch (const EngineError& e) {
      throw EngineError(fmt::format("initializer '{}': {}", init.name, e.what()));
    }
  }
  for (const auto& in : g.input) {
    const auto existing = find(in.name);
    if (existing && constant(*existing) != nullptr) {
      continue;  // IR < 4 lists initializers among the inputs: they stay constants
    }
    if (existing) {
      throw EngineError(fmt::format("graph input '{}' is declared twice", in.name));
    }
    if (in.name.empty()) {
      throw EngineError("a graph input has no name");
    }
    const ValueId id = add_value(in.name);
    Value& v = values_.back();
    v.dtype = in.elem_type;
    v.has_declared_shape = in.has_shape;
    v.declared_shape = in.shape;
    if (!is_supported(v.dtype)) {
      throw EngineError(fmt::format("graph input '{}' has element type {}, not supported by the host engine", in.name,
                                    dtype_name(v.dtype)));
    }
    inputs_.push_back(id);
  }

  // Nodes: outputs first (nodes may come in any order), inputs resolved afterwards.
  std::vector<const onnx::NodeProto*> sources;
  for (const auto& n : g.node) {
    if (is_default_domain(n.domain) && n.op_type == "Constant") {
      if (n.output.size() != 1 || n.output.front().empty()) {
        throw EngineError(fmt::format("{}: expected one output", node_label(n)));
      }
      if (by_name_.contains(n.output.front())) {
        throw EngineError(fmt::format("{}: output '{}' is already produced by another node, input or initializer",
                                      node_label(n), n.output.front()));
      }
      add_constant(n.output.front(), constant_node_value(n));
      continue;
    }
    const OpDefinition* op = OpRegistry::instance().find(n.domain, n.op_type);
    const bool custom = op == nullptr && is_custom(n);
    if (op == nullptr && !custom) {
      const std::string_view excluded = excluded_operator_reason(n.domain, n.op_type);
      throw EngineError(fmt::format(
          "{}: operator {}{} is not supported by the host engine{}{}", node_label(n),
          is_default_domain(n.domain) ? "" : n.domain + ".", n.op_type, excluded.empty() ? "" : ": ",
          excluded.empty() ? std::string_view("; to run it with rknn_register_custom_ops, list it in the conversion "
                                              "config's \"custom_ops\" (docs/custom-operators.md)")
                           : excluded));
    }
    if (op != nullptr && is_default_domain(n.domain)) {
      for (const auto& refusal : {legacy_form_refusal(n, opset_), newer_form_refusal(n, opset_)}) {
        if (!refusal.empty()) {
          throw EngineError(fmt::format("{}: {}", node_label(n), refusal));
        }
      }
    }
    Node node;
    node.name = n.name;
    node.op_type = n.op_type;
    node.domain = is_default_domain(n.domain) ? "" : n.domain;
    node.attributes = n.attribute;
    node.op = op;
    node.custom = custom;
    const auto index = static_cast<int32_t>(nodes_.size());
    for (const auto& out : n.output) {
      if (out.empty()) {
        node.outputs.push_back(no_value);
        continue;
      }
      if (by_name_.contains(out)) {
        throw EngineError(fmt::format("{}: output '{}' is already produced by another node, input or initializer",
                                      node_label(n), out));
      }
      node.outputs.push_back(add_value(out));
      values_.back().producer = index;
    }
    nodes_.push_back(std::move(node));
    sources.push_back(&n);
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (const auto& in : sources[i]->input) {
      if (in.empty()) {
        nodes_[i].inputs.push_back(no_value);
        continue;
      }
      const auto id = find(in);
      if (!id) {
        throw EngineError(fmt::format("{}: input '{}' is not a graph input, an initializer or the output of any node",
                                      nodes_[i].label(), in));
      }
      nodes_[i].inputs.push_back(*id);
    }
    // Outer-scope values a subgraph reads become inputs of its node, so that ordering, pruning and
    // lifetimes see them (docs/conformance.md#control-flow).
    std::vector<std::string> captured;
    for (const auto& attribute : sources[i]->attribute) {
      for (const auto* subgraphs : {&attribute.g, &attribute.graphs}) {
        for (const auto& subgraph : *subgraphs) {
          for (auto& name : subgraph_free_names(subgraph)) {
            if (std::find(captured.begin(), captured.end(), name) == captured.end()) {
              captured.push_back(std::move(name));
            }
          }
        }
      }
    }
    for (const auto& name : captured) {
      const auto id = find(name);
      if (!id) {
        throw EngineError(fmt::format("{}: a subgraph reads '{}', which is not a graph input, an initializer or the "
                                      "output of any node",
                                      nodes_[i].label(), name));
      }
      nodes_[i].inputs.push_back(*id);
    }
    nodes_[i].captured_inputs = captured.size();
  }
  // What the model declares about computed values: custom nodes are planned from it.
  for (const auto* infos : {&g.value_info, &g.output}) {
    for (const auto& declared : *infos) {
      const auto id = find(declared.name);
      if (!id || values_[static_cast<std::size_t>(*id)].producer < 0) {
        continue;
      }
      Value& v = values_[static_cast<std::size_t>(*id)];
      if (declared.elem_type != DataType::undefined) {
        v.dtype = declared.elem_type;
      }
      if (declared.has_shape) {
        v.has_declared_shape = true;
        v.declared_shape = declared.shape;
      }
    }
  }
  for (const auto& out : g.output) {
    const auto id = find(out.name);
    if (!id) {
      throw EngineError(fmt::format("graph output '{}' is not produced by any node, input or initializer", out.name));
    }
    if (values_[static_cast<std::size_t>(*id)].dtype == DataType::undefined) {
      values_[static_cast<std::size_t>(*id)].dtype = out.elem_type;
    }
    outputs_.push_back(*id);
  }
  if (outputs_.empty()) {
    throw EngineError("the graph has no outputs");
  }
  sort_and_prune();
}

void Graph::sort_and_prune() {
  const std::size_t count = nodes_.size();
  auto index_producers = [this] {
    for (auto& v : values_) {
      v.producer = -1;
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      for (ValueId out : nodes_[i].outputs) {
        if (out != no_value) {
          values_[static_cast<std::size_t>(out)].producer = static_cast<int32_t>(i);
        }
      }
    }
  };
  index_producers();
  // Which nodes the outputs need.
  std::vector<bool> live(count, false);
  std::vector<int32_t> stack;
  for (ValueId id : outputs_) {
    stack.push_back(values_[static_cast<std::size_t>(id)].producer);
  }
  while (!stack.empty()) {
    const int32_t n = stack.back();
    stack.pop_back();
    if (n < 0 || live[static_cast<std::size_t>(n)]) {
      continue;
    }
    live[static_cast<std::size_t>(n)] = true;
    for (ValueId in : nodes_[static_cast<std::size_t>(n)].inputs) {
      if (in != no_value) {
        stack.push_back(values_[static_cast<std::size_t>(in)].producer);
      }
    }
  }
  // Kahn's algorithm over all nodes (a cycle anywhere is an error), stable in file order.
  std::vector<int32_t> pending(count, 0);
  std::vector<std::vector<int32_t>> consumers(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (ValueId in : nodes_[i].inputs) {
      if (in == no_value) {
        continue;
      }
      const int32_t p = values_[static_cast<std::size_t>(in)].producer;
      if (p >= 0) {
        ++pending[i];
        consumers[static_cast<std::size_t>(p)].push_back(static_cast<int32_t>(i));
      }
    }
  }
  std::deque<int32_t> ready;
  for (std::size_t i = 0; i < count; ++i) {
    if (pending[i] == 0) {
      ready.push_back(static_cast<int32_t>(i));
    }
  }
  std::vector<int32_t> order;
  while (!ready.empty()) {
    const int32_t n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (int32_t c : consumers[static_cast<std::size_t>(n)]) {
      if (--pending[static_cast<std::size_t>(c)] == 0) {
        ready.push_back(c);
      }
    }
  }
  if (order.size() != count) {
    for (std::size_t i = 0; i < count; ++i) {
      if (pending[i] != 0) {
        throw EngineError(
            fmt::format("{} is part of a cycle (its inputs depend on its own outputs)", nodes_[i].label()));
      }
    }
  }
  std::vector<Node> sorted;
  for (int32_t n : order) {
    if (live[static_cast<std::size_t>(n)]) {
      sorted.push_back(std::move(nodes_[static_cast<std::size_t>(n)]));
    }
  }
  nodes_ = std::move(sorted);
  index_producers();
}

}  // namespace rknnxx::host
