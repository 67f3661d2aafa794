#include "session.hpp"

#include "blocked_layout.hpp"
#include "elementwise_chain.hpp"
#include "float16.hpp"
#include "op_registry.hpp"
#include "thread_pool.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>

namespace rknnxx::host {

std::size_t plan_arena(std::span<ArenaBlock> blocks) {
  std::vector<std::size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::vector<std::size_t> placed;
  std::size_t arena = 0;
  std::vector<const ArenaBlock*> overlapping;
  for (std::size_t i : order) {
    ArenaBlock& block = blocks[i];
    const std::size_t size = align_up(std::max<std::size_t>(block.bytes, 1), tensor_alignment);
    overlapping.clear();
    for (std::size_t p : placed) {
      const ArenaBlock& other = blocks[p];
      if (other.first <= block.last && block.first <= other.last) {
        overlapping.push_back(&other);
      }
    }
    std::sort(overlapping.begin(), overlapping.end(),
              [](const ArenaBlock* a, const ArenaBlock* b) { return a->offset < b->offset; });
    std::size_t offset = 0;
    for (const ArenaBlock* other : overlapping) {
      if (offset + size <= other->offset) {
        break;
      }
      offset = std::max(offset, align_up(other->offset + std::max<std::size_t>(other->bytes, 1), tensor_alignment));
    }
    block.offset = offset;
    arena = std::max(arena, offset + size);
    placed.push_back(i);
  }
  return arena;
}

namespace {

struct Step {
  const Node* node = nullptr;
  Kernel kernel;
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> outputs;
  std::size_t scratch_offset = 0;
  // The float32 outputs with what rounds them as stored (OutputFinish: float16 storage, Session::set_output_rounding)
  // and their stored element counts (more than the shape's for a value kept in oneDNN's layout, blocked_layout.hpp:
  // its padding is rounded too).
  struct Stored {
    Tensor* tensor;
    ValueId id;
    int64_t elements;
    bool to_half;
  };
  std::vector<Stored> float_outputs;
  bool kernel_finishes = false;  // the kernel rounds float_outputs[0], output 0, itself (PreparedOp::finishes_output)
  bool at_run_time = false;      // prepared and computed when running (docs/conformance.md#run-time-shapes)
  // An element-wise chain run as this step (elementwise_chain.hpp), `node` its last operator: its members, each
  // one's stored output (rounded as stored), and its quantized input. Empty: the step runs its kernel.
  std::vector<ChainMember> chain;
  std::vector<Stored> chain_outputs;
  ChainInput chain_input;
  ChainOutputGrid chain_output_grid;
  ChainTable chain_table;  // kept from run to run
  // A step run by the step before it, which makes its input (docs/runtime-extensions.md, "Steps run by their
  // producer"): on the follower, that its output is written by the step before it (and for an element-wise
  // operator, its arithmetic on a piece); on the producer, the follower (an index into Plan::steps) and what runs it
  // on each finished piece of the producer's output 0.
  bool run_by_producer = false;
  ElementwiseTile tile;
  std::size_t follower = 0;  // 0: none (a follower is never the first step)
  std::function<void(float*, std::size_t)> run_follower;
  // The same for a chain on bytes whose rounding the session's OutputRoundingWithLookup may do with the lookup.
  std::function<void(float*, std::size_t)> round_and_run_follower;
};

struct Plan {
  std::vector<std::vector<int64_t>> input_shapes;             // the key
  std::vector<TensorInfo> infos;                              // per value id
  std::vector<const Tensor*> constants;                       // per value id, nullptr when computed per run
  std::vector<Tensor> slots;                                  // per value id: views used by the kernels
  std::vector<std::unique_ptr<Tensor>> folded;                // constants computed while planning
  std::vector<std::pair<ValueId, std::size_t>> input_copies;  // inputs copied (and rounded) into the arena: offsets
  std::vector<std::pair<ValueId, std::size_t>> arena_values;  // value id, offset of its block in the arena
  AlignedBuffer own_arena;          // allocated at the first run that does not use the caller's arena
  std::byte* arena_base = nullptr;  // where the slots of arena_values point now
  std::vector<Step> steps;
  PlanStats stats;
  // Per value id: its shape is decided while running (infos holds a bound), and whether that bound
  // is unknown (infos holds the declared element type only).
  std::vector<char> from_data;
  std::vector<char> unbounded;
  bool has_run_time_steps = false;
  // Per graph output: written into an arena block of its own (not an input's copy), so that
  // Session::run_views hands out a view of it.
  std::vector<char> output_in_arena;
  std::vector<Tensor> run_values;  // per value id: the run-time values of the current run
};

// Marks the outputs of a node prepared when running: their infos become the bounds the operator
// gave, or, with none (or a bound whose size overflows), the declared element type and no shape.
void defer_to_run(Plan& plan, const Graph& graph, const Node& node, std::vector<TensorInfo> bounds) {
  for (std::size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o] == no_value) {
      continue;
    }
    const auto v = static_cast<std::size_t>(node.outputs[o]);
    plan.from_data[v] = 1;
    bool known = o < bounds.size() && is_supported(bounds[o].dtype) &&
        std::all_of(bounds[o].shape.begin(), bounds[o].shape.end(), [](int64_t d) { return d >= 0; });
    if (known) {
      try {
        (void)bounds[o].bytes();
      } catch (const EngineError&) {
        known = false;
      }
    }
    plan.unbounded[v] = known ? 0 : 1;
    plan.infos[v] = known ? bounds[o] : TensorInfo{graph.value(node.outputs[o]).dtype, {}};
  }
}

void round_tensor_to_half(Tensor& t, ThreadPool& pool, int64_t elements) {
  float* data = t.data<float>();
  pool.parallel_for(elements, int64_t{1} << 14, [data](int64_t begin, int64_t end) {
    round_to_half(data + begin, static_cast<std::size_t>(end - begin));
  });
}

std::string declared_shape_string(const Value& v) {
  std::vector<std::string> dims;
  for (const auto& d : v.declared_shape) {
    dims.push_back(d.has_value ? std::to_string(d.value) : (d.param.empty() ? std::string("?") : d.param));
  }
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// "node 'tile' (Tile) making 'big'": the node and the values it makes, for errors of its shape
// inference (a size that overflows names the tensor it would be).
std::string node_and_outputs(const Graph& graph, const Node& node) {
  std::vector<std::string> names;
  for (ValueId out : node.outputs) {
    if (out != no_value) {
      names.push_back(fmt::format("'{}'", graph.value(out).name));
    }
  }
  return names.empty() ? node.label() : fmt::format("{} making {}", node.label(), fmt::join(names, ", "));
}

// A custom node's outputs as the model declares them: the engine cannot infer what an operator it
// lacks computes (docs/custom-operators.md#output-shapes).
std::vector<TensorInfo> declared_custom_outputs(const Graph& graph, const Node& node, const OpContext& ctx) {
  std::vector<TensorInfo> outputs;
  for (ValueId out : node.outputs) {
    if (out == no_value) {
      outputs.emplace_back();
      continue;
    }
    const Value& v = graph.value(out);
    if (!is_supported(v.dtype)) {
      ctx.fail("custom operator output '{}' has {}: declare it in the model (value_info or graph output), the host "
               "engine takes a custom operator's output types and shapes from there",
               v.name,
               v.dtype == DataType::undefined ? std::string("no declared element type")
                                              : fmt::format("the unsupported element type {}", dtype_name(v.dtype)));
    }
    TensorInfo info{v.dtype, {}};
    bool fixed = v.has_declared_shape;
    for (const onnx::Dimension& d : v.declared_shape) {
      fixed = fixed && d.has_value && d.value >= 0;
      info.shape.push_back(d.value);
    }
    if (!fixed) {
      ctx.fail("custom operator output '{}' has {}: declare a fixed shape in the model (value_info or graph output), "
               "the host engine takes a custom operator's output types and shapes from there",
               v.name,
               v.has_declared_shape ? "a shape with unknown dimensions " + declared_shape_string(v)
                                    : std::string("no declared shape"));
    }
    outputs.push_back(std::move(info));
  }
  return outputs;
}

// Small integer tensors: the shape arithmetic whose values, computed from bounds, are bounds
// (booleans are not: a condition computed from bounds would choose one If branch).
bool is_shape_arithmetic(std::span<const TensorInfo> infos) {
  constexpr int64_t max_elements = 64;
  return std::all_of(infos.begin(), infos.end(), [](const TensorInfo& info) {
    return (info.dtype == DataType::int64 || info.dtype == DataType::int32) && info.elements() <= max_elements;
  });
}

// Runs a node whose inputs are all known and returns its outputs as owning tensors: constant
// folding while planning, and the nodes of run-time shapes while running.
std::vector<Tensor> compute_now(const Node& node, PreparedOp& prepared, std::span<const Tensor* const> inputs,
                                ThreadPool& pool) {
  if (!prepared.constant_outputs.empty()) {
    return std::move(prepared.constant_outputs);
  }
  std::vector<Tensor> outs;
  for (std::size_t o = 0; o < node.outputs.size(); ++o) {
    outs.emplace_back(prepared.outputs[o]);
  }
  std::vector<Tensor*> out_ptrs;
  for (auto& t : outs) {
    out_ptrs.push_back(&t);
  }
  AlignedBuffer scratch(prepared.scratch_bytes);
  KernelContext kc{inputs, out_ptrs, pool, scratch.data()};
  try {
    prepared.kernel(kc);
  } catch (const EngineError&) {
    throw;
  } catch (const std::exception& e) {
    throw EngineError(fmt::format("{}: {}", node.label(), e.what()));
  }
  return outs;
}

}  // namespace

struct Session::State {
  Graph graph;
  SessionOptions options;
  ThreadPool pool;
  std::vector<std::unique_ptr<Plan>> plans;  // most recently used last
  Plan* current = nullptr;
  std::vector<StepTime> profile;                  // of the last run, when options.profile
  std::vector<Tensor> outputs;                    // of the last run: views (Session::run_views) or copies it keeps
  StepObserver observer;                          // Session::set_step_observer
  OutputRounding rounding;                        // Session::set_output_rounding
  OutputRoundingWithLookup rounding_with_lookup;  // its second form, or empty
  OutputRoundingScope rounds;                     // the values it may change, or empty: every value
  CustomOpRunner custom_runner;                   // Session::set_custom_op_runner

  // What rounds a step's float32 output as it is stored.
  OutputFinish finish_of(const Step::Stored& out) const {
    return {out.to_half, rounding && (!rounds || rounds(out.id)) ? &rounding : nullptr, out.id};
  }

  State(Graph g, SessionOptions o) : graph(std::move(g)), options(o), pool(o.threads) {
    if (options.fuse) {
      graph.fuse_for_inference();
    }
  }

  std::span<std::byte> external_arena;  // Session::use_arena; empty: each plan's own

  void check_inputs(std::span<const TensorInfo> inputs) const;
  Plan& plan_for(std::span<const TensorInfo> inputs);
  std::byte* bind_arena(Plan& plan);
  std::unique_ptr<Plan> make_plan(std::span<const TensorInfo> inputs);
  void run_now(Plan& plan, const Step& step);
};

// A node of run-time shapes (docs/conformance.md#run-time-shapes): prepared now that every input is
// known, computed as a fold, its outputs owned by the plan until the next run.
void Session::State::run_now(Plan& plan, const Step& step) {
  const Node& node = *step.node;
  std::vector<TensorInfo> infos(step.inputs.size());
  std::vector<const TensorInfo*> in_infos;
  for (std::size_t i = 0; i < step.inputs.size(); ++i) {
    if (step.inputs[i] != nullptr) {
      infos[i] = step.inputs[i]->info();
    }
    in_infos.push_back(step.inputs[i] == nullptr ? nullptr : &infos[i]);
  }
  OpContext ctx(graph, node, in_infos, step.inputs, pool.size());
  PreparedOp prepared;
  try {
    prepared = node.op->prepare(ctx);
  } catch (const NodeError&) {
    throw;
  } catch (const std::exception& e) {
    throw NodeError(fmt::format("{}: {}", node_and_outputs(graph, node), e.what()));
  }
  if (prepared.shape_from_data || prepared.outputs.size() < node.outputs.size()) {
    throw NodeError(fmt::format("{}: output shapes still undecided with every input known", node.label()));
  }
  std::vector<Tensor> outs = compute_now(node, prepared, step.inputs, pool);
  for (std::size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o] == no_value) {
      continue;
    }
    const auto v = static_cast<std::size_t>(node.outputs[o]);
    Tensor& value = plan.run_values[v] = std::move(outs[o]);
    if (options.float16_activations && value.dtype() == DataType::float32) {
      round_tensor_to_half(value, pool, value.elements());
    }
    plan.slots[v] = Tensor::view(value.dtype(), value.shape(), value.raw());
  }
}

void Session::State::check_inputs(std::span<const TensorInfo> inputs) const {
  const auto graph_inputs = graph.inputs();
  if (inputs.size() != graph_inputs.size()) {
    throw EngineError(fmt::format("the graph has {} inputs, given {}", graph_inputs.size(), inputs.size()));
  }
  std::map<std::string, std::pair<int64_t, std::string>> symbols;  // dim_param -> value, first input using it
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph_inputs[i]);
    const TensorInfo& given = inputs[i];
    auto mismatch = [&](std::string_view why) {
      throw EngineError(fmt::format("input '{}': expected {} {}, given {} ({})", v.name, dtype_name(v.dtype),
                                    v.has_declared_shape ? declared_shape_string(v) : std::string("of any shape"),
                                    info_string(given), why));
    };
    if (v.dtype != DataType::undefined && given.dtype != v.dtype) {
      mismatch("wrong element type");
    }
    if (!is_supported(given.dtype)) {
      mismatch("element type not supported");
    }
    for (int64_t d : given.shape) {
      if (d < 0) {
        mismatch("negative dimension");
      }
    }
    try {
      (void)given.bytes();
    } catch (const EngineError& e) {
      throw EngineError(fmt::format("input '{}': {}", v.name, e.what()));
    }
    if (!v.has_declared_shape) {
      continue;
    }
    if (given.shape.size() != v.declared_shape.size()) {
      mismatch("wrong rank");
    }
    for (std::size_t d = 0; d < given.shape.size(); ++d) {
      const auto& dim = v.declared_shape[d];
      if (dim.has_value && dim.value >= 0 && dim.value != given.shape[d]) {
        mismatch(fmt::format("dimension {} must be {}", d, dim.value));
      }
      if (!dim.has_value && !dim.param.empty()) {
        const auto [it, added] = symbols.emplace(dim.param, std::pair{given.shape[d], v.name});
        if (!added && it->second.first != given.shape[d]) {
          mismatch(fmt::format("dimension {} is '{}', which is {} in input '{}'", d, dim.param, it->second.first,
                               it->second.second));
        }
      }
    }
  }
}

Plan& Session::State::plan_for(std::span<const TensorInfo> inputs) {
  for (auto it = plans.begin(); it != plans.end(); ++it) {
    const Plan& p = **it;
    bool same = true;
    for (std::size_t i = 0; i < inputs.size() && same; ++i) {
      same = p.input_shapes[i] == inputs[i].shape;
    }
    if (same) {
      current = it->get();
      return *current;
    }
  }
  check_inputs(inputs);
  constexpr std::size_t cached_plans = 4;
  if (plans.size() == cached_plans) {
    plans.erase(plans.begin());
  }
  plans.push_back(make_plan(inputs));
  current = plans.back().get();
  return *current;
}

std::unique_ptr<Plan> Session::State::make_plan(std::span<const TensorInfo> inputs) {
  auto plan = std::make_unique<Plan>();
  const std::size_t value_count = graph.values().size();
  plan->infos.resize(value_count);
  plan->constants.resize(value_count, nullptr);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    plan->input_shapes.push_back(inputs[i].shape);
    plan->infos[static_cast<std::size_t>(graph.inputs()[i])] = inputs[i];
  }
  for (std::size_t v = 0; v < value_count; ++v) {
    if (const Tensor* c = graph.constant(static_cast<ValueId>(v))) {
      plan->constants[v] = c;
      plan->infos[v] = c->info();
    }
  }

  // Inference and constant folding, node by node in topological order.
  struct Pending {
    const Node* node;
    PreparedOp prepared;
    bool at_run_time = false;
  };
  std::vector<Pending> pending;
  const std::size_t threads = pool.size();
  plan->from_data.resize(value_count, 0);
  plan->unbounded.resize(value_count, 0);
  std::vector<std::unique_ptr<Tensor>> bound_values(value_count);  // integer bounds of run-time values
  for (const Node& node : graph.nodes()) {
    std::vector<const TensorInfo*> in_infos;
    std::vector<const Tensor*> in_constants;
    bool all_constant = true;
    bool downstream = false;  // of a value whose shape is decided while running
    bool unbounded = false;   // ... whose bound is not known
    for (ValueId in : node.inputs) {
      if (in == no_value) {
        in_infos.push_back(nullptr);
        in_constants.push_back(nullptr);
        continue;
      }
      const auto v = static_cast<std::size_t>(in);
      in_infos.push_back(&plan->infos[v]);
      in_constants.push_back(plan->constants[v]);
      all_constant = all_constant && in_constants.back() != nullptr;
      downstream = downstream || plan->from_data[v] != 0;
      unbounded = unbounded || plan->unbounded[v] != 0;
    }
    OpContext ctx(graph, node, in_infos, in_constants, threads);
    if (downstream) {
      if (node.custom) {
        throw NodeError(fmt::format("{}: a custom operator must not read a value whose shape is decided while "
                                    "running (docs/conformance.md#run-time-shapes)",
                                    node.label()));
      }
      // Prepared again when running; here only for the largest shapes of its outputs, from the
      // bounds of its inputs. When that fails (a shape computed from run-time values), the
      // outputs have no known bound.
      std::vector<TensorInfo> bounds;
      if (!unbounded) {
        // Shape arithmetic on run-time values (Shape, then Gather, Min, Concat, ...) is followed
        // on their bounds: an integer tensor computed from bounds bounds what it computes, so a
        // k = min(300, count) or a ConstantOfShape of such a shape gets a bound too. The graph
        // outputs are checked against their bounds when running.
        std::vector<const Tensor*> bound_in = in_constants;
        bool all_known = true;
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
          if (node.inputs[i] != no_value && bound_in[i] == nullptr) {
            bound_in[i] = bound_values[static_cast<std::size_t>(node.inputs[i])].get();
            all_known = all_known && bound_in[i] != nullptr;
          }
        }
        OpContext bound_ctx(graph, node, in_infos, bound_in, threads);
        try {
          PreparedOp prepared = node.op->prepare(bound_ctx);
          bounds = prepared.outputs;
          if (!prepared.shape_from_data && all_known && prepared.constant_outputs.empty() &&
              is_shape_arithmetic(prepared.outputs)) {
            prepared.constant_outputs = compute_now(node, prepared, bound_in, pool);
          }
          for (std::size_t o = 0; o < prepared.constant_outputs.size() && o < node.outputs.size(); ++o) {
            const TensorInfo info = prepared.constant_outputs[o].info();
            if (node.outputs[o] != no_value && is_shape_arithmetic({&info, 1})) {
              bound_values[static_cast<std::size_t>(node.outputs[o])] =
                  std::make_unique<Tensor>(std::move(prepared.constant_outputs[o]));
            }
          }
        } catch (const std::exception&) {
          bounds.clear();
        }
      }
      defer_to_run(*plan, graph, node, std::move(bounds));
      pending.push_back(Pending{&node, PreparedOp{}, true});
      continue;
    }
    PreparedOp prepared;
    try {
      if (node.custom) {
        all_constant = false;  // user code runs at rknn_run, never while planning
        prepared.outputs = declared_custom_outputs(graph, node, ctx);
        prepared.kernel = [this, &node](KernelContext& kernel) {
          if (!custom_runner) {
            throw NodeError(fmt::format("{}: custom operator without an implementation in this session", node.label()));
          }
          custom_runner(node, kernel);
        };
      } else {
        prepared = node.op->prepare(ctx);
      }
    } catch (const NodeError&) {
      throw;
    } catch (const std::exception& e) {  // e.g. a size that overflows while the operator infers its shape
      throw NodeError(fmt::format("{}: {}", node_and_outputs(graph, node), e.what()));
    }
    if (prepared.outputs.size() < node.outputs.size()) {
      throw NodeError(fmt::format("{}: the operator infers {} outputs, the node has {}", node.label(),
                                  prepared.outputs.size(), node.outputs.size()));
    }
    if (prepared.shape_from_data) {
      defer_to_run(*plan, graph, node, std::move(prepared.outputs));
      pending.push_back(Pending{&node, PreparedOp{}, true});
      continue;
    }
    for (std::size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] != no_value) {
        const TensorInfo& info = prepared.outputs[o];
        // Every value is a tensor the engine can hold (max_tensor_bytes), before anything is folded
        // or placed: a graph whose sizes overflow is refused here, naming the node and the value.
        try {
          (void)(is_supported(info.dtype) ? static_cast<int64_t>(info.bytes()) : info.elements());
        } catch (const EngineError& e) {
          throw NodeError(
              fmt::format("{}: output '{}': {}", node.label(), graph.value(node.outputs[o]).name, e.what()));
        }
        plan->infos[static_cast<std::size_t>(node.outputs[o])] = info;
      }
    }
    if (prepared.constant_outputs.empty() && all_constant) {
      prepared.constant_outputs = compute_now(node, prepared, in_constants, pool);  // fold
    }
    if (!prepared.constant_outputs.empty()) {
      ++plan->stats.folded_nodes;
      for (std::size_t o = 0; o < node.outputs.size(); ++o) {
        if (node.outputs[o] == no_value) {
          continue;
        }
        plan->folded.push_back(std::make_unique<Tensor>(std::move(prepared.constant_outputs[o])));
        const auto v = static_cast<std::size_t>(node.outputs[o]);
        plan->constants[v] = plan->folded.back().get();
        plan->infos[v] = plan->constants[v]->info();
      }
      continue;
    }
    pending.push_back(Pending{&node, std::move(prepared)});
  }

  // Element-wise chains on one quantized input run as a table (elementwise_chain.hpp), decided once for the plan,
  // before the kept values (a chain is one step to them), and not while an observer reads every step's outputs.
  std::vector<std::pair<std::size_t, std::size_t>> chains;
  std::vector<ChainInput> chain_inputs;
  std::vector<ValueId> chain_input_values;
  std::vector<ChainOutputGrid> chain_output_grids;
  std::vector<int> chain_of(pending.size(), -1);
  if (!observer && options.chain_elementwise) {
    std::vector<ChainCandidate> candidates;
    for (const Pending& p : pending) candidates.push_back({p.node, p.prepared.tile && !p.at_run_time});
    for (auto [first, last] : find_elementwise_chains(candidates, plan->infos, graph.outputs())) {
      // Its one input of more than one element, made before it, with a grid of few integers; large enough to pay.
      // Else the chain without its first step, which may be what reads two values (a residual Add before a
      // HardSwish): its values but the last are still read inside it only.
      const auto elements = plan->infos[static_cast<std::size_t>(pending[last].node->outputs[0])].elements();
      const IntegerGrid* grid = nullptr;
      ValueId input = no_value;
      for (; first <= last; ++first) {
        input = no_value;
        bool one_input = true;
        for (std::size_t s = first; s <= last; ++s)
          for (ValueId in : pending[s].node->inputs) {
            const bool made_inside = std::any_of(pending.begin() + static_cast<std::ptrdiff_t>(first),
                                                 pending.begin() + static_cast<std::ptrdiff_t>(s),
                                                 [in](const Pending& p) { return p.node->outputs[0] == in; });
            if (in == no_value || made_inside || plan->infos[static_cast<std::size_t>(in)].elements() == 1) continue;
            one_input = one_input && (input == no_value || input == in);
            input = in;
          }
        grid = one_input && input != no_value ? graph.integer_grid(input) : nullptr;
        if (grid != nullptr && grid->scale.size() == 1 && grid->scale[0] > 0.0f && std::isfinite(grid->scale[0]) &&
            grid->max >= grid->min && grid->max - grid->min + 1 <= max_chain_levels &&
            elements >= 4 * (grid->max - grid->min + 1))
          break;
      }
      if (first > last) continue;
      for (std::size_t s = first; s <= last; ++s) chain_of[s] = static_cast<int>(chains.size());
      chains.emplace_back(first, last);
      chain_input_values.push_back(input);  // its view is made below
      chain_inputs.push_back(ChainInput{nullptr, grid->scale[0], grid->zero_point[0], grid->min, grid->max});
      const IntegerGrid* out = graph.integer_grid(pending[last].node->outputs[0]);
      const bool int8_out = out != nullptr && out->tensor_wide_int8();
      chain_output_grids.push_back(int8_out ? ChainOutputGrid{out->scale[0], out->zero_point[0]} : ChainOutputGrid{});
    }
    plan->stats.elementwise_chains = chains.size();
  }
  // Values kept in oneDNN's layout between oneDNN Convs, decided once for the plan. Not while an observer
  // reads every step's outputs: it sees NCHW (docs/runtime-extensions.md, "Blocked values between Convs").
  // A chain is one step to this pass: its quantized input in, its last value out, both kept or neither.
  std::vector<std::size_t> blocked_bytes(value_count, 0);
  std::vector<std::string> kept_layout(value_count);  // BlockedPorts::output_layout of each kept value; "": NCHW
  if (!observer && blocked_layout_enabled()) {
    std::vector<BlockedStep> offers;
    std::vector<Node> chain_nodes;
    chain_nodes.reserve(chains.size());
    std::vector<std::shared_ptr<const BlockedPorts>> chain_offers;
    for (std::size_t s = 0; s < pending.size(); ++s) {
      if (chain_of[s] < 0) {
        offers.push_back(BlockedStep{pending[s].node, pending[s].prepared.blocked.get()});
        continue;
      }
      const auto c = static_cast<std::size_t>(chain_of[s]);
      if (s != chains[c].second) continue;
      Node& node = chain_nodes.emplace_back();
      node.inputs = {chain_input_values[c]};  // then the values of one element, which it reads as NCHW
      for (std::size_t m = chains[c].first; m <= s; ++m)
        for (ValueId in : pending[m].node->inputs)
          if (in != no_value && std::find(node.inputs.begin(), node.inputs.end(), in) == node.inputs.end() &&
              plan->infos[static_cast<std::size_t>(in)].elements() == 1)
            node.inputs.push_back(in);
      node.outputs = {pending[s].node->outputs[0]};
      chain_offers.push_back(nhwc_tied_ports(plan->infos[static_cast<std::size_t>(node.outputs[0])].bytes(), [] {}));
      offers.push_back(BlockedStep{&node, chain_offers.back().get()});
    }
    blocked_bytes = keep_blocked_values(offers, graph.outputs(), value_count);
    plan->stats.blocked_values = static_cast<std::size_t>(
        std::count_if(blocked_bytes.begin(), blocked_bytes.end(), [](std::size_t b) { return b != 0; }));
    for (const BlockedStep& offer : offers) {
      const ValueId out = offer.node->outputs.empty() ? no_value : offer.node->outputs[0];
      if (offer.ports != nullptr && out != no_value && blocked_bytes[static_cast<std::size_t>(out)] != 0)
        kept_layout[static_cast<std::size_t>(out)] = offer.ports->output_layout;
    }
  }

  // Steps run by the step just before them, which makes their input, as it stores each piece of it
  // (docs/runtime-extensions.md, "Steps run by their producer"): a chain (decided at its first step), or an
  // element-wise operator whose other inputs of its size were made earlier (a residual Add). The producer has that
  // one output, and every value of the follower's size is stored in one layout (a piece's place in one is its place
  // in the others). Not a producer that is itself run by the step before it. Index: the follower's last step.
  std::vector<char> by_producer(pending.size(), 0);
  if (!observer && options.chain_elementwise) {
    for (std::size_t s = 1; s < pending.size(); ++s) {
      const bool chained = chain_of[s] >= 0;
      const std::size_t first = chained ? chains[static_cast<std::size_t>(chain_of[s])].first : s;
      if (first != s || chain_of[s - 1] >= 0 || by_producer[s - 1] != 0) continue;
      const Pending& producer = pending[s - 1];
      const std::size_t last = chained ? chains[static_cast<std::size_t>(chain_of[s])].second : s;
      const Node& follower = *pending[last].node;
      if (producer.at_run_time || producer.node->outputs.size() != 1 || producer.node->outputs[0] == no_value ||
          follower.outputs.size() != 1 || follower.outputs[0] == no_value)
        continue;
      const ValueId made = producer.node->outputs[0];
      const auto v = static_cast<std::size_t>(made), out = static_cast<std::size_t>(follower.outputs[0]);
      const int64_t elements = plan->infos[out].elements();
      if (plan->infos[v].dtype != DataType::float32 || plan->infos[out].dtype != DataType::float32 ||
          plan->infos[v].elements() != elements || kept_layout[v] != kept_layout[out] ||
          blocked_bytes[v] != blocked_bytes[out])
        continue;
      bool follows = false;
      if (chained) {
        follows = chain_input_values[static_cast<std::size_t>(chain_of[s])] == made;
      } else {
        const Pending& step = pending[s];
        follows = step.prepared.tile && !step.at_run_time && follower.inputs.size() <= max_tile_inputs &&
            std::find(follower.inputs.begin(), follower.inputs.end(), made) != follower.inputs.end() &&
            std::all_of(follower.inputs.begin(), follower.inputs.end(), [&](ValueId in) {
                    if (in == no_value || in == made) return true;
                    const auto i = static_cast<std::size_t>(in);
                    return plan->infos[i].elements() == 1 ||
                        (plan->infos[i].elements() == elements && kept_layout[i] == kept_layout[v] &&
                         blocked_bytes[i] == blocked_bytes[v]);
                  });
      }
      by_producer[last] = follows ? 1 : 0;
      plan->stats.steps_run_by_producers += by_producer[last];
    }
  }

  // Whether step s's output lives only in its chain's table (every member's but the last): no arena block.
  const auto inside_chain = [&](std::size_t s) {
    return chain_of[s] >= 0 && s != chains[static_cast<std::size_t>(chain_of[s])].second;
  };

  // Lifetimes: step s runs at time s + 1; time 0 copies inputs that are stored as float16.
  const auto end_time = static_cast<int32_t>(pending.size() + 1);
  std::vector<int32_t> first_use(value_count, -1);
  std::vector<int32_t> last_use(value_count, -1);
  for (std::size_t s = 0; s < pending.size(); ++s) {
    const auto time = static_cast<int32_t>(s + 1);
    for (ValueId in : pending[s].node->inputs) {
      if (in != no_value) {
        last_use[static_cast<std::size_t>(in)] = time;
      }
    }
    for (ValueId out : pending[s].node->outputs) {
      if (out != no_value) {
        first_use[static_cast<std::size_t>(out)] = time;
      }
    }
  }
  for (ValueId out : graph.outputs()) {
    last_use[static_cast<std::size_t>(out)] = end_time;
  }
  // A step run by its producer writes its output while the producer runs, which still reads its own inputs.
  for (std::size_t s = 0; s < pending.size(); ++s)
    if (by_producer[s] != 0) {
      const std::size_t first = chain_of[s] >= 0 ? chains[static_cast<std::size_t>(chain_of[s])].first : s;
      int32_t& from = first_use[static_cast<std::size_t>(pending[s].node->outputs[0])];
      from = std::min(from, static_cast<int32_t>(first));  // the producer's time
    }
  // A chain reads its inputs until its last step writes its last piece: none may share the arena with its output.
  for (const auto& [first, last] : chains) {
    for (std::size_t s = first; s <= last; ++s)
      for (ValueId in : pending[s].node->inputs)
        if (in != no_value) {
          int32_t& until = last_use[static_cast<std::size_t>(in)];
          until = std::max(until, static_cast<int32_t>(last + 1));
        }
  }
  // Aliases: a step whose output is its input's bytes unchanged (PreparedOp::aliases_input: Reshape, Flatten,
  // Squeeze, Unsqueeze, Identity) stores it in its input's block, and its copy is skipped. Only where that input is
  // an arena value in the plain layout that no other step reads and the graph does not return: a rounding of the
  // output as stored (finish_of) then changes no value anything else reads. The input's block lives as long as
  // its aliases are read. Index: the value; its block's owner, or no_value.
  std::vector<ValueId> alias_of(value_count, no_value);
  {
    std::vector<int32_t> readers(value_count, 0);
    std::vector<char> made_in_arena(value_count, 0);  // by a step planned now, outside any chain's table
    for (std::size_t s = 0; s < pending.size(); ++s) {
      for (ValueId in : pending[s].node->inputs)
        if (in != no_value) ++readers[static_cast<std::size_t>(in)];
      if (!pending[s].at_run_time && !inside_chain(s))
        for (ValueId out : pending[s].node->outputs)
          if (out != no_value) made_in_arena[static_cast<std::size_t>(out)] = 1;
    }
    for (ValueId out : graph.outputs()) readers[static_cast<std::size_t>(out)] = -1;
    for (std::size_t s = 0; s < pending.size(); ++s) {
      const Node& node = *pending[s].node;
      if (!pending[s].prepared.aliases_input || pending[s].at_run_time || chain_of[s] >= 0 || by_producer[s] != 0 ||
          node.inputs.empty() || node.outputs.size() != 1 || node.inputs[0] == no_value || node.outputs[0] == no_value)
        continue;
      const auto in = static_cast<std::size_t>(node.inputs[0]), out = static_cast<std::size_t>(node.outputs[0]);
      if (made_in_arena[in] == 0 || readers[in] != 1 || plan->from_data[in] != 0 || blocked_bytes[in] != 0 ||
          blocked_bytes[out] != 0 || plan->infos[in].bytes() != plan->infos[out].bytes())
        continue;
      const ValueId owner = alias_of[in] != no_value ? alias_of[in] : node.inputs[0];
      alias_of[out] = owner;
      int32_t& until = last_use[static_cast<std::size_t>(owner)];
      until = std::max(until, last_use[out]);
      pending[s].prepared.kernel = [](KernelContext&) {};
      ++plan->stats.aliased_values;
    }
  }
  std::vector<ArenaBlock> blocks;
  std::vector<ValueId> block_values;  // no_value for a scratch block
  std::vector<std::size_t> step_scratch_block(pending.size(), 0);
  auto add_block = [&](std::size_t bytes, int32_t first, int32_t last, ValueId value) {
    blocks.push_back(ArenaBlock{bytes, first, std::max(first, last), 0});
    block_values.push_back(value);
    plan->stats.intermediate_bytes += bytes;
    return blocks.size() - 1;
  };
  const bool half_storage = options.float16_activations;
  for (ValueId in : graph.inputs()) {
    const auto v = static_cast<std::size_t>(in);
    if (half_storage && plan->infos[v].dtype == DataType::float32) {
      plan->input_copies.emplace_back(in, add_block(plan->infos[v].bytes(), 0, last_use[v], in));
    }
  }
  for (std::size_t s = 0; s < pending.size(); ++s) {
    const auto time = static_cast<int32_t>(s + 1);
    for (ValueId out : pending[s].node->outputs) {
      // Run-time values are allocated when running; those inside a chain never leave its table.
      if (out != no_value && !pending[s].at_run_time && !inside_chain(s) &&
          alias_of[static_cast<std::size_t>(out)] == no_value) {
        const auto v = static_cast<std::size_t>(out);
        add_block(blocked_bytes[v] != 0 ? blocked_bytes[v] : plan->infos[v].bytes(), first_use[v], last_use[v], out);
      }
    }
    if (pending[s].prepared.scratch_bytes != 0) {
      step_scratch_block[s] = add_block(pending[s].prepared.scratch_bytes, time, time, no_value);
    }
  }
  plan->stats.arena_bytes = plan_arena(blocks);

  // Views: arena values, constants, and inputs (rebound on every run).
  plan->slots.resize(value_count);
  for (std::size_t v = 0; v < value_count; ++v) {
    const TensorInfo& info = plan->infos[v];
    if (plan->constants[v] != nullptr) {
      plan->slots[v] = Tensor::view(info.dtype, info.shape, plan->constants[v]->raw());
    } else if (info.dtype != DataType::undefined && plan->from_data[v] == 0) {
      plan->slots[v] = Tensor::view(info.dtype, info.shape, static_cast<void*>(nullptr));
    }
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (block_values[b] != no_value) {
      plan->arena_values.emplace_back(block_values[b], blocks[b].offset);  // bound by State::bind_arena
    }
  }
  for (std::size_t v = 0; v < value_count; ++v) {
    if (alias_of[v] == no_value) continue;
    const auto owner = std::find(block_values.begin(), block_values.end(), alias_of[v]) - block_values.begin();
    plan->arena_values.emplace_back(static_cast<ValueId>(v), blocks[static_cast<std::size_t>(owner)].offset);
  }
  for (auto& [input, place] : plan->input_copies) place = blocks[place].offset;  // from the block to its offset
  for (ValueId out : graph.outputs()) {
    const auto is = [out](const auto& entry) { return entry.first == out; };
    plan->output_in_arena.push_back(std::any_of(plan->arena_values.begin(), plan->arena_values.end(), is) &&
                                    std::none_of(plan->input_copies.begin(), plan->input_copies.end(), is));
  }
  // With float16 storage every float32 value a step computes, and every input, is a float16 value; a constant is
  // one when each of its values is.
  std::vector<signed char> constant_is_half(value_count, -1);  // -1: not yet looked at
  const auto is_half = [&](ValueId id) {
    const auto v = static_cast<std::size_t>(id);
    const Tensor* constant = plan->constants[v];
    if (constant == nullptr || constant->dtype() != DataType::float32) return true;
    if (constant_is_half[v] < 0) {
      const auto values = constant->values<float>();
      constant_is_half[v] = std::all_of(values.begin(), values.end(), [](float x) {
        return std::bit_cast<uint32_t>(round_to_half(x)) == std::bit_cast<uint32_t>(x);
      });
    }
    return constant_is_half[v] != 0;
  };
  std::vector<ChainMember> chain_members;  // of the chain being gathered
  std::vector<Step::Stored> chain_outputs;
  for (std::size_t s = 0; s < pending.size(); ++s) {
    Step step;
    step.node = pending[s].node;
    step.kernel = std::move(pending[s].prepared.kernel);
    for (ValueId in : step.node->inputs) {
      step.inputs.push_back(in == no_value ? nullptr : &plan->slots[static_cast<std::size_t>(in)]);
    }
    // An operator that only moves values (OpDefinition::moves_values) from float16 values makes float16 values.
    const bool moves_half = half_storage && step.node->op != nullptr && step.node->op->moves_values &&
        std::all_of(step.node->inputs.begin(), step.node->inputs.end(),
                    [&](ValueId in) { return in == no_value || is_half(in); });
    for (ValueId out : step.node->outputs) {
      Tensor* t = out == no_value ? nullptr : &plan->slots[static_cast<std::size_t>(out)];
      step.outputs.push_back(t);
      if (t == nullptr || t->dtype() != DataType::float32) continue;
      const std::size_t kept = blocked_bytes[static_cast<std::size_t>(out)];
      const int64_t stored = kept != 0 ? static_cast<int64_t>(kept / sizeof(float)) : t->elements();
      // A step computed at run time rounds to float16 as it computes (run_now).
      const bool to_half = half_storage && !moves_half && !pending[s].at_run_time;
      if (step.outputs.size() == 1 && pending[s].prepared.finishes_output && !pending[s].at_run_time) {
        step.kernel_finishes = true;
      }
      step.float_outputs.push_back({t, out, stored, to_half});
    }
    step.at_run_time = pending[s].at_run_time;
    plan->has_run_time_steps = plan->has_run_time_steps || step.at_run_time;
    step.scratch_offset = pending[s].prepared.scratch_bytes != 0 ? blocks[step_scratch_block[s]].offset : 0;
    if (chain_of[s] >= 0) {  // a member: gathered into the chain's one step, its last
      const auto c = static_cast<std::size_t>(chain_of[s]);
      const std::size_t first = chains[c].first;
      chain_inputs[c].tensor = &plan->slots[static_cast<std::size_t>(chain_input_values[c])];
      ChainMember member;
      member.tile = std::move(pending[s].prepared.tile);
      for (ValueId in : step.node->inputs) {
        ChainMember::Source source;
        for (std::size_t m = first; m < s && in != no_value; ++m)
          if (pending[m].node->outputs[0] == in) source.member = static_cast<int>(m - first);
        if (source.member < 0 && in != no_value) {
          source.tensor = &plan->slots[static_cast<std::size_t>(in)];
          source.quantized_input = source.tensor == chain_inputs[c].tensor;
        }
        member.sources.push_back(source);
      }
      chain_members.push_back(std::move(member));
      chain_outputs.push_back(step.float_outputs[0]);
      if (inside_chain(s)) continue;
      step.chain = std::move(chain_members);
      step.chain_outputs = std::move(chain_outputs);
      step.chain_input = chain_inputs[c];
      step.chain_output_grid = chain_output_grids[c];
      step.kernel_finishes = true;  // the table holds every member's output rounded as stored
      chain_members.clear();
      chain_outputs.clear();
    } else if (by_producer[s] != 0) {
      step.tile = std::move(pending[s].prepared.tile);
      step.kernel_finishes = true;  // it rounds its output where it computes it, in its producer's pieces
    }
    if (by_producer[s] != 0) {  // the producer is the step made just before
      step.run_by_producer = true;
      plan->steps.back().follower = plan->steps.size();
    }
    plan->steps.push_back(std::move(step));
  }
  for (Step& producer : plan->steps) {  // the steps stay where they are from here on
    if (producer.follower == 0) continue;
    const Step& follower = plan->steps[producer.follower];
    const Step::Stored made = producer.float_outputs[0];
    // The piece's place in the value is its place in the follower's output and other inputs (one layout).
    const auto offset_of = [&follower, made](const float* piece, std::size_t count) {
      const auto at = reinterpret_cast<std::uintptr_t>(piece),
                 base = reinterpret_cast<std::uintptr_t>(made.tensor->raw());
      const std::size_t offset = (at - base) / sizeof(float);
      if (at < base || offset + count > static_cast<std::size_t>(made.elements)) {
        throw EngineError(fmt::format("{}: a piece of its input given to it by the step before lies outside that input",
                                      follower.node->label()));
      }
      return offset;
    };
    if (!follower.chain.empty()) {
      producer.round_and_run_follower = [this, &follower, made, offset_of](float* piece, std::size_t count) {
        const ChainTable& table = follower.chain_table;
        const ChainInput& in = follower.chain_input;
        const RoundedLookup lookup{table.byte_values.data(),
                                   in.scale,
                                   in.zero_point,
                                   in.min,
                                   in.max,
                                   follower.chain_output_grid.scale,
                                   follower.chain_output_grid.zero_point,
                                   follower.outputs[0]->data<float>() + offset_of(piece, count)};
        if (rounding_with_lookup(made.id, std::span<float>(piece, count), lookup)) return;
        rounding(made.id, std::span<float>(piece, count));
        look_up_piece(table, in, follower.chain_output_grid, piece, lookup.out, static_cast<int64_t>(count));
      };
    }
    producer.run_follower = [this, &follower, made, offset_of](float* piece, std::size_t count) {
      const std::size_t offset = offset_of(piece, count);
      float* out = follower.outputs[0]->data<float>() + offset;
      if (!follower.chain.empty()) {
        look_up_piece(follower.chain_table, follower.chain_input, follower.chain_output_grid, piece, out,
                      static_cast<int64_t>(count));
        return;
      }
      std::array<const float*, max_tile_inputs> in{};
      for (std::size_t i = 0; i < follower.inputs.size(); ++i) {
        const Tensor* t = follower.inputs[i];
        in[i] = t == nullptr     ? nullptr
            : t == made.tensor   ? piece
            : t->elements() == 1 ? t->data<float>()
                                 : t->data<float>() + offset;
      }
      follower.tile(std::span<const float* const>(in.data(), follower.inputs.size()), out, static_cast<int64_t>(count));
      if (const OutputFinish finish = finish_of(follower.float_outputs[0])) finish(out, count);
    };
  }
  plan->stats.steps = plan->steps.size();
  return plan;
}

Session::Session(const onnx::ModelProto& model, SessionOptions options) : Session(Graph(model), options) {}

Session::Session(Graph graph, SessionOptions options) : state_(std::make_unique<State>(std::move(graph), options)) {}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const Graph& Session::graph() const noexcept { return state_->graph; }
std::size_t Session::threads() const noexcept { return state_->pool.limit(); }
void Session::limit_threads(std::size_t threads) noexcept { state_->pool.limit(threads); }

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> names;
  for (ValueId id : state_->graph.inputs()) {
    names.push_back(state_->graph.value(id).name);
  }
  return names;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> names;
  for (ValueId id : state_->graph.outputs()) {
    names.push_back(state_->graph.value(id).name);
  }
  return names;
}

void Session::prepare(std::span<const TensorInfo> inputs) {
  state_->check_inputs(inputs);
  state_->plan_for(inputs);
}

namespace {
const Plan& current_plan(const Plan* plan) {
  if (plan == nullptr) {
    throw EngineError("the session has no plan yet: call prepare() or run() first");
  }
  return *plan;
}
}  // namespace

TensorInfo Session::info(std::string_view value_name) const {
  const Plan& plan = current_plan(state_->current);
  const auto id = state_->graph.find(value_name);
  if (!id || plan.infos[static_cast<std::size_t>(*id)].dtype == DataType::undefined) {
    throw EngineError(fmt::format("no value named '{}' in the planned graph", value_name));
  }
  return plan.infos[static_cast<std::size_t>(*id)];
}

std::vector<TensorInfo> Session::output_infos() const {
  const Plan& plan = current_plan(state_->current);
  std::vector<TensorInfo> infos;
  for (ValueId id : state_->graph.outputs()) {
    infos.push_back(plan.infos[static_cast<std::size_t>(id)]);
  }
  return infos;
}

std::vector<OutputShapeKind> Session::output_shape_kinds() const {
  const Plan& plan = current_plan(state_->current);
  std::vector<OutputShapeKind> kinds;
  for (ValueId id : state_->graph.outputs()) {
    const auto v = static_cast<std::size_t>(id);
    kinds.push_back(plan.from_data[v] == 0       ? OutputShapeKind::planned
                        : plan.unbounded[v] == 0 ? OutputShapeKind::bounded
                                                 : OutputShapeKind::unbounded);
  }
  return kinds;
}

const PlanStats& Session::stats() const { return current_plan(state_->current).stats; }

std::span<const StepTime> Session::last_profile() const noexcept { return state_->profile; }

void Session::set_step_observer(StepObserver observer) {
  if (observer) {  // plans made without one may keep values in oneDNN's layout, which an observer must not see
    std::erase_if(state_->plans, [&](const auto& plan) {
      const bool drop = plan->stats.blocked_values != 0 || plan->stats.elementwise_chains != 0;
      if (drop && plan.get() == state_->current) state_->current = nullptr;
      return drop;
    });
  }
  state_->observer = std::move(observer);
}

void Session::set_output_rounding(OutputRounding rounding, OutputRoundingWithLookup with_lookup,
                                  OutputRoundingScope rounds) {
  state_->rounding = std::move(rounding);
  state_->rounding_with_lookup = state_->rounding ? std::move(with_lookup) : OutputRoundingWithLookup{};
  state_->rounds = state_->rounding ? std::move(rounds) : OutputRoundingScope{};
  for (const auto& plan : state_->plans)  // the chains' tables were rounded by the old one
    for (Step& step : plan->steps) step.chain_table.forget();
}

void Session::set_custom_op_runner(CustomOpRunner runner) { state_->custom_runner = std::move(runner); }

void Session::use_arena(std::span<std::byte> memory) {
  if (!memory.empty()) {
    require_aligned(memory.data(), arena_alignment, "arena memory");
  }
  state_->external_arena = memory;
  for (auto& plan : state_->plans) {
    if (!memory.empty()) {
      plan->own_arena = AlignedBuffer();  // the caller's memory replaces it
    }
    plan->arena_base = nullptr;  // rebound at the next run
  }
}

std::size_t Session::weight_bytes() const { return state_->graph.constant_bytes(arena_alignment); }

void Session::use_weight_memory(std::span<std::byte> memory) {
  state_->graph.place_constants(memory, arena_alignment);
  state_->plans.clear();  // their views and folded constants point at the old weights
  state_->current = nullptr;
}

// Points the plan's intermediates at the arena this run uses and returns its base.
std::byte* Session::State::bind_arena(Plan& plan) {
  const std::size_t needed = plan.stats.arena_bytes;
  std::byte* base = nullptr;
  if (!external_arena.empty()) {
    if (external_arena.size() < needed) {
      throw EngineError(fmt::format("the arena memory of {} bytes is smaller than the {} bytes this plan needs",
                                    external_arena.size(), needed));
    }
    base = external_arena.data();
  } else {
    if (plan.own_arena.size() < needed) {
      plan.own_arena = AlignedBuffer(needed);
    }
    base = plan.own_arena.data();
  }
  if (base != plan.arena_base) {
    for (const auto& [value, offset] : plan.arena_values) {
      plan.slots[static_cast<std::size_t>(value)].rebind(base + offset);
    }
    plan.arena_base = base;
  }
  return base;
}

std::vector<Tensor> Session::run(std::span<const Tensor> inputs) {
  std::vector<Tensor> outputs;
  for (const Tensor& view : run_views(inputs)) {
    outputs.push_back(view.clone());
  }
  return outputs;
}

std::span<const Tensor> Session::run_views(std::span<const Tensor> inputs, Inputs taken) {
  const ComputeSlot slot;  // the run computes on this thread (thread_pool.hpp)
  State& s = *state_;
  s.outputs.clear();  // views into the previous run's values, and copies the session kept
  std::vector<TensorInfo> infos;
  infos.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    infos.push_back(t.info());
  }
  s.check_inputs(infos);
  Plan& plan = s.plan_for(infos);
  std::byte* const arena = s.bind_arena(plan);  // before inputs are copied into it
  const auto graph_inputs = s.graph.inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].raw() == nullptr && inputs[i].elements() != 0) {
      throw EngineError(fmt::format("input '{}' has no data", s.graph.value(graph_inputs[i]).name));
    }
    const ValueId id = graph_inputs[i];
    Tensor& slot = plan.slots[static_cast<std::size_t>(id)];
    const auto copy = std::find_if(plan.input_copies.begin(), plan.input_copies.end(),
                                   [id](const auto& entry) { return entry.first == id; });
    const bool rounded = copy != plan.input_copies.end();
#if !defined(NDEBUG)
    if (rounded && taken == Inputs::already_rounded) {
      Tensor stored = inputs[i].clone();
      round_to_half(stored.data<float>(), static_cast<std::size_t>(stored.elements()));
      if (stored.bytes() != 0 && std::memcmp(stored.raw(), inputs[i].raw(), stored.bytes()) != 0)
        throw EngineError(
            fmt::format("input '{}' was given as rounded to float16 and is not", s.graph.value(graph_inputs[i]).name));
    }
#endif
    if (rounded && taken == Inputs::round) {  // float16 storage: the model sees the input rounded, as the NPU would
      // Its block of the arena: a run that took the input as it was left the view on the caller's memory.
      slot.rebind(arena + copy->second);
      // Copied and rounded a piece at a time on the pool, each piece rounded while in cache: a copy on one thread
      // before the rounding took about 30 µs of a 224x224 image, and left the workers asleep for the first step.
      const float* from = inputs[i].data<float>();
      float* to = slot.data<float>();
      s.pool.parallel_for(slot.elements(), finish_piece, [from, to](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; p += finish_piece) {
          const auto count = static_cast<std::size_t>(std::min(finish_piece, end - p));
          std::memcpy(to + p, from + p, count * sizeof(float));
          round_to_half(to + p, count);
        }
      });
    } else {
      slot.rebind(const_cast<std::byte*>(inputs[i].raw()));
    }
  }
  s.profile.clear();
  if (plan.has_run_time_steps) {
    plan.run_values.assign(plan.slots.size(), Tensor());
  }
  // What rounds a chain's members as stored, for its table.
  const auto chain_finishes = [&s](const Step& chain) {
    std::array<OutputFinish, max_chain_steps> finishes;
    for (std::size_t m = 0; m < chain.chain.size(); ++m) finishes[m] = s.finish_of(chain.chain_outputs[m]);
    return finishes;
  };
  for (Step& step : plan.steps) {
    const auto started = s.options.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    // Output 0's rounding, and the lookup of the chain this step runs, if it runs one.
    OutputFinish finish0 = step.float_outputs.empty() ? OutputFinish{} : s.finish_of(step.float_outputs[0]);
    if (step.follower != 0) {
      Step& follower = plan.steps[step.follower];
      if (!follower.chain.empty()) {
        const auto finishes = chain_finishes(follower);
        prepare_chain_table(follower.chain, std::span(finishes.data(), follower.chain.size()), follower.chain_input,
                            follower.chain_output_grid, follower.chain_table);
      }
      finish0.then = &step.run_follower;
      // A chain on bytes after a rounding that can look it up in the same pass: one pass instead of two.
      if (!follower.chain.empty() && follower.chain_table.bytes && finish0.rounding != nullptr && !finish0.to_half &&
          s.rounding_with_lookup) {
        finish0.rounding = nullptr;
        finish0.then = &step.round_and_run_follower;
      }
    }
    if (step.run_by_producer) {
      // Written by the step before.
    } else if (!step.chain.empty()) {
      const auto finishes = chain_finishes(step);
      run_elementwise_chain(step.chain, std::span(finishes.data(), step.chain.size()), step.chain_input,
                            step.chain_output_grid, *step.outputs[0], s.pool, step.chain_table);
    } else if (step.at_run_time) {
      s.run_now(plan, step);
    } else {
      KernelContext ctx{step.inputs, step.outputs, s.pool, arena + step.scratch_offset};
      if (step.kernel_finishes) ctx.finish_output = finish0;
      try {
        step.kernel(ctx);
      } catch (const EngineError&) {
        throw;
      } catch (const std::exception& e) {
        throw EngineError(fmt::format("{}: {}", step.node->label(), e.what()));
      }
    }
    for (std::size_t o = step.kernel_finishes ? 1 : 0; o < step.float_outputs.size(); ++o) {
      const Step::Stored& out = step.float_outputs[o];
      const OutputFinish finish = o == 0 ? finish0 : s.finish_of(out);
      if (!finish) continue;
      // A run-time step's output may be smaller than planned: its own count then.
      const int64_t elements = step.at_run_time ? out.tensor->elements() : out.elements;
      float* data = out.tensor->data<float>();
      s.pool.parallel_for(elements, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
        finish(data + begin, static_cast<std::size_t>(end - begin));
      });
    }
    if (s.observer) {
      s.observer(*step.node, step.outputs);
    }
    if (s.options.profile) {
      const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - started;
      // A chain is timed as one: named by its last operator, of the type "ElementwiseChain".
      const bool chained = !step.chain.empty();
      s.profile.push_back({chained ? fmt::format("{} and the {} element-wise operators before it", step.node->label(),
                                                 step.chain.size() - 1)
                                   : step.node->label(),
                           chained ? std::string("ElementwiseChain") : step.node->op_type,
                           step.outputs.empty() || step.outputs.front() == nullptr ? std::vector<int64_t>{}
                                                                                   : step.outputs.front()->shape(),
                           took.count()});
    }
  }
  const auto graph_outputs = s.graph.outputs();
  for (std::size_t o = 0; o < graph_outputs.size(); ++o) {
    const ValueId id = graph_outputs[o];
    const auto v = static_cast<std::size_t>(id);
    const Tensor& slot = plan.slots[v];
    // Computed into the arena or into a run-time value (kept until the next run): a view. Anything
    // else (an input passed through, a constant) may change or go before the caller reads it.
    const bool run_value =
        plan.has_run_time_steps && plan.run_values[v].raw() != nullptr && plan.run_values[v].raw() == slot.raw();
    s.outputs.push_back(plan.output_in_arena[o] != 0 || run_value ? Tensor::view(slot.dtype(), slot.shape(), slot.raw())
                                                                  : slot.clone());
    // A run-time shape within its bound: what rknn_query reported for allocation (docs/c-interface.md).
    if (plan.from_data[v] != 0 && plan.unbounded[v] == 0) {
      const auto& bound = plan.infos[v].shape;
      const auto& shape = s.outputs.back().shape();
      if (shape.size() != bound.size() || !std::equal(shape.begin(), shape.end(), bound.begin(), std::less_equal<>())) {
        throw EngineError(fmt::format("output '{}': its run-time shape {} exceeds the bound {} planned for it",
                                      s.graph.value(id).name, shape_string(shape), shape_string(bound)));
      }
    }
  }
  return s.outputs;
}

}  // namespace rknnxx::host
