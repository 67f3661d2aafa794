#pragma once
// ONNX model + toolkit config -> host model file: what `rknnxx convert` does. The config is
// checked against the model's inputs (toolkit rules, naming the key), and the engine plans
// every shape the converted model promises, so that a model that cannot run is refused at
// conversion, naming the shape and the node, rather than at rknn_init on someone's PC.

#include "model_file.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace rknnxx::host {

struct ConvertProgress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::string_view step;
};

// Throws toolkit::ConfigError (a config problem, naming the key) or std::runtime_error (a
// model problem: unreadable ONNX, an unsupported operator, a shape the engine cannot plan).
[[nodiscard]] ModelFile convert_onnx(std::span<const std::byte> onnx, const toolkit::Config& config,
                                     const std::function<void(const ConvertProgress&)>& progress = {});

} // namespace rknnxx::host
