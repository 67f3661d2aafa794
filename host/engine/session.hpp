#pragma once
// A session executes one graph. For each set of input shapes it plans once: infers every
// value's type and shape, folds what is constant, and places every intermediate tensor and
// kernel scratch buffer at an offset in one arena, reusing memory between tensors whose
// lifetimes do not overlap. A run then allocates nothing but the returned outputs.
// A session is not shared between threads; its kernels run on a share of the process's worker
// threads (thread_pool.hpp).

#include "graph.hpp"
#include "onnx_model.hpp"
#include "tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::host {

struct KernelContext;

// A chain's byte table as its producer's rounding may apply it (Session::set_output_rounding, docs/runtime-extensions.md
// "Steps run by their producer"): for each value rounded to the integer q of the grid grid_scale * (q - grid_zero),
// q in [least, most], out = scale * (bytes[q - least] - zero_point).
struct RoundedLookup {
  const int8_t* bytes = nullptr;  // most - least + 1 of them
  float grid_scale = 1.0f;
  int32_t grid_zero = 0, least = 0, most = 0;
  float scale = 1.0f;  // the output's grid
  int32_t zero_point = 0;
  float* out = nullptr;  // where the piece's outputs go
};

struct SessionOptions {
  std::size_t threads = 0;           // 0: default_thread_count() ($RKNNXX_HOST_THREADS or all cores)
  bool float16_activations = false;  // round every float32 activation to float16 precision between nodes
  bool fuse = true;                  // fold BatchNormalization and fuse Relu/Clip into Conv
  // Run chains of element-wise operators piece by piece (elementwise_chain.hpp), and chains and element-wise
  // operators inside the step that makes their input (docs/runtime-extensions.md, "Steps run by their producer"):
  // the same values; off, each operator runs alone (for comparisons).
  bool chain_elementwise = true;
  bool profile = false;  // time every step of a run (last_profile())
};

// The time one step (one node, or a fused group) took in the last profiled run.
struct StepTime {
  std::string node;  // "node 'conv1' (Conv)"
  std::string op_type;
  std::vector<int64_t> output_shape;
  double microseconds = 0;
};

struct PlanStats {
  std::size_t arena_bytes = 0;         // the one arena of intermediates and scratch
  std::size_t intermediate_bytes = 0;  // what they would take without sharing memory
  std::size_t steps = 0;               // kernels executed per run
  std::size_t folded_nodes = 0;        // nodes computed once while planning
  std::size_t blocked_values = 0;      // values kept in oneDNN's layout between Convs (blocked_layout.hpp)
  std::size_t elementwise_chains = 0;  // runs of element-wise operators run piece by piece (elementwise_chain.hpp)
  // Chains and element-wise steps run by the step before them as it stores each piece of their input
  std::size_t steps_run_by_producers = 0;
  std::size_t aliased_values = 0;  // outputs stored in their input's memory, no copy (PreparedOp::aliases_input)
};

// How a graph output's shape is known (docs/conformance.md#run-time-shapes): planned; decided by
// data while running, within a bound (output_infos() gives the bound); or decided while running
// with no bound known (output_infos() gives the element type and an empty shape).
enum class OutputShapeKind { planned, bounded, unbounded };

// One block of the arena: its size and the first and last step that use it.
struct ArenaBlock {
  std::size_t bytes = 0;
  int32_t first = 0;
  int32_t last = 0;
  std::size_t offset = 0;  // set by plan_arena
};
// Sets every block's offset (64-byte aligned) so that blocks alive at the same step never
// overlap; returns the arena size. Greedy by size, which is close to optimal on CNNs.
std::size_t plan_arena(std::span<ArenaBlock> blocks);

class Session {
public:
  explicit Session(const onnx::ModelProto& model, SessionOptions options = {});
  explicit Session(Graph graph, SessionOptions options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  const Graph& graph() const noexcept;
  std::size_t threads() const noexcept;
  // Later runs use at most `threads` of the session's threads (at least 1): a context's core-mask share.
  void limit_threads(std::size_t threads) noexcept;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // Plans for these input types and shapes unless already planned (run() does this itself).
  // Throws EngineError naming the input (expected vs given) or the node whose inference fails.
  void prepare(std::span<const TensorInfo> inputs);
  // Type and shape of any value under the last prepared plan.
  TensorInfo info(std::string_view value_name) const;
  std::vector<TensorInfo> output_infos() const;
  std::vector<OutputShapeKind> output_shape_kinds() const;
  const PlanStats& stats() const;

  // Inputs in the order of input_names(); returns owning output tensors in the order of output_names().
  std::vector<Tensor> run(std::span<const Tensor> inputs);
  // How a run takes its float32 inputs under float16 storage (SessionOptions::float16_activations): copied and
  // rounded to float16 (round), or as they are, when the caller holds them as stored already (already_rounded: the
  // host runtime's input conversion rounds them), which builds with assertions check (EngineError otherwise).
  enum class Inputs { round, already_rounded };
  // The same run, without copying the outputs: views of them where the kernels wrote them (the
  // arena, or a value shaped while running), valid until the next run or prepare. An output the
  // run did not compute there (an input passed through, a constant) is a copy the session keeps.
  std::span<const Tensor> run_views(std::span<const Tensor> inputs, Inputs taken = Inputs::round);
  // Per-step times of the last run when SessionOptions::profile is set; empty otherwise.
  std::span<const StepTime> last_profile() const noexcept;

  // Called by run() after every step it executes, with the step's node and outputs (nullptr for an
  // omitted output), before any later step reads them. An observer may read the values
  // (calibration statistics) or rewrite them in place, keeping type and shape (quantized
  // execution, docs/quantization.md). Values folded while planning are not reported. An exception
  // from the observer ends the run. An empty function removes the observer. An observer sees every value
  // NCHW: plans that keep values in oneDNN's layout are dropped and planned again without it
  // (docs/runtime-extensions.md, "Blocked values between Convs"), which ends the last run's views.
  using StepObserver = std::function<void(const Node& node, std::span<Tensor* const> outputs)>;
  void set_step_observer(StepObserver observer);

  // Rounds every float32 value a step computes, element by element, after the step (and its float16 rounding)
  // and before the observer and any later step: the quantized execution's rounding of each activation to its
  // grid (docs/quantization.md). Unlike an observer it leaves values kept in oneDNN's layout where they are, so it
  // is called on the stored elements in any order, in pieces, from the pool's threads at once, padding included:
  // it must treat every element alike and map 0 to 0. An empty function removes it.
  using OutputRounding = std::function<void(ValueId id, std::span<float> values)>;
  // Optionally, the same rounding and the byte table a chain run by the value's producer looks each rounded value
  // up in (RoundedLookup), in one pass: it returns false, having changed nothing, where it cannot (the value's
  // rounding is not to exactly the table's grid, or the CPU lacks the instructions), and the session then rounds
  // and looks up in two.
  using OutputRoundingWithLookup = std::function<bool(ValueId id, std::span<float> values, const RoundedLookup&)>;
  // Optionally, which values the rounding may change: the session makes no pass over the others (a quantized
  // model's Reshape, Slice, Transpose and MaxPool keep their input's grid). Empty: every value.
  using OutputRoundingScope = std::function<bool(ValueId id)>;
  void set_output_rounding(OutputRounding rounding, OutputRoundingWithLookup with_lookup = {},
                           OutputRoundingScope rounds = {});

  // Runs the custom nodes of the graph (Node::custom, Graph's custom_ops): called on the calling
  // thread for each such node of a run, with the node and its planned inputs and outputs. A custom
  // node's outputs are planned from the element types and static shapes the model declares for them
  // (value_info or graph outputs), and it is never folded while planning: its runner may be set
  // after planning, any time before the run. A run reaching a custom node without a runner throws
  // EngineError naming the node; what the runner throws ends the run.
  using CustomOpRunner = std::function<void(const Node& node, KernelContext& kernel)>;
  void set_custom_op_runner(CustomOpRunner runner);

  // Keeps the intermediates and kernel scratch of every plan in `memory` instead of memory the
  // session allocates (rknn_set_internal_mem: sessions run one after another can share one
  // buffer). `memory` must be aligned to arena_alignment and outlive its use; run() refuses a
  // plan whose arena_bytes exceed it, naming both sizes. An empty span returns to the session's
  // own memory. Throws EngineError for misaligned memory.
  void use_arena(std::span<std::byte> memory);
  static constexpr std::size_t arena_alignment = 16;  // enough for every element type and SIMD load

  // The weight memory of rknn_set_weight_mem: the bytes the graph's constants need, and
  // moving them into `memory` (aligned to arena_alignment, outliving the session's use).
  // Plans made before are dropped. Throws EngineError naming a size or alignment that fails.
  std::size_t weight_bytes() const;
  void use_weight_memory(std::span<std::byte> memory);

private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rknnxx::host
