// The rknnxx command line:
//   rknnxx inspect MODEL [--json]                  everything the runtime says about a model
//   rknnxx run MODEL --input FILE... [--shape S]   one inference from .npy/.png/.jpg; outputs as .npy
//   rknnxx bench MODEL [-n N] [--json]             inputs_set / run / outputs_get and zero-copy timings
//   rknnxx convert MODEL.onnx -c CONFIG.json       ONNX + the toolkit's config() -> host model
// Every failure is one line naming the problem and a non-zero exit code.

#include "commands.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"rknnxx: inspect, run, time and convert models for Rockchip NPUs and the host runtime"};
  app.require_subcommand(1);
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "keep the runtime's own log lines (RKNN_LOG_LEVEL); by default only errors "
                                        "the tool reports, one line each");
  const std::vector<rknnxx::tool::Command> commands{rknnxx::tool::add_inspect(app), rknnxx::tool::add_run(app),
                                                    rknnxx::tool::add_bench(app), rknnxx::tool::add_convert(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // The runtimes (the vendor's and the host's) log to stderr under RKNN_LOG_LEVEL; their lines would
  // come on top of the tool's one-line errors (e.g. the dynamic-range query every static model
  // answers with an error). Quiet unless asked for or set by the user.
  if (!verbose) ::setenv("RKNN_LOG_LEVEL", "0", 0);
  for (const auto& command : commands) {
    if (!*command.app) continue;
    try {
      return command.run();
    } catch (const std::exception& e) {
      std::fflush(stdout);
      fmt::print(stderr, "rknnxx {}: {}\n", command.app->get_name(), e.what());
      return 1;
    }
  }
  return 0;
}
