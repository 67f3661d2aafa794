#pragma once
// Values kept in oneDNN's layout between the operators that can read it (docs/runtime-extensions.md, "Blocked
// values between Convs"). A oneDNN Conv on the blocked path reorders its input from NCHW and its output back;
// between two such Convs both copies are wasted, and so they are across the MaxPool and Concat of a network that
// keeps NHWC (squeezenet's fire modules). Once per plan this pass finds the values made in such a layout and read
// only by operators that take it (never a graph output), and tells both sides to skip the copy; the session sizes
// the value's arena block for that layout (its padded channels).

#include "graph.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host {

// What a kernel offers the pass (PreparedOp::blocked). A layout is a name: two equal names for the same value
// mean the same bytes. Hooks are called while planning, before the first run.
struct BlockedPorts {
  std::string output_layout;     // what output 0 is written in when kept; "" when it stays NCHW
  std::size_t output_bytes = 0;  // the whole output in that layout
  std::function<void()> keep_output;
  std::string input_layout;  // what the input below is read in when kept; "" when every input is read as NCHW
  std::size_t input = 0;     // the input offered in input_layout, or every_input (Concat)
  // The output is written in the offered inputs' layout, so it is kept only when they all are (MaxPool, Concat,
  // a Mul by a channel's scale).
  bool output_follows_inputs = false;
  // An input read in output_layout and kept together with the output or not at all: a Conv's residual, added to
  // its output element by element at the same offsets.
  std::optional<std::size_t> tied_input;
  std::function<void(std::size_t input)> keep_input;
};

// BlockedPorts::input offering input_layout for every input.
inline constexpr std::size_t every_input = static_cast<std::size_t>(-1);

// Plain NHWC: what a oneDNN Conv cut into bands of rows reads and writes, and the one layout the operators between
// such Convs keep (MaxPool, Concat, the squeeze-excitation's GlobalAveragePool and Mul).
inline constexpr char nhwc_layout[] = "nhwc";

// The offer of an operator that reads NHWC and writes its output in its inputs' layout (MaxPool: input 0; Concat:
// every_input; a channel scale's Mul: its image), so that the output is kept only when they all are.
std::shared_ptr<const BlockedPorts> nhwc_following_ports(std::size_t output_bytes, std::size_t input,
                                                         std::function<void(std::size_t input)> keep_input,
                                                         std::function<void()> keep_output);

// The offer of an operator that reads input 0 and writes its output in NHWC together or not at all, element for
// element or pixel for pixel where they lie (an element-wise chain's table, a nearest Resize): `keep` is called when
// both are kept.
std::shared_ptr<const BlockedPorts> nhwc_tied_ports(std::size_t output_bytes, std::function<void()> keep);

// RKNNXX_ENGINE_LAYOUT, read when a session is planned: unset or "blocked" runs the pass, "nchw" keeps every
// value NCHW; anything else throws EngineError naming the variable.
bool blocked_layout_enabled();

// One step of the plan in order: its node and its offer (nullptr: it reads and writes NCHW only).
struct BlockedStep {
  const Node* node = nullptr;
  const BlockedPorts* ports = nullptr;
};

// Decides the kept values, calls their producers' keep_output and consumers' keep_input, and returns per
// value id the bytes of the value in its kept layout (0: the value stays NCHW).
std::vector<std::size_t> keep_blocked_values(std::span<const BlockedStep> steps, std::span<const ValueId> graph_outputs,
                                             std::size_t value_count);

}  // namespace rknnxx::host
