#pragma once
// CONFIG.json <-> toolkit::Config, with the toolkit's parameter names as keys:
//   {"target_platform": "rk3588", "mean_values": [[0, 0, 0]], "std_values": [[255, 255, 255]],
//    "dynamic_input": [[[1, 3, 224, 224]], [[1, 3, 160, 160]]]}
// null stands for the toolkit's None where that is its default (mean_values, std_values, quant_img_RGB2BGR,
// quantized_*, target_platform, custom_string, op_target, dynamic_input, auto_hybrid_euc_thresh).
// As in the toolkit, quant_img_RGB2BGR takes one boolean or one per input, and a single input's
// mean_values/std_values may be a flat list ([103.94, 116.78, 123.68], as in the SDK guide's example).
// do_quantization and dataset are not config() parameters (they belong to build()) and are refused here.
// Errors are toolkit::ConfigError naming the key: unknown keys (with the valid ones listed), wrong JSON
// types (with the expected type), and whatever Config::check() finds.
// rknnxx adds one key of its own (Config::extension_keys): "custom_ops": [{"op_type": "MyOp", "domain": "my.domain"}]
// lists operators the model keeps for rknn_register_custom_ops (docs/custom-operators.md); written only when not empty.

#include <filesystem>
#include <string>
#include <string_view>

#include <rknnxx/toolkit/config.hpp>

#include "model_file.hpp"

namespace rknnxx::host {

// Parses and validates (Config::validate) one JSON object.
[[nodiscard]] toolkit::Config config_from_json(std::string_view json_text);
[[nodiscard]] toolkit::Config load_config_json(const std::filesystem::path& path);

enum class ConfigJsonFor {
  config_file,  // every key: what config_from_json reads back into an equal Config
  model_file,   // what a converted model records: without quant_img_RGB2BGR (the toolkit does not keep it)
};

// The normalized config: every key in the toolkit's order, defaults written out, null for unset
// optional values. indent < 0 gives one line.
[[nodiscard]] std::string config_to_json(const toolkit::Config& config,
                                         ConfigJsonFor purpose = ConfigJsonFor::config_file, int indent = 2);

// What a model file holds, for `rknnxx inspect`: everything but the ONNX bytes (their size and CRC-32 instead).
[[nodiscard]] std::string model_file_metadata_json(const ModelFile& model, int indent = 2);

}  // namespace rknnxx::host
