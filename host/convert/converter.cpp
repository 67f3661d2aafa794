#include "converter.hpp"

#include "host_model.hpp"
#include "qdq.hpp"
#include "engine/engine_error.hpp"
#include "engine/session.hpp"
#include "engine/onnx_reader.hpp"
#include "quantize/accuracy.hpp"
#include "quantize/calibrate.hpp"
#include "quantize/qnt8_section.hpp"
#include "quantize/settings.hpp"

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/dims.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <unordered_set>

namespace rknnxx::host {

namespace {

// The model's real inputs (initializers that older exporters also list as inputs are not).
std::vector<toolkit::ModelInput> model_inputs(const onnx::ModelProto& model) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : model.graph.initializer) initializers.insert(init.name);
  std::vector<toolkit::ModelInput> inputs;
  for (const auto& value : model.graph.input) {
    if (initializers.contains(value.name)) continue;
    toolkit::ModelInput input;
    input.name = value.name;
    for (const auto& d : value.shape) input.shape.push_back(d.has_value && d.value > 0 ? d.value : -1);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

// An input or output must be what rknn_tensor_attr can describe: the library's Dims (rank up to
// RKNN_MAX_DIMS, extents of at least 1) of 32-bit extents. Its size fits the attr's 32-bit fields
// because the engine holds no tensor beyond max_tensor_bytes.
void check_describable(std::string_view role, std::size_t index, std::string_view name, const TensorInfo& info) {
  auto refuse = [&](std::string_view why) {
    throw std::runtime_error(fmt::format("{} {} '{}' is {}, which the runtime cannot describe: {}", role, index, name,
                                         info_string(info), why));
  };
  std::vector<std::uint32_t> extents;
  for (int64_t d : info.shape) {
    if (d > std::numeric_limits<std::remove_all_extents_t<decltype(rknn_tensor_attr::dims)>>::max())
      refuse(fmt::format("the extent {} exceeds the 32-bit dims of rknn_tensor_attr", d));
    extents.push_back(static_cast<std::uint32_t>(d));
  }
  try {
    (void)Dims(std::span<const std::uint32_t>(extents));
  } catch (const rknnxx::Error& e) {
    refuse(e.message());
  }
}

// The memory a plan needs must fit the 32-bit fields of rknn_mem_size that report it.
void check_memory(std::string_view what, std::string_view field, std::size_t bytes) {
  constexpr std::uint64_t limit = std::numeric_limits<decltype(rknn_mem_size::total_internal_size)>::max();
  if (bytes > limit)
    throw std::runtime_error(fmt::format("{} take {} bytes, more than the {} bytes that rknn_mem_size::{} can report",
                                         what, bytes, limit, field));
}

}  // namespace

// Calibrates the float graph on the dataset and returns the "qnt8" section. Every float input and
// output must get parameters: the runtime reports them as INT8 tensors with their zero point and scale
// (INT16 ones with their fractional length for w16a16i_dfp).
// The weight-only types (w8a16, w4a16) keep float16 activations: the dataset is read and every sample
// loaded (a bad one is refused as for w8a8), and the section records their number and no tensors;
// with gdq the float graph runs over them to choose the weights' clip ratios.
// Automatic hybrid quantization: the layers past the config's thresholds on the accuracy analysis of
// every sample, their values recorded in `table`.
std::vector<Float16Layer> choose_float16_layers(const Graph& graph, quantize::ActivationTable& table,
                                                quantize::Method method, const toolkit::Config& config,
                                                std::span<const quantize::CalibrationInput> inputs,
                                                std::span<const quantize::DatasetSample> samples,
                                                const std::filesystem::path& dataset,
                                                const std::function<void(std::size_t, std::size_t)>& on_sample) {
  std::vector<Float16Layer> layers;  // every analyzed layer, summed over the samples, then the chosen
  std::map<std::string, std::size_t> row_of;
  on_sample(0, samples.size());
  for (std::size_t done = 0; done < samples.size(); ++done) {
    const auto tensors = quantize::load_sample(samples[done], inputs, dataset.string());
    std::vector<quantize::TensorAccuracy> report;
    try {
      report = quantize::analyze_accuracy(graph, table, method, tensors);
    } catch (const EngineError& e) {
      throw quantize::DatasetError(fmt::format("{}:{}: {}", dataset.string(), samples[done].line, e.what()));
    }
    for (const quantize::TensorAccuracy& row : report) {
      if (row.op_type == "input") continue;  // a graph input is no layer
      auto [it, added] = row_of.try_emplace(row.name, layers.size());
      if (added) layers.push_back({row.name, row.op_type, row.node, 0.0, 0.0});
      layers[it->second].cosine += row.single.cosine;
      layers[it->second].euclidean += row.single.euclidean;
    }
    on_sample(done + 1, samples.size());
  }
  std::erase_if(layers, [&](Float16Layer& layer) {
    layer.cosine /= static_cast<double>(samples.size());
    layer.euclidean /= static_cast<double>(samples.size());
    const bool past = layer.cosine < config.auto_hybrid_cos_thresh ||
        (config.auto_hybrid_euc_thresh && layer.euclidean > *config.auto_hybrid_euc_thresh);
    return !past;
  });
  for (const Float16Layer& layer : layers) table.float16.insert(layer.value);
  return layers;
}

ModelQuantization quantize_model(const onnx::ModelProto& model, std::span<const toolkit::ModelInput> inputs,
                                 const toolkit::Config& config, const std::filesystem::path& dataset,
                                 const std::function<void(std::size_t, std::size_t)>& on_sample,
                                 std::vector<Float16Layer>* float16_layers) {
  const quantize::Settings settings = quantize::settings_for(config);
  const auto calibration_inputs = quantize::calibration_inputs(inputs, config);
  const auto samples = quantize::read_dataset(dataset, inputs.size());
  on_sample(0, samples.size());
  const Graph graph = quantize::inference_graph(model);
  if (quantize::weight_only(settings.dtype)) {
    quantize::ActivationTable table;
    table.algorithm = settings.algorithm;
    table.samples = samples.size();
    if (settings.algorithm == toolkit::QuantizedAlgorithm::gdq)  // runs the float graph over the samples
      return quantize::qnt8_section(table, settings,
                                    quantize::choose_gdq_clips(graph, calibration_inputs, samples, settings.method,
                                                               quantize::weight_range(settings.dtype),
                                                               {.progress = false, .on_sample = on_sample},
                                                               dataset.string()));
    for (std::size_t done = 0; done < samples.size(); ++done) {
      (void)quantize::load_sample(samples[done], calibration_inputs, dataset.string());
      on_sample(done + 1, samples.size());
    }
    return quantize::qnt8_section(table, settings);
  }
  quantize::ActivationTable table = quantize::calibrate(graph, calibration_inputs, samples,
                                                        {.algorithm = settings.algorithm,
                                                         .ints = quantize::activation_range(settings.dtype),
                                                         .progress = false,
                                                         .on_sample = on_sample},
                                                        dataset.string());
  auto require = [&](std::string_view role, const std::string& name, DataType type) {
    if (type != DataType::float32 && type != DataType::float16) return;
    if (!table.params.contains(name))
      throw std::runtime_error(fmt::format("quantization: the {} '{}' got no quantization parameters from the dataset "
                                           "(never computed, or only non-finite values)",
                                           role, name));
  };
  for (const auto& value : graph.inputs()) require("input", graph.value(value).name, graph.value(value).dtype);
  for (const auto& value : graph.outputs()) require("output", graph.value(value).name, graph.value(value).dtype);
  if (float16_layers != nullptr)
    *float16_layers =
        choose_float16_layers(graph, table, settings.method, config, calibration_inputs, samples, dataset, on_sample);
  return quantize::qnt8_section(table, settings);
}

ConvertedModel convert_onnx(std::span<const std::byte> onnx_bytes, const toolkit::Config& config,
                            const std::function<void(const ConvertProgress&)>& progress,
                            const std::filesystem::path& dataset, bool auto_hybrid) {
  auto report = [&](std::size_t done, std::size_t total, std::string_view step) {
    if (progress) progress({done, total, step});
  };
  const onnx::ModelProto model = onnx::read_model(onnx_bytes);
  const auto inputs = model_inputs(model);
  const bool do_quantization = !dataset.empty();
  // A QDQ model is quantized by its own QuantizeLinear/DequantizeLinear pairs: the toolkit's
  // build(do_quantization=False) of a QAT model. A dataset would calibrate over the parameters it carries.
  const bool qdq = is_qdq_model(model);
  if (qdq && do_quantization)
    throw std::runtime_error("QDQ model: its QuantizeLinear/DequantizeLinear pairs carry its quantization "
                             "parameters; convert it without a dataset");
  if (auto_hybrid && !do_quantization)
    throw std::runtime_error("automatic hybrid quantization keeps some layers of a quantized model in float16: it "
                             "needs a dataset to quantize the model with");
  ModelFile file = make_host_model(config, inputs, {onnx_bytes.begin(), onnx_bytes.end()}, do_quantization || qdq);
  if (do_quantization || qdq) {
    const quantize::Settings settings =
        quantize::settings_for(config);  // refuses a dtype/algorithm/method before any work
    if (auto_hybrid && settings.dtype != toolkit::QuantizedDtype::w8a8)
      throw toolkit::ConfigError(
          "quantized_dtype",
          fmt::format("config: quantized_dtype '{}' with automatic hybrid quantization: it keeps "
                      "some layers of a w8a8 model in float16, and {} keeps every activation in "
                      "float16 already",
                      toolkit::spelling(settings.dtype), toolkit::spelling(settings.dtype)));
  }

  // Every shape the model promises must plan: the static shapes, or each dynamic group.
  std::vector<std::vector<std::vector<int64_t>>> groups;
  if (file.dynamic_input) {
    groups = *file.dynamic_input;
  } else {
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& input : inputs) {
      for (int64_t d : input.shape)
        if (d <= 0)
          throw std::runtime_error(fmt::format(
              "input '{}' has dims {} with unknown sizes: give dynamic_input in the config, or export the model "
              "with fixed shapes",
              input.name, dims_text(input.shape)));
      shapes.push_back(input.shape);
    }
    groups.push_back(std::move(shapes));
  }
  std::vector<DataType> types;
  {
    std::unordered_set<std::string> initializers;
    for (const auto& init : model.graph.initializer) initializers.insert(init.name);
    for (const auto& value : model.graph.input)
      if (!initializers.contains(value.name)) types.push_back(value.elem_type);
  }
  Session session(Graph(model, config.custom_ops), SessionOptions{.threads = 1});
  check_memory("the weights", "total_weight_size", session.weight_bytes());
  const auto input_names = session.input_names();
  const auto output_names = session.output_names();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    report(g, groups.size(), "planning shapes");
    std::vector<TensorInfo> infos;
    for (std::size_t i = 0; i < groups[g].size(); ++i) infos.push_back({types.at(i), groups[g][i]});
    try {
      for (std::size_t i = 0; i < infos.size(); ++i) check_describable("input", i, input_names.at(i), infos[i]);
      session.prepare(infos);
      const auto outputs = session.output_infos();
      const auto kinds = session.output_shape_kinds();
      for (std::size_t o = 0; o < outputs.size(); ++o) {
        if (kinds[o] == OutputShapeKind::unbounded)
          throw std::runtime_error(fmt::format(
              "output {} ('{}'): its shape is decided while running and no bound is known for it, so the runtime "
              "could not report a size to allocate (docs/c-interface.md#run-time-output-shapes)",
              o, output_names.at(o)));
        check_describable("output", o, output_names.at(o), outputs[o]);  // a run-time shape: its bound
      }
      check_memory("the intermediate tensors", "total_internal_size", session.stats().arena_bytes);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(fmt::format("shape group {} of {}: {}", g, groups.size(), e.what()));
    }
  }
  report(groups.size(), groups.size(), "planning shapes");
  if (qdq) {
    std::vector<TensorInfo> infos;
    for (std::size_t i = 0; i < groups.front().size(); ++i) infos.push_back({types.at(i), groups.front()[i]});
    file.quantization = qdq_quantization(model, config, infos);
  }
  std::vector<Float16Layer> float16_layers;
  if (do_quantization) {
    std::string_view step = "calibrating";
    file.quantization = quantize_model(
        model, inputs, config, dataset,
        [&](std::size_t done, std::size_t total) {
          report(done, total, step);
          if (done == total) step = "choosing float16 layers";  // the analysis follows calibration
        },
        auto_hybrid ? &float16_layers : nullptr);
  }
  return {std::move(file), input_names, output_names, std::move(float16_layers)};
}

}  // namespace rknnxx::host
