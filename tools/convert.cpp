// rknnxx convert MODEL.onnx -c CONFIG.json [-o OUTPUT.hrknn]: ONNX + the toolkit's config() -> host model.

#include "commands.hpp"
#include "progress.hpp"

#include "converter.hpp"
#include "convert/config_json.hpp"
#include "model_file.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rknnxx::tool {

namespace {

struct ConvertOptions {
  std::string model, config, output;
};

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

int convert(const ConvertOptions& o) {
  const auto config = rknnxx::host::load_config_json(o.config);
  std::string output = o.output;
  if (output.empty())
    output = std::filesystem::path(o.model).replace_extension(rknnxx::host::model_file_extension).string();
  ProgressBar bar;
  const auto converted = rknnxx::host::convert_onnx(read_bytes(o.model), config,
                                                    [&](const auto& p) { bar.update(p.step, p.done, p.total); });
  bar.finish();
  const auto& file = converted.file;
  rknnxx::host::save_model_file(output, file);
  const std::size_t inputs = converted.inputs.size();
  fmt::print("converted {} -> {} ({}, {} input{}{})\n", o.model, output, rknnxx::toolkit::spelling(file.target_platform),
             inputs, inputs == 1 ? "" : "s",
             file.dynamic_input ? fmt::format(", {} dynamic shapes", file.dynamic_input->size()) : "");
  return 0;
}

} // namespace

Command add_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  auto* cmd = app.add_subcommand("convert", "ONNX model + the toolkit's config() as JSON -> host model file");
  cmd->add_option("model", o->model, "ONNX model")->required()->check(CLI::ExistingFile);
  cmd->add_option("-c,--config", o->config, "CONFIG.json with the toolkit's config() parameter names")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "output file (default: MODEL with the .hrknn extension)");
  return {cmd, [o] { return convert(*o); }};
}

} // namespace rknnxx::tool
