#include "converter.hpp"

#include "convert/host_model.hpp"
#include "engine/engine_error.hpp"
#include "engine/session.hpp"
#include "engine/onnx_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
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

} // namespace

ModelFile convert_onnx(std::span<const std::byte> onnx_bytes, const toolkit::Config& config,
                       const std::function<void(const ConvertProgress&)>& progress) {
  auto report = [&](std::size_t done, std::size_t total, std::string_view step) {
    if (progress) progress({done, total, step});
  };
  const onnx::ModelProto model = onnx::read_model(onnx_bytes);
  const auto inputs = model_inputs(model);
  ModelFile file = make_host_model(config, inputs, {onnx_bytes.begin(), onnx_bytes.end()});

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
              "input '{}' has dims [{}] with unknown sizes: give dynamic_input in the config, or export the model "
              "with fixed shapes", input.name, fmt::join(input.shape, ",")));
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
  Session session(model, SessionOptions{.threads = 1});
  for (std::size_t g = 0; g < groups.size(); ++g) {
    report(g, groups.size(), "planning shapes");
    std::vector<TensorInfo> infos;
    for (std::size_t i = 0; i < groups[g].size(); ++i) infos.push_back({types.at(i), groups[g][i]});
    try {
      session.prepare(infos);
    } catch (const EngineError& e) {
      throw std::runtime_error(fmt::format("shape group {} of {}: {}", g, groups.size(), e.what()));
    }
  }
  report(groups.size(), groups.size(), "planning shapes");
  return file;
}

} // namespace rknnxx::host
