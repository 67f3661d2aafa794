#pragma once
// The subcommands of the rknnxx tool: each is a plain options struct and the function that runs it, in a
// file of its own (convert.cpp, ...). The command line that fills the structs is rknnxx.cpp alone: CLI11
// is header-only and costs a compile of its own in every file that includes it.
// A command returns the exit code, or throws: main() prints any exception as one line,
// "rknnxx <command>: <what>", and exits 2 for a UsageError (the command line asks for something
// impossible), 1 otherwise.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace rknnxx::tool {

// A command line that cannot work whatever the model says (exit 2, like CLI11's own parse errors).
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// rknnxx convert: ONNX + CONFIG.json -> host model (w8a8 with a dataset).
struct ConvertOptions {
  std::string model, config, dataset, output;
  bool auto_hybrid = false;  // the toolkit's build(auto_hybrid=True); needs a dataset
  bool json = false;
};

// rknnxx inspect: what the runtime says about a model.
struct InspectOptions {
  std::string model;
  bool json = false;
};

// What run, bench and profile share: a model, its input files, the shapes of a dynamic model and the NPU
// cores.
struct ModelRunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string core_mask;
};

// rknnxx run: one inference from files.
struct RunOptions : ModelRunOptions {
  std::string output_dir = ".";
  std::size_t top = 5;
  std::string resize = "stretch";
  bool bgr = false;
  bool json = false;
};

// rknnxx bench: timings of each phase.
struct BenchOptions : ModelRunOptions {
  std::size_t loops = 50;
  std::size_t warmup = 5;
  std::size_t threads = 1;
  bool zero_copy = true;
  bool json = false;
};

// rknnxx profile: time per operator.
struct ProfileOptions : ModelRunOptions {
  std::size_t runs = 1;
  std::size_t top = 30;
  std::string svg;
  bool json = false;
};

// rknnxx accuracy: w8a8 against float32 per layer.
struct AccuracyOptions {
  std::string model, config, dataset, output = "snapshot";
  std::vector<std::string> inputs;
  std::size_t threads = 0;
  bool json = false;
};

int convert(const ConvertOptions& options);
int inspect(const InspectOptions& options);
int run(const RunOptions& options);
int bench(const BenchOptions& options);
int profile(const ProfileOptions& options);
int accuracy(const AccuracyOptions& options);

}  // namespace rknnxx::tool
