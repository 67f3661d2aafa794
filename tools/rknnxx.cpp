// The rknnxx command line:
//   rknnxx inspect MODEL [--json]                  everything the runtime says about a model
//   rknnxx run MODEL --input FILE... [--shape S]   one inference from .npy/.png/.jpg; outputs as .npy
//   rknnxx bench MODEL [-n N] [--json]             inputs_set / run / outputs_get and zero-copy timings
//   rknnxx profile MODEL [--json] [--svg FILE]     per-operator time (RKNN_QUERY_PERF_DETAIL)
//   rknnxx convert MODEL.onnx -c CONFIG.json       ONNX + the toolkit's config() -> host model
//   rknnxx accuracy MODEL.onnx -c CONFIG.json --dataset DATASET.txt
//                                                  w8a8 against float32 per layer (CSV, JSON, SVG)
// Every failure is one line naming the problem, with the runtime's own explanation when it gave
// one. Exit codes: 0 success, 1 failure, 2 usage error (exit_codes below, printed by --help).

#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <rknnxx/version.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;
constexpr const char* exit_codes = "Exit codes: 0 success, 1 failure (one line on stderr says why), 2 usage error.";

}  // namespace

namespace rknnxx::tool {
namespace {

// A subcommand as parsed: its CLI11 app (set when the command line named it) and what runs it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// The check of a count option (-n, --threads, ...): a whole number from `min` to `max`, refused with
// what is wrong ("-5 is not a whole number from 1 to 1000000") instead of wrapping to 2^64 - 5.
CLI::Validator count_from(std::size_t min, std::size_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::size_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc{} && ptr == end && value >= min && value <= max) return {};
        return text + " is not a whole number from " + std::to_string(min) + " to " + std::to_string(max);
      },
      "COUNT " + std::to_string(min) + ".." + std::to_string(max));
}

Command add_convert(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  auto* cmd = app.add_subcommand("convert", "ONNX model + the toolkit's config() as JSON -> host model file");
  cmd->add_option("model", o->model, "ONNX model")->required()->check(CLI::ExistingFile);
  cmd->add_option("-c,--config", o->config, "CONFIG.json with the toolkit's config() parameter names")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "--dataset", o->dataset,
         "DATASET.txt: quantize the model w8a8 (the toolkit's do_quantization=True), calibrating on these "
         "samples: one line per sample, one .jpg/.png/.bmp image or .npy array per model input separated by "
         "spaces, relative paths from the dataset's folder. Without it the model stays float, unless it is a QDQ "
         "(QAT) model: QuantizeLinear/DequantizeLinear pairs on its activations make it w8a8 with their "
         "scales and zero points, and it takes no dataset")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--auto-hybrid", o->auto_hybrid,
                "with --dataset: automatic hybrid quantization (the toolkit's build(auto_hybrid=True)): keep in "
                "float16 the layers whose single cosine against float, on the dataset's samples, is below the "
                "config's auto_hybrid_cos_thresh (default 0.98), or whose euclidean distance is above "
                "auto_hybrid_euc_thresh when set, and list them; w8a8 only. Without it both thresholds are unused");
  cmd->add_option("-o,--output", o->output, "output file (default: MODEL with the .hrknn extension)");
  cmd->add_flag("--json", o->json,
                "print a JSON summary of what was converted (platform, inputs, outputs, "
                "normalization, the float16 layers of --auto-hybrid) instead of the line");
  return {cmd, [o] { return convert(*o); }};
}

Command add_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "what the runtime says about a model: tensors, shapes, memory, versions");
  cmd->add_option("model", o->model, "model file (.hrknn on the host runtime, .rknn on a board)")->required();
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  return {cmd, [o] { return inspect(*o); }};
}

// The options of ModelRunOptions; run needs input files, bench and profile make a pattern without them.
void add_model_run_options(CLI::App* cmd, ModelRunOptions& o, bool inputs_required) {
  cmd->add_option("model", o.model, "model file")->required();
  auto* inputs = cmd->add_option("-i,--input", o.inputs,
                                 inputs_required ? "one file per model input, in order: .npy, .png or .jpg"
                                                 : "one file per model input, in order (default: a fixed pattern)");
  if (inputs_required) inputs->required();
  cmd->add_option("--shape", o.shapes,
                  "for a dynamic model: the shape of each input (1x3x48x320; NHWC or NCHW), one of the model's set");
  cmd->add_option("--core-mask", o.core_mask, "NPU cores: auto, 0, 1, 2, 0_1, 0_1_2 or all (rknn_set_core_mask)");
}

Command add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "one inference from .npy, .png or .jpg inputs; outputs written as .npy");
  add_model_run_options(cmd, *o, true);
  cmd->add_option("-o,--output-dir", o->output_dir, "where output_<i>.npy go (default: the current directory)");
  cmd->add_option("--top", o->top, "how many top classes to list for a classifier's output (default 5)")
      ->check(count_from(0, 1000000));
  cmd->add_flag("--bgr", o->bgr, "feed images as BGR (for a model trained on BGR images), not RGB");
  cmd->add_option("--resize", o->resize,
                  "how an image is fit to the input: stretch (default) or letterbox (scaled with its aspect ratio "
                  "kept, centred on gray 114)")
      ->check(CLI::IsMember({"stretch", "letterbox"}));
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  return {cmd, [o] { return run(*o); }};
}

Command add_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "time inputs_set, run, outputs_get and the zero-copy path");
  add_model_run_options(cmd, *o, false);
  cmd->add_option("-n,--loops", o->loops, "timed inferences per phase (default 50)")->check(count_from(1, 1000000));
  cmd->add_option("-w,--warmup", o->warmup, "untimed inferences first (default 5)")->check(count_from(0, 1000000));
  cmd->add_option("-t,--threads", o->threads, "contexts run in parallel, one per thread (default 1)")
      ->check(count_from(1, 256));
  cmd->add_flag("!--no-zero-copy", o->zero_copy, "skip the zero-copy phase");
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  return {cmd, [o] { return bench(*o); }};
}

Command add_profile(CLI::App& app) {
  auto o = std::make_shared<ProfileOptions>();
  auto* cmd =
      app.add_subcommand("profile", "time per operator (RKNN_QUERY_PERF_DETAIL), slowest first; --svg draws it");
  add_model_run_options(cmd, *o, false);
  cmd->add_option("-n,--runs", o->runs, "runs to average (default 1)")->check(count_from(1, 10000));
  cmd->add_option("--top", o->top, "operators listed in the table and the chart (default 30)")
      ->check(count_from(1, 100000));
  cmd->add_option("--svg", o->svg, "also write a bar chart of the slowest operators to this SVG file");
  cmd->add_flag("--json", o->json, "print JSON (every operator, and the time per operator type) instead of text");
  return {cmd, [o] { return profile(*o); }};
}

Command add_accuracy(CLI::App& app) {
  auto o = std::make_shared<AccuracyOptions>();
  auto* cmd = app.add_subcommand(
      "accuracy",
      "w8a8 against float32 per layer (the toolkit's accuracy_analysis): cosine similarity and euclidean "
      "distance per tensor, entire (the quantized model run end to end, errors accumulated) and single "
      "(each layer fed the float model's values: its own error); writes CSV, JSON and an SVG plot");
  cmd->add_option("model", o->model, "ONNX model")->required()->check(CLI::ExistingFile);
  cmd->add_option("-c,--config", o->config, "CONFIG.json with the toolkit's config() parameter names")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--dataset", o->dataset,
                  "DATASET.txt: one calibration sample per line (.jpg/.png/.bmp/.npy files, one per input)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-i,--input", o->inputs,
                  "the input set to analyse, one file per model input (default: the dataset's first sample)");
  cmd->add_option("-o,--output", o->output,
                  "directory for accuracy.csv, accuracy.json and accuracy.svg (default: snapshot, as the toolkit)");
  cmd->add_option("--threads", o->threads, "engine threads (default: all cores)")->check(count_from(1, 256));
  cmd->add_flag("--json", o->json, "print the report as JSON instead of the table");
  return {cmd, [o] { return accuracy(*o); }};
}

}  // namespace
}  // namespace rknnxx::tool

int main(int argc, char** argv) {
  CLI::App app{"rknnxx: inspect, run, time, profile and convert models for Rockchip NPUs and the host runtime"};
  app.require_subcommand(1);
  app.footer(exit_codes);
  app.set_version_flag("--version", fmt::format("rknnxx {}", rknnxx::version_string),
                       "print the version of rknnxx and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose,
               "also show the runtime's own log lines (RKNN_LOG_LEVEL); every failure is "
               "explained without it");
  const std::vector<rknnxx::tool::Command> commands{rknnxx::tool::add_inspect(app), rknnxx::tool::add_run(app),
                                                    rknnxx::tool::add_bench(app),   rknnxx::tool::add_profile(app),
                                                    rknnxx::tool::add_convert(app), rknnxx::tool::add_accuracy(app)};
  for (const auto& command : commands) command.app->footer(exit_codes);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other failure; CLI11's own exit codes (104-109) are internal: ours is 2.
    const auto parsed = app.get_subcommands();
    const std::string command = parsed.empty() ? std::string() : " " + parsed.front()->get_name();
    fmt::print(stderr, "rknnxx{}: {} (rknnxx{} --help lists the options)\n", command, e.what(), command);
    return exit_usage;
  }
  // The runtimes (the vendor's and the host's) log to stderr under RKNN_LOG_LEVEL; their lines would
  // come on top of the tool's one-line errors, which already carry the host runtime's explanation
  // (rknnxx::Error, through rknnxx_host_last_error). Quiet unless asked for or set by the user.
  if (!verbose) ::setenv("RKNN_LOG_LEVEL", "0", 0);
  for (const auto& command : commands) {
    if (!*command.app) continue;
    try {
      return command.run();
    } catch (const rknnxx::tool::UsageError& e) {
      std::fflush(stdout);
      fmt::print(stderr, "rknnxx {}: {}\n", command.app->get_name(), e.what());
      return exit_usage;
    } catch (const std::exception& e) {
      std::fflush(stdout);
      fmt::print(stderr, "rknnxx {}: {}\n", command.app->get_name(), e.what());
      return exit_failure;
    }
  }
  return 0;
}
