#pragma once
// Chains of element-wise float32 operators on one quantized value, run as a table (docs/runtime-extensions.md,
// "Element-wise chains"). A quantized graph fuses nothing but a Relu or Clip into its Convs: each of its other
// element-wise operators has a grid of its own (a HardSwish written out as Add, Clip, Mul and Div, Paddle's scalar
// affine blocks) and ran as a pass of its own with a rounding, compute-bound work a board's NPU does in hardware.
// But when every value such a chain computes depends on one input that holds integers of a known grid
// (Graph::integer_grid) and on values of one element, each output element is a function of one of the input's few
// integers: the session computes the chain, with every operator's rounding as stored, on the grid's values (256 for
// int8), and then looks every output element up by its input's integer. The values are the same, bit for
// bit: the same arithmetic and roundings on the same input values.

#include "graph.hpp"
#include "op_registry.hpp"
#include "thread_pool.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace rknnxx::host {

// A step of the plan as the search sees it.
struct ChainCandidate {
  const Node* node = nullptr;
  bool element_wise = false;  // PreparedOp::tile is set and the step is computed while planning's shapes hold
};

// The steps [first, last] (inclusive, one or more) that may run as one chain each. A step joins a chain when it
// is element-wise, its output and every input are float32 values of the chain's element count or of one element;
// every value a chain makes except its last is read only by the chain's later steps and is not a graph output.
// A chain looks each element up where it lies, so its input and output may be kept in NHWC, together
// (nhwc_tied_ports: the session shows the pass each chain as one step reading its quantized input, input 0, and
// writing its last value).
std::vector<std::pair<std::size_t, std::size_t>> find_elementwise_chains(std::span<const ChainCandidate> steps,
                                                                         std::span<const TensorInfo> infos,
                                                                         std::span<const ValueId> graph_outputs);

// The longest chain run as one step.
inline constexpr std::size_t max_chain_steps = 8;

// The most integers a chain's table holds (int8's 256 and int4's 16 fit; int16's do not).
inline constexpr int32_t max_chain_levels = 4096;

// One operator of a chain as it runs.
struct ChainMember {
  ElementwiseTile tile;
  // Per input: a value an earlier member made (its index in the chain), the chain's quantized input, or a tensor
  // of one value (nullptr: an omitted optional input).
  struct Source {
    int member = -1;
    bool quantized_input = false;
    const Tensor* tensor = nullptr;
  };
  std::vector<Source> sources;
};

// The chain's quantized input: integers q in [min, max] stored as scale * (q - zero_point).
struct ChainInput {
  const Tensor* tensor = nullptr;
  float scale = 1.0f;
  int32_t zero_point = 0, min = 0, max = 0;
};

// The int8 grid of the chain's output, when it has one (scale * (q - zero_point), q in [-128, 127]; scale 0: none).
// With an int8 input too, the table is then looked up as bytes: sixty-four elements a step with AVX512-VBMI's byte
// permutes, where the float table's gather does sixteen (benchmarks/README.md, "Element-wise tables on bytes").
struct ChainOutputGrid {
  float scale = 0.0f;
  int32_t zero_point = 0;
};

// A chain's table as its step keeps it from run to run: computed again only when a value of one element it reads
// holds other bits than last time, or after forget() (the session's rounding changed: Session::set_output_rounding).
// Computing it took about 2.5 µs a chain (its operators and roundings on 256 values, the check of its bytes), 45 µs
// of a w8a8 MobileNetV3-small's 1.5 ms run.
struct ChainTable {
  bool valid = false;
  std::vector<uint32_t> scalars;  // the bits of the one-element inputs it was computed from, in member order
  std::vector<float> table;       // one entry per integer of the input's grid, from its least
  bool bytes = false;             // the table on the output's int8 grid, as bytes: looked up as bytes
  std::array<int8_t, 256> byte_values{};

  void forget() noexcept { valid = false; }
};

// Makes `kept` the chain's table for this run: its members on the input's grid values, each member's output
// rounded by its `finishes` entry as stored; unless `kept` holds it already (the same values of one element).
void prepare_chain_table(std::span<const ChainMember> members, std::span<const OutputFinish> finishes,
                         const ChainInput& input, ChainOutputGrid output_grid, ChainTable& kept);

// Runs the chain: prepare_chain_table, then `output` = the table at each input element's integer, in pieces on the
// pool.
void run_elementwise_chain(std::span<const ChainMember> members, std::span<const OutputFinish> finishes,
                           const ChainInput& input, ChainOutputGrid output_grid, Tensor& output, ThreadPool& pool,
                           ChainTable& kept);

// `count` elements of the chain's output from the same elements of its input, on the calling thread: the lookup
// of a chain its input's producer runs as it stores each piece of that input (docs/runtime-extensions.md, "Steps
// run by their producer"). `kept` is prepared (prepare_chain_table).
void look_up_piece(const ChainTable& kept, const ChainInput& input, ChainOutputGrid output_grid, const float* x,
                   float* y, int64_t count);

// Its last part: `output` = `table` (one entry per integer of the input's grid, from its least) at each input
// element's integer (NaN read as the zero point, clamped to the grid). On bytes where it can (AVX512-VBMI, at most
// 256 entries, each exactly output_grid.scale * (q - zero_point) for an int8 q, computed in float32): returns true
// then; else on the floats.
bool look_up_table(std::span<const float> table, const ChainInput& input, ChainOutputGrid output_grid, Tensor& output,
                   ThreadPool& pool);

}  // namespace rknnxx::host
