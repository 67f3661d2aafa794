// Control flow with subgraphs (docs/conformance.md#control-flow): If runs one of two branches, Loop
// runs its body while a trip count and a condition allow, Scan runs it once per slice of its inputs. A subgraph reads values of the enclosing
// graph by name; Graph appends them to the node's inputs (Node::captured_inputs), and here they
// become inputs of the subgraph, which runs as a session of its own.
//
// If with a constant condition is planned like any operator when the chosen branch is (its kernel
// runs the branch's session). With a computed condition the branch is chosen while running
// (docs/conformance.md#run-time-shapes): the outputs' bounds are the larger of the two branches'.
// Loop's trip count and the shapes of its scan outputs depend on data, and Scan's body is planned
// from its inputs, so both run when their inputs are known, with no bound.

#include "../op_registry.hpp"
#include "../session.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace rknnxx::host {
namespace {

const onnx::GraphProto& graph_attribute(const OpContext& ctx, std::string_view name) {
  const onnx::AttributeProto* a = ctx.attribute(name);
  if (a == nullptr || a->g.size() != 1) {
    ctx.fail("attribute '{}' must hold one graph", name);
  }
  return a->g.front();
}

// The subgraph as a graph of its own: its declared inputs, then the outer values it reads.
// A declared input without an element type (as in ONNX's expanded functions) takes the type of
// what it is given, `inputs` (the declared ones first).
Graph subgraph(const OpContext& ctx, const onnx::GraphProto& body, std::span<const TensorInfo> inputs = {}) {
  onnx::ModelProto model;
  model.opset_import.push_back(onnx::OperatorSetId{"", ctx.opset()});
  model.graph = body;
  for (std::size_t i = 0; i < model.graph.input.size() && i < inputs.size(); ++i) {
    if (model.graph.input[i].elem_type == DataType::undefined) {
      model.graph.input[i].elem_type = inputs[i].dtype;
    }
  }
  for (std::size_t i = ctx.input_count() - ctx.node().captured_inputs; i < ctx.input_count(); ++i) {
    onnx::ValueInfoProto in;
    in.name = std::string(ctx.input_name(i));
    in.kind = onnx::TypeKind::tensor;
    in.elem_type = ctx.input(i).dtype;
    model.graph.input.push_back(std::move(in));
  }
  try {
    return Graph(model);
  } catch (const std::exception& e) {
    ctx.fail("subgraph '{}': {}", body.name, e.what());
  }
}

std::shared_ptr<Session> subgraph_session(const OpContext& ctx, const onnx::GraphProto& body,
                                          std::span<const TensorInfo> inputs) {
  auto session = std::make_shared<Session>(subgraph(ctx, body, inputs), SessionOptions{.threads = ctx.threads()});
  try {
    session->prepare(inputs);
  } catch (const std::exception& e) {
    ctx.fail("subgraph '{}': {}", body.name, e.what());
  }
  return session;
}

// Views of inputs [first, count) of a kernel or of a prepare whose inputs are all constant.
std::vector<Tensor> input_views(std::span<const Tensor* const> inputs, std::size_t first) {
  std::vector<Tensor> views;
  for (std::size_t i = first; i < inputs.size(); ++i) {
    views.push_back(Tensor::view(inputs[i]->dtype(), inputs[i]->shape(), inputs[i]->raw()));
  }
  return views;
}

// One iteration of a Loop or Scan body on `inputs` followed by the captured outer values; the
// body's session is planned by the first iteration.
std::vector<Tensor> run_iteration(const OpContext& ctx, std::shared_ptr<Session>& session, const onnx::GraphProto& body,
                                  std::vector<Tensor> inputs, std::span<const Tensor* const> captured,
                                  int64_t iteration) {
  for (Tensor& v : input_views(captured, 0)) {
    inputs.push_back(std::move(v));
  }
  if (!session) {
    std::vector<TensorInfo> infos;
    for (const Tensor& t : inputs) {
      infos.push_back(t.info());
    }
    session = subgraph_session(ctx, body, infos);
  }
  try {
    return session->run(inputs);
  } catch (const std::exception& e) {
    ctx.fail("iteration {}: {}", iteration, e.what());
  }
}

// A session's output infos, an unknown bound written as shape {-1} (PreparedOp::shape_from_data).
std::vector<TensorInfo> bounds_of(const Session& session) {
  std::vector<TensorInfo> infos = session.output_infos();
  const auto kinds = session.output_shape_kinds();
  for (std::size_t o = 0; o < infos.size(); ++o) {
    if (kinds[o] == OutputShapeKind::unbounded) {
      infos[o].shape = {-1};
    }
  }
  return infos;
}

PreparedOp prepare_if(OpContext& ctx) {
  const std::size_t captured = ctx.node().captured_inputs;
  if (ctx.input_count() - captured != 1) {
    ctx.fail("expected 1 input (the condition), given {}", ctx.input_count() - captured);
  }
  ctx.expect_dtype(0, {DataType::boolean});
  if (ctx.input(0).elements() != 1) {
    ctx.fail("the condition '{}' has shape {}, expected one element", ctx.input_name(0),
             shape_string(ctx.input(0).shape));
  }
  const onnx::GraphProto& then_branch = graph_attribute(ctx, "then_branch");
  const onnx::GraphProto& else_branch = graph_attribute(ctx, "else_branch");
  std::vector<TensorInfo> captured_infos;
  bool all_known = true;
  for (std::size_t i = 1; i < ctx.input_count(); ++i) {
    captured_infos.push_back(ctx.input(i));
    all_known = all_known && ctx.constant(i) != nullptr;
  }
  auto branch_outputs = [&](const Session& session, const onnx::GraphProto& body) {
    std::vector<TensorInfo> infos = bounds_of(session);
    if (infos.size() != ctx.output_count()) {
      ctx.fail("subgraph '{}' has {} outputs, the node {}", body.name, infos.size(), ctx.output_count());
    }
    return infos;
  };
  const Tensor* condition = ctx.constant(0);
  if (condition == nullptr) {
    // Chosen while running: each output is bounded by the larger of the branches' shapes.
    const auto then_session = subgraph_session(ctx, then_branch, captured_infos);
    const auto else_session = subgraph_session(ctx, else_branch, captured_infos);
    std::vector<TensorInfo> bounds = branch_outputs(*then_session, then_branch);
    const std::vector<TensorInfo> other = branch_outputs(*else_session, else_branch);
    for (std::size_t o = 0; o < bounds.size(); ++o) {
      if (bounds[o].dtype != other[o].dtype) {
        ctx.fail("output {}: the branches give {} and {}", o, dtype_name(bounds[o].dtype), dtype_name(other[o].dtype));
      }
      const auto& a = bounds[o].shape;
      const auto& b = other[o].shape;
      const bool known = a.size() == b.size() && std::none_of(a.begin(), a.end(), [](int64_t d) { return d < 0; }) &&
          std::none_of(b.begin(), b.end(), [](int64_t d) { return d < 0; });
      if (!known) {
        bounds[o].shape = {-1};
        continue;
      }
      for (std::size_t d = 0; d < a.size(); ++d) {
        bounds[o].shape[d] = std::max(a[d], b[d]);
      }
    }
    return run_time_shaped(std::move(bounds));
  }
  const bool take_then = condition->values<bool>()[0];
  const onnx::GraphProto& body = take_then ? then_branch : else_branch;
  const auto session = subgraph_session(ctx, body, captured_infos);
  std::vector<TensorInfo> outputs = branch_outputs(*session, body);
  const auto kinds = session->output_shape_kinds();
  if (!all_known && std::any_of(kinds.begin(), kinds.end(), [](auto k) { return k != OutputShapeKind::planned; })) {
    return run_time_shaped(std::move(outputs));
  }
  if (all_known) {  // the branch runs now: while planning, or when running a node of run-time shapes
    std::vector<const Tensor*> inputs;
    for (std::size_t i = 0; i < ctx.input_count(); ++i) {
      inputs.push_back(ctx.constant(i));
    }
    return constant_result(session->run(input_views(inputs, 1)));
  }
  PreparedOp op;
  op.outputs = std::move(outputs);
  op.kernel = [session](KernelContext& kc) {
    const std::vector<Tensor> results = session->run(input_views(kc.inputs, 1));
    for (std::size_t o = 0; o < results.size() && o < kc.outputs.size(); ++o) {
      if (kc.outputs[o] != nullptr && results[o].bytes() != 0) {
        std::memcpy(kc.output(o).raw(), results[o].raw(), results[o].bytes());
      }
    }
  };
  return op;
}

// Loop (opsets 1, 11, 13, 16 without sequences): inputs M (trip count, optional), cond (optional),
// the N loop-carried values; the body takes (iteration, condition, N values, captured values) and
// gives (condition, N values, K scan outputs); the node gives the N final values and the K scan
// outputs stacked along a new first axis.
PreparedOp prepare_loop(OpContext& ctx) {
  const std::size_t declared = ctx.input_count() - ctx.node().captured_inputs;
  if (declared < 2) {
    ctx.fail("expected at least 2 inputs (trip count and condition, either may be empty), given {}", declared);
  }
  const onnx::GraphProto& body = graph_attribute(ctx, "body");
  const std::size_t carried = declared - 2;
  if (body.input.size() != carried + 2 || body.output.size() != ctx.output_count() + 1 ||
      ctx.output_count() < carried) {
    ctx.fail("the body has {} inputs and {} outputs, expected {} inputs and {} outputs for {} loop-carried values and "
             "{} node outputs",
             body.input.size(), body.output.size(), carried + 2, ctx.output_count() + 1, carried, ctx.output_count());
  }
  if (ctx.has_input(0)) {
    ctx.expect_dtype(0, {DataType::int64});
  }
  if (ctx.has_input(1)) {
    ctx.expect_dtype(1, {DataType::boolean});
  }
  bool all_known = true;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    all_known = all_known && (!ctx.has_input(i) || ctx.constant(i) != nullptr);
  }
  if (!all_known) {
    // The trip count and the shapes carried from one iteration to the next are known once it runs.
    std::vector<TensorInfo> bounds;
    for (std::size_t o = 0; o < ctx.output_count(); ++o) {
      const DataType dtype = o < carried ? ctx.input(2 + o).dtype : body.output[1 + o].elem_type;
      bounds.push_back(TensorInfo{dtype, {-1}});
    }
    return run_time_shaped(std::move(bounds));
  }
  const int64_t max_trips = ctx.has_input(0) ? ctx.constant(0)->values<int64_t>()[0] : -1;
  bool condition = ctx.has_input(1) ? ctx.constant(1)->values<bool>()[0] : true;
  std::vector<Tensor> values;
  for (std::size_t i = 2; i < declared; ++i) {
    values.push_back(ctx.constant(i)->clone());
  }
  std::vector<const Tensor*> captured;
  for (std::size_t i = declared; i < ctx.input_count(); ++i) {
    captured.push_back(ctx.constant(i));
  }
  std::shared_ptr<Session> session;
  std::vector<std::vector<Tensor>> scans(ctx.output_count() - carried);
  constexpr int64_t max_iterations = int64_t{1} << 24;  // a loop without a trip count must end
  int64_t trip = 0;
  for (; (max_trips < 0 || trip < max_trips) && condition; ++trip) {
    if (trip == max_iterations) {
      ctx.fail("more than {} iterations", max_iterations);
    }
    std::vector<Tensor> inputs;
    inputs.push_back(Tensor::from<int64_t>({}, {trip}));
    inputs.push_back(Tensor::from<bool>({}, {condition}));
    for (const Tensor& v : values) {
      inputs.push_back(Tensor::view(v.dtype(), v.shape(), v.raw()));
    }
    std::vector<Tensor> results = run_iteration(ctx, session, body, std::move(inputs), captured, trip);
    if (results[0].dtype() != DataType::boolean || results[0].elements() != 1) {
      ctx.fail("iteration {}: the body's condition output is {}, expected one bool", trip,
               info_string(results[0].info()));
    }
    condition = results[0].values<bool>()[0];
    for (std::size_t v = 0; v < carried; ++v) {
      values[v] = std::move(results[1 + v]);
    }
    for (std::size_t k = 0; k < scans.size(); ++k) {
      if (!scans[k].empty() && scans[k].front().info() != results[1 + carried + k].info()) {
        ctx.fail("iteration {}: scan output {} is {}, earlier iterations gave {}", trip, k,
                 info_string(results[1 + carried + k].info()), info_string(scans[k].front().info()));
      }
      scans[k].push_back(std::move(results[1 + carried + k]));
    }
  }
  std::vector<Tensor> node_outputs = std::move(values);
  for (std::size_t k = 0; k < scans.size(); ++k) {
    const onnx::ValueInfoProto& declared_output = body.output[1 + carried + k];
    TensorInfo info{scans[k].empty() ? declared_output.elem_type : scans[k].front().dtype(), {trip}};
    if (!scans[k].empty()) {
      const auto& shape = scans[k].front().shape();
      info.shape.insert(info.shape.end(), shape.begin(), shape.end());
    }
    if (!is_supported(info.dtype)) {
      ctx.fail("scan output {} has no element type the host engine supports", k);
    }
    Tensor stacked(info);
    std::size_t offset = 0;
    for (const Tensor& t : scans[k]) {
      if (t.bytes() != 0) {
        std::memcpy(stacked.raw() + offset, t.raw(), t.bytes());
      }
      offset += t.bytes();
    }
    node_outputs.push_back(std::move(stacked));
  }
  return constant_result(std::move(node_outputs));
}

// Scan (opsets 9, 11, 16): N state values and M scan inputs (num_scan_inputs); the body takes the
// N states and one slice of each scan input along its axis (scan_input_axes, scan_input_directions)
// and gives the N states and K scan outputs, stacked along scan_output_axes (scan_output_directions).
// Opset 8's form, with a batch axis and sequence_lens, is refused.
PreparedOp prepare_scan(OpContext& ctx) {
  if (ctx.opset() < 9) {
    ctx.fail("Scan of opset {} (a batch axis and sequence_lens) is not implemented; opset 9's form is", ctx.opset());
  }
  const std::size_t declared = ctx.input_count() - ctx.node().captured_inputs;
  const onnx::GraphProto& body = graph_attribute(ctx, "body");
  const int64_t scan_inputs = ctx.attr_int("num_scan_inputs", -1);
  if (scan_inputs < 1 || static_cast<std::size_t>(scan_inputs) > declared) {
    ctx.fail("attribute 'num_scan_inputs' is {}, expected 1 to {} (the inputs)", scan_inputs, declared);
  }
  const std::size_t states = declared - static_cast<std::size_t>(scan_inputs);
  if (body.input.size() != declared || body.output.size() != ctx.output_count() || ctx.output_count() < states) {
    ctx.fail("the body has {} inputs and {} outputs, expected {} inputs and {} outputs", body.input.size(),
             body.output.size(), declared, ctx.output_count());
  }
  const std::size_t scan_outputs = ctx.output_count() - states;
  const auto input_axes =
      ctx.attr_ints("scan_input_axes", std::vector<int64_t>(static_cast<std::size_t>(scan_inputs), 0));
  const auto input_directions =
      ctx.attr_ints("scan_input_directions", std::vector<int64_t>(static_cast<std::size_t>(scan_inputs), 0));
  const auto output_axes = ctx.attr_ints("scan_output_axes", std::vector<int64_t>(scan_outputs, 0));
  const auto output_directions = ctx.attr_ints("scan_output_directions", std::vector<int64_t>(scan_outputs, 0));
  if (input_axes.size() != static_cast<std::size_t>(scan_inputs) ||
      input_directions.size() != static_cast<std::size_t>(scan_inputs) || output_axes.size() != scan_outputs ||
      output_directions.size() != scan_outputs) {
    ctx.fail("scan_input_axes, scan_input_directions ({} scan inputs), scan_output_axes and scan_output_directions "
             "({} scan outputs) need one value each",
             scan_inputs, scan_outputs);
  }
  bool all_known = true;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    all_known = all_known && ctx.constant(i) != nullptr;
  }
  if (!all_known) {  // run when the inputs are known: the body's output shapes come from its plan then
    std::vector<TensorInfo> bounds;
    for (std::size_t o = 0; o < ctx.output_count(); ++o) {
      bounds.push_back(TensorInfo{o < states ? ctx.input(o).dtype : body.output[o].elem_type, {-1}});
    }
    return run_time_shaped(std::move(bounds));
  }
  // Each scan input as [outer, length, inner] bytes along its axis.
  struct Sequence {
    const Tensor* tensor;
    int64_t outer, length, inner_bytes;
    std::vector<int64_t> element_shape;
    bool reverse;
  };
  std::vector<Sequence> sequences;
  int64_t length = -1;
  for (std::size_t j = 0; j < static_cast<std::size_t>(scan_inputs); ++j) {
    const Tensor& t = *ctx.constant(states + j);
    const auto axis = static_cast<std::size_t>(ctx.normalize_axis(input_axes[j], static_cast<int64_t>(t.rank())));
    std::vector<int64_t> element_shape = t.shape();
    element_shape.erase(element_shape.begin() + static_cast<std::ptrdiff_t>(axis));
    const auto shape = std::span<const int64_t>(t.shape());
    sequences.push_back(
        {&t, element_count(shape.first(axis)), t.shape()[axis],
         checked_mul(element_count(shape.subspan(axis + 1)), static_cast<int64_t>(element_size(t.dtype())), "bytes"),
         std::move(element_shape), input_directions[j] != 0});
    if (length >= 0 && t.shape()[axis] != length) {
      ctx.fail("scan input {} has {} elements along its axis, the first one {}", j, t.shape()[axis], length);
    }
    length = t.shape()[axis];
  }
  std::vector<Tensor> values;
  for (std::size_t i = 0; i < states; ++i) {
    values.push_back(ctx.constant(i)->clone());
  }
  std::vector<const Tensor*> captured;
  for (std::size_t i = declared; i < ctx.input_count(); ++i) {
    captured.push_back(ctx.constant(i));
  }
  std::shared_ptr<Session> session;
  std::vector<std::vector<Tensor>> outputs(scan_outputs);
  std::vector<Tensor> elements;
  for (int64_t step = 0; step < length; ++step) {
    elements.clear();
    for (const Sequence& s : sequences) {
      Tensor element(s.tensor->dtype(), s.element_shape);
      const int64_t at = s.reverse ? length - 1 - step : step;
      for (int64_t o = 0; o < s.outer; ++o) {
        std::memcpy(element.raw() + o * s.inner_bytes, s.tensor->raw() + (o * s.length + at) * s.inner_bytes,
                    static_cast<std::size_t>(s.inner_bytes));
      }
      elements.push_back(std::move(element));
    }
    std::vector<Tensor> inputs;
    for (const Tensor& v : values) {
      inputs.push_back(Tensor::view(v.dtype(), v.shape(), v.raw()));
    }
    for (const Tensor& e : elements) {
      inputs.push_back(Tensor::view(e.dtype(), e.shape(), e.raw()));
    }
    std::vector<Tensor> results = run_iteration(ctx, session, body, std::move(inputs), captured, step);
    for (std::size_t v = 0; v < states; ++v) {
      values[v] = std::move(results[v]);
    }
    for (std::size_t k = 0; k < scan_outputs; ++k) {
      if (!outputs[k].empty() && outputs[k].front().info() != results[states + k].info()) {
        ctx.fail("iteration {}: scan output {} is {}, earlier iterations gave {}", step, k,
                 info_string(results[states + k].info()), info_string(outputs[k].front().info()));
      }
      outputs[k].push_back(std::move(results[states + k]));
    }
  }
  std::vector<Tensor> node_outputs = std::move(values);
  for (std::size_t k = 0; k < scan_outputs; ++k) {
    if (outputs[k].empty()) {
      ctx.fail("scan output {}: no iterations (scan inputs of length 0) leave its shape unknown", k);
    }
    const TensorInfo each = outputs[k].front().info();
    const auto axis =
        static_cast<std::size_t>(ctx.normalize_axis(output_axes[k], static_cast<int64_t>(each.shape.size()) + 1));
    TensorInfo info = each;
    info.shape.insert(info.shape.begin() + static_cast<std::ptrdiff_t>(axis), length);
    Tensor stacked(info);
    const auto shape = std::span<const int64_t>(each.shape);
    const int64_t outer = element_count(shape.first(axis));
    const int64_t inner_bytes =
        checked_mul(element_count(shape.subspan(axis)), static_cast<int64_t>(element_size(each.dtype)), "bytes");
    for (int64_t step = 0; step < length; ++step) {
      const int64_t at = output_directions[k] != 0 ? length - 1 - step : step;
      const Tensor& t = outputs[k][static_cast<std::size_t>(step)];
      for (int64_t o = 0; o < outer; ++o) {
        std::memcpy(stacked.raw() + (o * length + at) * inner_bytes, t.raw() + o * inner_bytes,
                    static_cast<std::size_t>(inner_bytes));
      }
    }
    node_outputs.push_back(std::move(stacked));
  }
  return constant_result(std::move(node_outputs));
}

const OpRegistrar if_op{"If", prepare_if};
const OpRegistrar scan_op{"Scan", prepare_scan};
const OpRegistrar loop_op{"Loop", prepare_loop};

}  // namespace
}  // namespace rknnxx::host
