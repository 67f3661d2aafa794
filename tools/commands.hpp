#pragma once
// The subcommands of the rknnxx tool, one file each. add_<name> declares the subcommand and its
// options on the app and returns what runs it once the command line is parsed. A run function
// returns the exit code, or throws: main() prints any exception as one line, "rknnxx <command>: <what>",
// and exits 2 for a UsageError (the command line asks for something impossible), 1 otherwise.

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>

namespace rknnxx::tool {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// A command line that cannot work whatever the model says (exit 2, like CLI11's own parse errors).
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The check of a count option (-n, --threads, ...): a whole number from `min` to `max`, refused with
// what is wrong ("-5 is not a whole number from 1 to 1000000") instead of wrapping to 2^64 - 5.
inline CLI::Validator count_from(std::size_t min, std::size_t max) {
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

Command add_convert(CLI::App& app);
Command add_inspect(CLI::App& app);
Command add_run(CLI::App& app);
Command add_bench(CLI::App& app);
Command add_profile(CLI::App& app);
Command add_accuracy(CLI::App& app);

} // namespace rknnxx::tool
