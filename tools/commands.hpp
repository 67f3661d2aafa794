#pragma once
// The subcommands of the rknnxx tool, one file each. add_<name> declares the subcommand and its
// options on the app and returns what runs it once the command line is parsed. A run function
// returns the exit code, or throws: main() prints any exception as one line, "rknnxx <command>: <what>".

#include <CLI/CLI.hpp>

#include <functional>

namespace rknnxx::tool {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_convert(CLI::App& app);
Command add_inspect(CLI::App& app);
Command add_run(CLI::App& app);
Command add_bench(CLI::App& app);

} // namespace rknnxx::tool
