// The per-plan pass of blocked_layout.hpp (docs/runtime-extensions.md, "Blocked values between Convs").

#include "blocked_layout.hpp"

#include "engine_error.hpp"

#include <fmt/format.h>

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

namespace {

// Whether the step offers to read its input i in its input layout.
bool offers_input(const BlockedStep& step, std::size_t i) {
  return step.ports != nullptr && !step.ports->input_layout.empty() &&
      (i == step.ports->input || step.ports->input == every_input);
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
      // Only an input offered in this very layout (a Conv's residual, input 3, is read as NCHW).
      const bool takes =
          offers_input(step, i) && producer[v] != nullptr && step.ports->input_layout == producer[v]->output_layout;
      if (!takes) producer[v] = nullptr;
    }
  }
  for (ValueId out : graph_outputs) {
    producer[static_cast<std::size_t>(out)] = nullptr;  // callers see NCHW
  }
  // An output that follows its inputs' layout is kept only when they are; in plan order, so that the inputs
  // are decided first (a MaxPool after a Concat after MaxPools).
  const auto kept = [&](std::size_t v) { return producer[v] != nullptr && read[v] != 0; };
  for (const BlockedStep& step : steps) {
    const ValueId out = step.node->outputs.empty() ? no_value : step.node->outputs[0];
    if (step.ports == nullptr || !step.ports->output_follows_inputs || out == no_value) continue;
    const auto& inputs = step.node->inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (offers_input(step, i) && (inputs[i] == no_value || !kept(static_cast<std::size_t>(inputs[i])))) {
        producer[static_cast<std::size_t>(out)] = nullptr;
      }
    }
  }
  std::vector<std::size_t> bytes(value_count, 0);
  for (std::size_t v = 0; v < value_count; ++v) {
    if (!kept(v)) continue;
    producer[v]->keep_output();
    bytes[v] = producer[v]->output_bytes;
  }
  for (const BlockedStep& step : steps) {
    const auto& inputs = step.node->inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (offers_input(step, i) && inputs[i] != no_value && bytes[static_cast<std::size_t>(inputs[i])] != 0) {
        step.ports->keep_input(i);
      }
    }
  }
  return bytes;
}

}  // namespace rknnxx::host
