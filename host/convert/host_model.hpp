#pragma once
// From a toolkit config and an ONNX model to the host model file: what the host converter supports of the
// config, and the ModelFile it writes. The ONNX reading itself (the model's inputs) is the engine's; this
// takes the inputs as toolkit::ModelInput so that it does not depend on the engine.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <rknnxx/toolkit/config.hpp>

#include "model_file.hpp"

namespace rknnxx::host {

// A config key the host converter cannot honour (or honours by doing nothing), and why.
struct ConverterNote {
  std::string key;
  std::string reason;
  friend bool operator==(const ConverterNote&, const ConverterNote&) = default;
};

// The set keys (those not at their default) that the host converter does not support yet, with
// quantization (do_quantization) or without: converting with any of them is refused.
[[nodiscard]] std::vector<ConverterNote> host_converter_unsupported(const toolkit::Config& config,
                                                                    bool do_quantization);

// The set keys that only change how the vendor's compiler lays the model out for the NPU (size, speed,
// memory, placement) and nothing a host application can observe; the host converter accepts and ignores
// them, and `rknnxx convert` says so. quant_img_RGB2BGR is listed too: only read while quantizing.
[[nodiscard]] std::vector<ConverterNote> host_converter_ignored(const toolkit::Config& config);

// Validates the config against the model's inputs, refuses what host_converter_unsupported lists
// (toolkit::ConfigError naming the key) and returns the model file to save. config_json is the
// normalized config without quant_img_RGB2BGR, which converted models do not record.
[[nodiscard]] ModelFile make_host_model(const toolkit::Config& config, std::span<const toolkit::ModelInput> inputs,
                                        std::vector<std::byte> onnx, bool do_quantization = false);

}  // namespace rknnxx::host
