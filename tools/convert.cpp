// rknnxx convert MODEL.onnx -c CONFIG.json [--dataset DATASET.txt [--auto-hybrid]] [-o OUTPUT.hrknn] [--json]: ONNX +
// the toolkit's config() -> host model (quantized with --dataset, float otherwise), and a summary of what was
// converted (inputs and outputs as the host runtime reports them, the layers --auto-hybrid keeps in float16).

#include "commands.hpp"
#include "model_report.hpp"
#include "progress.hpp"

#include "convert/converter.hpp"
#include "convert/config_json.hpp"
#include "convert/model_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace rknnxx::tool {

namespace {

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

// "w8a8 normal calibrated on 16 samples, weights per channel", "w4a16 gdq on 16 samples, weights per group64",
// "w8a8 from the model's QuantizeLinear/DequantizeLinear pairs".
std::string quantization_summary(const rknnxx::host::ModelQuantization& q) {
  if (q.samples == 0) return "w8a8 from the model's QuantizeLinear/DequantizeLinear pairs";
  using rknnxx::toolkit::QuantizedDtype;
  const bool weight_only =
      q.dtype != QuantizedDtype::w8a8 && q.dtype != QuantizedDtype::w16a16i_dfp;  // no activations to calibrate
  return fmt::format("{} {} {} {} samples, weights per {}", rknnxx::toolkit::spelling(q.dtype),
                     rknnxx::toolkit::spelling(q.algorithm), weight_only ? "on" : "calibrated on", q.samples,
                     q.method.name());
}

// The layers automatic hybrid quantization keeps in float16, as a table.
void print_float16_layers(const std::vector<rknnxx::host::Float16Layer>& layers) {
  if (layers.empty()) {
    fmt::print("auto hybrid: no layer past the thresholds; every layer stays int8\n");
    return;
  }
  std::size_t name_width = 4;
  std::size_t op_width = 7;
  for (const auto& l : layers) {
    name_width = std::max(name_width, l.value.size());
    op_width = std::max(op_width, l.op_type.size());
  }
  fmt::print("auto hybrid: {} layer{} kept in float16\n", layers.size(), layers.size() == 1 ? "" : "s");
  fmt::print("  {:<{}}  {:<{}}  {:>12}  {:>12}\n", "name", name_width, "op_type", op_width, "single cos", "single euc");
  for (const auto& l : layers)
    fmt::print("  {:<{}}  {:<{}}  {:>12.6f}  {:>12.5g}\n", l.value, name_width, l.op_type, op_width, l.cosine,
               l.euclidean);
}

}  // namespace

int convert(const ConvertOptions& o) {
  if (o.auto_hybrid && o.dataset.empty())
    throw UsageError("--auto-hybrid needs --dataset: hybrid quantization keeps some layers of a model quantized "
                     "on a dataset in float16");
  const auto config = rknnxx::host::load_config_json(o.config);
  std::string output = o.output;
  if (output.empty())
    output = std::filesystem::path(o.model).replace_extension(rknnxx::host::model_file_extension).string();
  ProgressBar bar;
  const auto converted = rknnxx::host::convert_onnx(
      read_bytes(o.model), config,
      [&](const auto& p) {
        if (p.done == 0) bar.finish();  // a new line for a new bar
        bar.update(p.step, p.done, p.total);
      },
      o.dataset, o.auto_hybrid);
  bar.finish();
  const auto& file = converted.file;
  rknnxx::host::save_model_file(output, file);
  // The tensors as the host runtime reports them for the converted file (which also proves it loads).
  auto ctx = open_model(output, {.runtime = Runtime::load(RuntimeChoice::host())});
  nlohmann::json j;
  j["model"] = o.model;
  j["config"] = o.config;
  j["output"] = output;
  j["output_bytes"] = std::filesystem::file_size(output);
  j["target_platform"] = std::string(rknnxx::toolkit::spelling(file.target_platform));
  j["float_dtype"] = std::string(rknnxx::toolkit::spelling(file.float_dtype));
  j["custom_string"] = file.custom_string ? nlohmann::json(*file.custom_string) : nlohmann::json(nullptr);
  if (const auto& q = file.quantization)
    j["quantization"] = {{"dtype", std::string(rknnxx::toolkit::spelling(q->dtype))},
                         {"algorithm", std::string(rknnxx::toolkit::spelling(q->algorithm))},
                         {"method", q->method.name()},
                         {"samples", q->samples},
                         {"tensors", q->tensors.size()}};
  else j["quantization"] = nullptr;
  if (o.auto_hybrid) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : converted.float16_layers)
      layers.push_back({{"name", l.value},
                        {"op_type", l.op_type},
                        {"node", l.node},
                        {"cosine", l.cosine},
                        {"euclidean", l.euclidean}});
    j["float16_layers"] = std::move(layers);
  }
  j["dynamic_shapes"] = file.dynamic_input ? nlohmann::json(file.dynamic_input->size()) : nlohmann::json(nullptr);
  for (const bool input : {true, false}) {
    nlohmann::json list = nlohmann::json::array();
    const auto infos = input ? ctx.input_infos() : ctx.output_infos();
    for (std::size_t i = 0; i < infos.size(); ++i) {
      auto t = attr_json(infos[i]);
      if (input && i < file.preprocess.size())
        t["preprocess"] = {{"mean", file.preprocess[i].mean}, {"std", file.preprocess[i].std}};
      list.push_back(std::move(t));
    }
    j[input ? "inputs" : "outputs"] = std::move(list);
  }
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  const auto count = [](std::size_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  fmt::print("converted {} -> {} ({}, {}, {}, {}{})\n", o.model, output, j["target_platform"].get<std::string>(),
             file.quantization ? quantization_summary(*file.quantization) : j["float_dtype"].get<std::string>(),
             count(j["inputs"].size(), "input"), count(j["outputs"].size(), "output"),
             file.dynamic_input ? fmt::format(", {} dynamic shapes", file.dynamic_input->size()) : "");
  if (o.auto_hybrid) print_float16_layers(converted.float16_layers);
  return 0;
}

}  // namespace rknnxx::tool
