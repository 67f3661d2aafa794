#include "host_model.hpp"

#include <utility>

#include <fmt/format.h>

#include <rknnxx/version.hpp>

#include "config_json.hpp"

namespace rknnxx::host {

std::vector<ConverterNote> host_converter_unsupported(const toolkit::Config& c, bool do_quantization) {
  std::vector<ConverterNote> out;
  // quantized_dtype, quantized_algorithm and quantized_method are judged by the quantizer
  // (quantize::settings_for, docs/quantization.md); quant_img_RGB2BGR is honoured by the dataset reader;
  // auto_hybrid_cos_thresh and auto_hybrid_euc_thresh are read by automatic hybrid quantization
  // (convert_onnx's auto_hybrid) and, as in the toolkit, unused without it.
  if (do_quantization) {
    if (!c.custom_ops.empty())
      out.push_back({"custom_ops",
                     "quantizing a model with custom operators is not implemented in the host converter "
                     "(calibration would have to run them)"});
  }
  if (c.quantize_weight)
    out.push_back({"quantize_weight",
                   "int8-stored weights in a float model are not implemented yet in the host "
                   "converter"});
  if (c.remove_weight)
    out.push_back({"remove_weight", "weight-sharing slave models are not implemented yet in the host converter"});
  if (c.remove_reshape)
    out.push_back({"remove_reshape",
                   "removing input/output Reshapes (which changes the model's I/O shapes) is not "
                   "implemented yet in the host converter"});
  return out;
}

std::vector<ConverterNote> host_converter_ignored(const toolkit::Config& c) {
  std::vector<ConverterNote> out;
  auto ignored = [&](std::string_view key, bool set, std::string_view why) {
    if (set) out.push_back({std::string(key), std::string(why)});
  };
  const toolkit::Config defaults;
  ignored("optimization_level", c.optimization_level != defaults.optimization_level,
          "the host runs the ONNX graph as it is, without the NPU compiler's rewrites");
  ignored("compress_weight", c.compress_weight, "only changes the size of a vendor model file");
  ignored("single_core_mode", c.single_core_mode, "only changes the NPU code of a vendor model");
  ignored("model_pruning", c.model_pruning, "only changes the size and speed of a vendor model");
  ignored("op_target", !c.op_target.empty(), "the host runs every operator on the CPU");
  ignored("sparse_infer", c.sparse_infer, "only changes the speed of a vendor model");
  ignored("enable_flash_attention", c.enable_flash_attention, "only changes the speed and size of a vendor model");
  ignored("memory_plan_strategy", c.memory_plan_strategy != defaults.memory_plan_strategy,
          "the host plans its own memory");
  ignored("compute_order", c.compute_order != defaults.compute_order, "the host chooses its own operator order");
  if (!c.quant_img_RGB2BGR.empty())
    out.push_back({"quant_img_RGB2BGR", "only read for quantization, and never recorded in a model"});
  return out;
}

ModelFile make_host_model(const toolkit::Config& config, std::span<const toolkit::ModelInput> inputs,
                          std::vector<std::byte> onnx, bool do_quantization) {
  config.validate_against(inputs);
  if (auto unsupported = host_converter_unsupported(config, do_quantization); !unsupported.empty()) {
    const ConverterNote& first = unsupported.front();
    throw toolkit::ConfigError(first.key, fmt::format("config: {}: {}", first.key, first.reason));
  }
  ModelFile m;
  m.target_platform = *config.target_platform;  // validate() ensured it is set
  m.float_dtype = config.float_dtype;
  m.producer = fmt::format("rknnxx {}", rknnxx::version_string);
  m.custom_string = config.custom_string;
  m.config_json = config_to_json(config, ConfigJsonFor::model_file, -1);
  if (config.mean_values || config.std_values) {
    // One entry per input; channel counts come from whichever list is given (validated to agree).
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::size_t channels =
          config.mean_values ? (*config.mean_values)[i].size() : (*config.std_values)[i].size();
      InputPreprocess p;
      p.mean = config.mean_values ? (*config.mean_values)[i] : std::vector<double>(channels, 0.0);
      p.std = config.std_values ? (*config.std_values)[i] : std::vector<double>(channels, 1.0);
      m.preprocess.push_back(std::move(p));
    }
  }
  m.dynamic_input = config.dynamic_input;
  m.onnx = std::move(onnx);
  return m;
}

}  // namespace rknnxx::host
