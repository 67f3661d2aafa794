#pragma once
// ONNX model + toolkit config -> host model file: what `rknnxx convert` does. The config is
// checked against the model's inputs (toolkit rules, naming the key), and the engine plans
// every shape the converted model promises, so that a model that cannot run is refused at
// conversion, naming the shape and the node, rather than at rknn_init on someone's PC.

#include "model_file.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::host {

struct ConvertProgress {
  std::size_t done = 0;
  std::size_t total = 0;
  std::string_view step;
};

// A layer automatic hybrid quantization keeps in float16: the value it produces, its operator and
// node, and the accuracy analysis's "single" measures of that value (means over the calibration
// samples) that put it past a threshold.
struct Float16Layer {
  std::string value;
  std::string op_type;
  std::string node;
  double cosine = 1.0;
  double euclidean = 0.0;
};

// The model file to save, and the model's inputs and outputs (the file records them only inside
// the ONNX bytes).
struct ConvertedModel {
  ModelFile file;
  std::vector<std::string> inputs;  // names, initializers excluded
  std::vector<std::string> outputs;
  std::vector<Float16Layer> float16_layers;  // automatic hybrid quantization's choice, in execution order
};

// With a `dataset` (the toolkit's build(do_quantization=True, dataset=...)), the model is quantized
// w8a8 (docs/quantization.md): calibrated on the dataset's samples with the config's
// quantized_algorithm, its weights to be quantized with quantized_method at load, and the
// activation parameters stored in the file's "qnt8" section. Without one it stays a float model,
// unless it is a QDQ model (qdq.hpp): its QuantizeLinear/DequantizeLinear pairs make it w8a8 with their
// scales and zero points, and a dataset is refused for it.
//
// With `auto_hybrid` (the toolkit's build(..., auto_hybrid=True); a dataset is required, and the dtype
// must be w8a8), automatic hybrid quantization: after calibration the accuracy analysis runs on
// every sample, and each layer whose single cosine (mean over the samples) is below the config's
// auto_hybrid_cos_thresh, or whose single euclidean distance is above auto_hybrid_euc_thresh when
// that is set, is kept in float16 (listed in the file's "qnt8" section and in float16_layers).
// Without it the two thresholds are not used.
//
// Throws toolkit::ConfigError (a config problem, naming the key), quantize::DatasetError (a dataset
// problem, naming the file and line) or std::runtime_error (a model problem: unreadable ONNX, an unsupported operator, a shape the engine cannot plan, or
// one the runtime cannot describe: an input or output beyond rknn_tensor_attr's rank and 32-bit
// fields, any tensor beyond the engine's max_tensor_bytes, memory beyond rknn_mem_size's fields).
[[nodiscard]] ConvertedModel convert_onnx(std::span<const std::byte> onnx, const toolkit::Config& config,
                                          const std::function<void(const ConvertProgress&)>& progress = {},
                                          const std::filesystem::path& dataset = {}, bool auto_hybrid = false);

}  // namespace rknnxx::host
