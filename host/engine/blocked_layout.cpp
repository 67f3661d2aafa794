// The per-plan pass of blocked_layout.hpp (docs/runtime-extensions.md, "Blocked values between Convs").

#include "blocked_layout.hpp"

#include "engine_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace rknnxx::host {

bool blocked_layout_enabled() {
  const char* env = std::getenv("RKNNXX_ENGINE_LAYOUT");
  const std::string_view mode = env != nullptr ? env : "";
  if (mode.empty() || mode == "blocked") return true;
  if (mode == "nchw") return false;
  throw EngineError(fmt::format("RKNNXX_ENGINE_LAYOUT is '{}'; expected blocked or nchw", mode));
}

std::shared_ptr<const BlockedPorts> nhwc_following_ports(std::size_t output_bytes, std::size_t input,
                                                         std::function<void(std::size_t input)> keep_input,
                                                         std::function<void()> keep_output) {
  auto ports = std::make_shared<BlockedPorts>();
  ports->input_layout = ports->output_layout = nhwc_layout;
  ports->input = input;
  ports->output_follows_inputs = true;
  ports->output_bytes = output_bytes;
  ports->keep_input = std::move(keep_input);
  ports->keep_output = std::move(keep_output);
  return ports;
}

std::shared_ptr<const BlockedPorts> nhwc_tied_ports(std::size_t output_bytes, std::function<void()> keep) {
  auto ports = std::make_shared<BlockedPorts>();
  ports->input_layout = ports->output_layout = nhwc_layout;
  ports->output_bytes = output_bytes;
  ports->input = 0;
  ports->tied_input = 0;
  ports->keep_output = std::move(keep);
  ports->keep_input = [](std::size_t) {};  // kept with the output: keep_output says it for both
  return ports;
}

namespace {

// The layout the step reads its input i in when that input is kept; empty when it reads it as NCHW only.
std::string_view offered_layout(const BlockedStep& step, std::size_t i) {
  if (step.ports == nullptr) return {};
  if (step.ports->tied_input == i) return step.ports->output_layout;
  if (i == step.ports->input || step.ports->input == every_input) return step.ports->input_layout;
  return {};
}

}  // namespace

std::vector<std::size_t> keep_blocked_values(std::span<const BlockedStep> steps, std::span<const ValueId> graph_outputs,
                                             std::size_t value_count) {
  // Per value: its producer's offer, then cleared by the first reader that cannot take it.
  std::vector<const BlockedPorts*> producer(value_count, nullptr);
  std::vector<char> read(value_count, 0);
  for (const BlockedStep& step : steps) {
    const ValueId out = step.node->outputs.empty() ? no_value : step.node->outputs[0];
    if (step.ports != nullptr && !step.ports->output_layout.empty() && out != no_value) {
      producer[static_cast<std::size_t>(out)] = step.ports;
    }
  }
  for (const BlockedStep& step : steps) {
    const auto& inputs = step.node->inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == no_value) continue;
      const auto v = static_cast<std::size_t>(inputs[i]);
      read[v] = 1;
      // Only an input offered in this very layout.
      const std::string_view layout = offered_layout(step, i);
      const bool takes = !layout.empty() && producer[v] != nullptr && layout == producer[v]->output_layout;
      if (!takes) producer[v] = nullptr;
    }
  }
  for (ValueId out : graph_outputs) {
    producer[static_cast<std::size_t>(out)] = nullptr;  // callers see NCHW
  }
  // An output that follows its inputs' layout is kept only when they are, and an output and its tied input are
  // kept together or not at all. Dropping one value can undo another's decision (the tied input's other readers,
  // an output that follows the dropped one), so this repeats until nothing changes; values are only ever dropped.
  const auto kept = [&](ValueId v) {
    return v != no_value && producer[static_cast<std::size_t>(v)] != nullptr && read[static_cast<std::size_t>(v)] != 0;
  };
  const auto drop = [&](ValueId v) {
    if (!kept(v)) return false;
    producer[static_cast<std::size_t>(v)] = nullptr;
    return true;
  };
  // Readers per value that turn it back to NCHW (an operator following its inputs' layout, whose output is not
  // kept): each pays a transposing read where the producer's one reorder would do, so a value with two or more of
  // them stays NCHW (densenet's Conv outputs, read by every later Concat of their block).
  std::vector<int> converting(value_count, 0);
  for (bool changed = true; changed;) {
    changed = false;
    std::fill(converting.begin(), converting.end(), 0);
    for (const BlockedStep& step : steps) {
      const ValueId out = step.node->outputs.empty() ? no_value : step.node->outputs[0];
      if (step.ports == nullptr || !step.ports->output_follows_inputs || kept(out)) continue;
      for (std::size_t i = 0; i < step.node->inputs.size(); ++i) {
        const ValueId v = step.node->inputs[i];
        if (!offered_layout(step, i).empty() && kept(v)) ++converting[static_cast<std::size_t>(v)];
      }
    }
    for (std::size_t v = 0; v < value_count; ++v) {
      if (converting[v] > 1) changed = drop(static_cast<ValueId>(v)) || changed;
    }
    for (const BlockedStep& step : steps) {
      const ValueId out = step.node->outputs.empty() ? no_value : step.node->outputs[0];
      if (step.ports == nullptr || out == no_value) continue;
      const auto& inputs = step.node->inputs;
      bool keep = kept(out);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        const bool followed = step.ports->output_follows_inputs && step.ports->tied_input != i;
        if (followed && !offered_layout(step, i).empty() && !kept(inputs[i])) keep = false;
      }
      const std::optional<std::size_t> tied = step.ports->tied_input;
      if (tied && *tied < inputs.size() && !kept(inputs[*tied])) keep = false;
      if (!keep) {
        changed = drop(out) || changed;
        if (tied && *tied < inputs.size()) changed = drop(inputs[*tied]) || changed;
      }
    }
  }
  std::vector<std::size_t> bytes(value_count, 0);
  for (std::size_t v = 0; v < value_count; ++v) {
    if (!kept(static_cast<ValueId>(v))) continue;
    producer[v]->keep_output();
    bytes[v] = producer[v]->output_bytes;
  }
  for (const BlockedStep& step : steps) {
    const auto& inputs = step.node->inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!offered_layout(step, i).empty() && inputs[i] != no_value &&
          bytes[static_cast<std::size_t>(inputs[i])] != 0) {
        step.ports->keep_input(i);
      }
    }
  }
  return bytes;
}

}  // namespace rknnxx::host
