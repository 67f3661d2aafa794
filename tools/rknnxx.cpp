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

#include <rknnxx/version.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

namespace {

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;
constexpr const char* exit_codes = "Exit codes: 0 success, 1 failure (one line on stderr says why), 2 usage error.";

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"rknnxx: inspect, run, time, profile and convert models for Rockchip NPUs and the host runtime"};
  app.require_subcommand(1);
  app.footer(exit_codes);
  app.set_version_flag("--version", fmt::format("rknnxx {}", rknnxx::version_string), "print the version of rknnxx and exit");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "also show the runtime's own log lines (RKNN_LOG_LEVEL); every failure is "
                                        "explained without it");
  const std::vector<rknnxx::tool::Command> commands{rknnxx::tool::add_inspect(app), rknnxx::tool::add_run(app),
                                                    rknnxx::tool::add_bench(app), rknnxx::tool::add_profile(app),
                                                    rknnxx::tool::add_convert(app),
                                                    rknnxx::tool::add_accuracy(app)};
  for (const auto& command : commands) command.app->footer(exit_codes);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) { // --help, --version
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
