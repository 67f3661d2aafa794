// Times the host engine on one reference case, the counterpart of ort_bench.mjs (same arguments,
// same JSON line, so that compare.sh can divide the two; the contract is in README.md).
//
//   engine_bench --case NAME [--threads N] [--warmup W] [--runs R] [--models DIR] [--float16] [--profile | --profile-all]
//   engine_bench --model FILE.onnx --input NAME=FILE.npy ... [same options]
//
// With --case the model and the inputs are those of CACHE/ref/NAME (made by tests/models/fetch.sh),
// exactly what ort_bench.mjs reads. The session is created, planned and run once before timing;
// that run's outputs are checked against the case's output_<i>.npy under the references' rule and
// a wrong result prints no time (exit 1). Then W untimed runs, then R runs of Session::run, each
// timed alone with a monotonic clock. Prints one JSON line:
//   {"runtime":"rknnxx-host","case":...,"threads":N,"warmup":W,"runs":R,"median_ms":...,...,
//    "median_thread_cpu_ms":...}
// --profile prints, on stderr, each step's median over R more (untimed) profiled runs: the slowest
// steps and the total per operator type, where the time goes, for work on the kernels; --profile-all
// lists every step in the graph's order (to compare two thread counts step by step).
#include "reference_case.hpp"

#include "onnx_reader.hpp"
#include "session.hpp"
#include "tensor.hpp"

#include <rknnxx/io/npy.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace rknnxx;

[[noreturn]] void usage(const std::string& problem) {
  fmt::print(stderr, "engine_bench: error: {}\n", problem);
  fmt::print(stderr,
             "usage: engine_bench (--case NAME | --model FILE --input NAME=FILE.npy ...) [--threads N] [--warmup W] "
             "[--runs R] [--models DIR] [--float16] [--profile | --profile-all]\n");
  std::exit(2);
}

int whole_number(const std::string& text, const std::string& option, int minimum) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || n < minimum)
    usage(option + " needs a whole number >= " + std::to_string(minimum) + ", got '" + text + "'");
  return n;
}

host::DataType engine_type(io::NpyType type, const std::string& what) {
  switch (type) {
    case io::NpyType::float32: return host::DataType::float32;
    case io::NpyType::float16: return host::DataType::float16;
    case io::NpyType::int64: return host::DataType::int64;
    case io::NpyType::int32: return host::DataType::int32;
    case io::NpyType::int8: return host::DataType::int8;
    case io::NpyType::uint8: return host::DataType::uint8;
    case io::NpyType::boolean: return host::DataType::boolean;
    default: usage(what + ": an element type the engine does not take as input");
  }
}

// An owning engine tensor (64-byte aligned, as the kernels like it) holding the array's values.
host::Tensor to_tensor(const io::NpyArray& array, const std::string& what) {
  host::Tensor tensor(engine_type(array.type, what), array.shape);
  if (tensor.bytes() != array.data.size()) usage(what + ": size does not match its shape");
  if (!array.data.empty()) std::memcpy(tensor.raw(), array.data.data(), array.data.size());
  return tensor;
}

// The calling thread's CPU time: with --threads 1 the whole run's, which other processes on a busy machine do
// not inflate (median_thread_cpu_ms, for comparing two engine builds or float16 against float32 there).
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median_of(std::vector<double> sorted) {
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double rounded(double ms) { return std::round(ms * 1000) / 1000; }

void print_profile(std::span<const host::StepTime> steps, bool all) {
  double total = 0;
  std::map<std::string, std::pair<double, int>> by_type;
  for (const auto& s : steps) {
    total += s.microseconds;
    by_type[s.op_type].first += s.microseconds;
    ++by_type[s.op_type].second;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> types(by_type.begin(), by_type.end());
  std::sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  fmt::print(stderr, "profile: {} steps, {:.3f} ms\n", steps.size(), total / 1000);
  for (const auto& [type, time] : types)
    fmt::print(stderr, "  {:<24} {:4} steps {:10.3f} ms {:5.1f} %\n", type, time.second, time.first / 1000,
               100 * time.first / total);
  std::vector<const host::StepTime*> slowest;
  for (const auto& s : steps) slowest.push_back(&s);
  if (!all) {
    std::sort(slowest.begin(), slowest.end(), [](auto* a, auto* b) { return a->microseconds > b->microseconds; });
    slowest.resize(std::min<std::size_t>(slowest.size(), 15));
  }
  for (const auto* s : slowest)
    fmt::print(stderr, "  {:10.3f} ms  {} -> {}\n", s->microseconds / 1000, s->node,
               host::shape_string(s->output_shape));
}

}  // namespace

int main(int argc, char** argv) try {
  std::optional<std::string> case_name, model_file;
  std::vector<std::string> input_specs;
  int threads = 1, warmup = 3, runs = 20;
  bool float16 = false, profile = false, profile_all = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--case") case_name = value();
    else if (arg == "--model") model_file = value();
    else if (arg == "--input") input_specs.push_back(value());
    else if (arg == "--models") ::setenv("RKNNXX_MODELS", value().c_str(), 1);  // read by reference_case.hpp
    else if (arg == "--threads") threads = whole_number(value(), arg, 1);
    else if (arg == "--warmup") warmup = whole_number(value(), arg, 0);
    else if (arg == "--runs") runs = whole_number(value(), arg, 1);
    else if (arg == "--float16") float16 = true;
    else if (arg == "--profile") profile = true;
    else if (arg == "--profile-all") profile = profile_all = true;
    else usage("unknown argument '" + arg + "'");
  }
  if (case_name.has_value() == model_file.has_value()) usage("give either --case or --model");

  std::filesystem::path model_path;
  std::vector<test_models::ReferenceTensor> inputs, references;
  double tolerance = 0;
  if (case_name) {
    auto c = test_models::load_reference_case(*case_name);
    if (!c)
      usage("no reference case '" + *case_name + "' in " + (test_models::models_dir() / "ref").string() +
            ": run tests/models/fetch.sh");
    model_path = c->model;
    inputs = std::move(c->inputs);
    references = std::move(c->outputs);
    tolerance = c->tolerance;
  } else {
    model_path = std::filesystem::absolute(*model_file);
    for (const auto& spec : input_specs) {
      const auto eq = spec.find('=');
      if (eq == std::string::npos || eq == 0) usage("--input needs NAME=FILE.npy, got '" + spec + "'");
      inputs.push_back({spec.substr(0, eq), io::read_npy(spec.substr(eq + 1))});
    }
  }

  host::SessionOptions options;
  options.threads = static_cast<std::size_t>(threads);
  options.float16_activations = float16;
  host::Session session(host::onnx::read_model_file(model_path), options);

  std::vector<host::Tensor> feeds;
  for (const auto& name : session.input_names()) {
    const auto given = std::find_if(inputs.begin(), inputs.end(), [&](const auto& t) { return t.name == name; });
    if (given == inputs.end()) usage("the model's input '" + name + "' has no --input");
    feeds.push_back(to_tensor(given->array, "input '" + name + "'"));
  }

  // The first run plans the session and is checked: a wrong result gets no time.
  const auto outputs = session.run(feeds);
  if (!references.empty()) {
    if (outputs.size() != references.size()) {
      fmt::print(stderr, "engine_bench: error: {} outputs, the reference has {}\n", outputs.size(), references.size());
      return 1;
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const double error = outputs[i].dtype() == host::DataType::float32
          ? test_models::relative_error(outputs[i].values<float>(), references[i].array.values<float>())
          : INFINITY;
      // float16 activations are not held to the float32 rule (tests/models/engine_models_test.cpp has theirs).
      const double bound = float16 ? 1e-1 : tolerance;
      if (!(error <= bound)) {
        fmt::print(stderr,
                   "engine_bench: error: output '{}' differs from ONNX Runtime's by {:.3g} relative (bound {:.3g}): no "
                   "time for a wrong result\n",
                   references[i].name, error, bound);
        return 1;
      }
    }
  }

  for (int i = 0; i < warmup; ++i) session.run(feeds);
  std::vector<double> times, cpu_times;
  for (int i = 0; i < runs; ++i) {
    const double cpu_start = thread_cpu_ms();
    const auto start = std::chrono::steady_clock::now();
    session.run(feeds);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    cpu_times.push_back(thread_cpu_ms() - cpu_start);
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());

  fmt::print("{{\"runtime\":\"rknnxx-host\",\"case\":{},\"model\":\"{}\",\"threads\":{},\"float16_activations\":{},"
             "\"warmup\":{},\"runs\":{},\"median_ms\":{},\"min_ms\":{},\"max_ms\":{},\"median_thread_cpu_ms\":{}}}\n",
             case_name ? "\"" + *case_name + "\"" : std::string("null"), model_path.string(), threads, float16, warmup,
             runs, rounded(median_of(times)), rounded(times.front()), rounded(times.back()),
             rounded(median_of(cpu_times)));
  std::fflush(stdout);

  if (profile) {
    host::SessionOptions profiled = options;
    profiled.profile = true;
    host::Session profiling(host::onnx::read_model_file(model_path), profiled);
    profiling.run(feeds);
    std::vector<host::StepTime> steps;  // each step's median over the runs
    std::vector<std::vector<double>> samples;
    for (int r = 0; r < runs; ++r) {
      profiling.run(feeds);
      const auto last = profiling.last_profile();
      if (steps.empty()) {
        steps.assign(last.begin(), last.end());
        samples.resize(steps.size());
      }
      for (std::size_t i = 0; i < steps.size() && i < last.size(); ++i) samples[i].push_back(last[i].microseconds);
    }
    for (std::size_t i = 0; i < steps.size(); ++i) {
      std::sort(samples[i].begin(), samples[i].end());
      steps[i].microseconds = median_of(samples[i]);
    }
    print_profile(steps, profile_all);
    // docs/runtime-extensions.md, "Blocked values between Convs"
    fmt::print(stderr, "  values kept in oneDNN's layout: {}\n", profiling.stats().blocked_values);
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "engine_bench: error: {}\n", e.what());
  return 1;
}
