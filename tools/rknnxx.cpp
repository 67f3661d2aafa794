// The rknnxx command line. Subcommands:
//   convert MODEL.onnx -c CONFIG.json -o OUTPUT.hrknn   ONNX + the toolkit's config() -> host model
// (inspect, run and bench follow with the main-job issue.)
// Every failure is one line naming the problem and a non-zero exit code.

#include "converter.hpp"
#include "convert/config_json.hpp"
#include "model_file.hpp"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open '{}'", path));
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

int convert(const std::string& model_path, const std::string& config_path, std::string output) {
  const auto config = rknnxx::host::load_config_json(config_path);
  if (output.empty())
    output = std::filesystem::path(model_path).replace_extension(rknnxx::host::model_file_extension).string();
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto file = rknnxx::host::convert_onnx(read_bytes(model_path), config, [&](const auto& p) {
    if (!tty || p.total == 0) return;
    const int width = 30;
    const int filled = static_cast<int>(width * p.done / p.total);
    fmt::print(stderr, "\r{} [{}{}] {}/{}", p.step, std::string(filled, '#'), std::string(width - filled, ' '), p.done,
               p.total);
    if (p.done == p.total) fmt::print(stderr, "\n");
  });
  rknnxx::host::save_model_file(output, file);
  fmt::print("converted {} -> {} ({}, {} inputs{})\n", model_path, output,
             rknnxx::toolkit::name_of(file.target_platform), file.preprocess.size(),
             file.dynamic_input ? fmt::format(", {} dynamic shapes", file.dynamic_input->size()) : "");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"rknnxx: inspect, run, time and convert models for Rockchip NPUs and the host runtime"};
  app.require_subcommand(1);

  std::string model, config, output;
  auto* convert_cmd = app.add_subcommand("convert", "ONNX model + the toolkit's config() as JSON -> host model file");
  convert_cmd->add_option("model", model, "ONNX model")->required()->check(CLI::ExistingFile);
  convert_cmd->add_option("-c,--config", config, "CONFIG.json with the toolkit's config() parameter names")
      ->required()
      ->check(CLI::ExistingFile);
  convert_cmd->add_option("-o,--output", output, "output file (default: MODEL with the .hrknn extension)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*convert_cmd) return convert(model, config, output);
  } catch (const std::exception& e) {
    fmt::print(stderr, "rknnxx {}: {}\n", app.get_subcommands().front()->get_name(), e.what());
    return 1;
  }
  return 0;
}
