// Runs the ONNX backend node tests (onnx/backend/test/data/node, as installed by
// libonnx-testdata) on the host engine and compares every output with the reference:
//   onnx_conformance [NODE_TEST_DIR] [--filter TEXT] [--verbose]
//
// A test is eligible when the engine supports all its operators (the registry; Constant is
// folded by the graph), its opset, and the element types of its inputs and outputs. Outputs
// match within rtol 1e-3, atol 1e-7 for floats (float16, float32, float64) (NaN equals NaN), exactly for integers and bool,
// as the ONNX backend tests compare; bfloat16 within one bfloat16 unit in the last place more (ONNX 1.12's
// data truncates float32 to bfloat16, the engine rounds to nearest even: docs/conformance.md).
//
// Inputs that the test feeds at run time but a real model carries as constants (a Reshape's
// shape, a Resize's scales, ...) become initializers, as the host engine plans shapes ahead
// of running. Should planning still require a constant, every input is made constant and the
// graph folds entirely: the same kernels run, only while planning.
//
// The last line is "P passed, F failed" for scripts/count_tests.py.

#include "onnx_reader.hpp"
#include "op_registry.hpp"
#include "session.hpp"
#include "tensor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace rknnxx::host;

namespace {

// Operator inputs the host engine needs while planning (shape-like arguments).
const std::map<std::string, std::set<std::size_t>>& plan_time_inputs() {
  static const std::map<std::string, std::set<std::size_t>> table{
      {"Reshape", {1}},
      {"Expand", {1}},
      {"ConstantOfShape", {0}},
      {"Squeeze", {1}},
      {"Unsqueeze", {1}},
      {"Slice", {1, 2, 3, 4}},
      {"Split", {1}},
      {"Pad", {1}},
      {"Resize", {1, 2, 3}},
      {"Upsample", {1}},
      {"ReduceMean", {1}},
      {"ReduceSum", {1}},
      {"ReduceMax", {1}},
      {"ReduceMin", {1}},
      {"ReduceProd", {1}},
      {"ReduceL1", {1}},
      {"ReduceL2", {1}},
      {"ReduceLogSum", {1}},
      {"ReduceLogSumExp", {1}},
      {"ReduceSumSquare", {1}},
      {"Tile", {1}},
      {"TopK", {1}},
      {"OneHot", {1}},
      {"Range", {0, 1, 2}},
      {"Compress", {1}},
      {"Dropout", {1, 2}},
      {"NonMaxSuppression", {0, 1, 2, 3, 4}},
      {"HannWindow", {0}},
      {"HammingWindow", {0}},
      {"BlackmanWindow", {0}},
      {"MaxUnpool", {2}},
      {"DFT", {1}},
      {"NonZero", {0}},
  };
  return table;
}

// Tests whose model declares a graph input with a shape its own test data does not have (errata of
// ONNX 1.12's data, docs/conformance.md): the input takes the data's shape. In the four bfloat16
// CastLike tests the model declares 'like' [3, 4] and the data is [1]; CastLike reads only its type.
const std::set<std::string>& declared_shape_errata() {
  static const std::set<std::string> tests{
      "test_castlike_BFLOAT16_to_FLOAT", "test_castlike_BFLOAT16_to_FLOAT_expanded", "test_castlike_FLOAT_to_BFLOAT16",
      "test_castlike_FLOAT_to_BFLOAT16_expanded"};
  return tests;
}

struct Outcome {
  bool passed = false;
  std::string reason;
};

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// Why the engine cannot run this test at all ("" when eligible).
std::string ineligible(const onnx::ModelProto& model) {
  for (const auto& n : model.graph.node) {
    const bool constant = is_default_domain(n.domain) && n.op_type == "Constant";
    if (!constant && OpRegistry::instance().find(n.domain, n.op_type) == nullptr) {
      const auto excluded = excluded_operator_reason(n.domain, n.op_type);
      return excluded.empty() ? "operator " + n.op_type : "refused " + n.op_type + ": " + std::string(excluded);
    }
  }
  int64_t opset = -1;
  for (const auto& o : model.opset_import) {
    if (is_default_domain(o.domain)) {
      opset = o.version;
    }
  }
  if (opset < min_opset || opset > max_opset) {
    return fmt::format("opset outside {}..{}", min_opset, max_opset);
  }
  for (const auto* values : {&model.graph.input, &model.graph.output}) {
    for (const auto& v : *values) {
      if (v.kind != onnx::TypeKind::tensor) {
        return "non-tensor value";
      }
      if (!is_supported(v.elem_type)) {
        return fmt::format("element type {}", dtype_name(v.elem_type));
      }
    }
  }
  return "";
}

template <class T> double as_double(T v) {
  if constexpr (is_float_bits_v<T>) {
    return widen(v);
  } else {
    return static_cast<double>(v);
  }
}

// "" when equal within tolerance, else the first difference.
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) {
    return fmt::format("element type {} where {} was expected", dtype_name(got.dtype()), dtype_name(want.dtype()));
  }
  if (got.shape() != want.shape()) {
    return fmt::format("shape {} where {} was expected", shape_string(got.shape()), shape_string(want.shape()));
  }
  std::string diff;
  std::size_t mismatches = 0;
  visit_dtype(got.dtype(), [&]<class T>() {
    const auto a = got.values<T>();
    const auto b = want.values<T>();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const double x = as_double(a[i]);
      const double y = as_double(b[i]);
      bool ok = false;
      if constexpr (std::is_floating_point_v<T> || is_float_bits_v<T>) {
        ok = (std::isnan(x) && std::isnan(y)) || x == y || std::abs(x - y) <= 1e-7 + 1e-3 * std::abs(y);
        if constexpr (std::is_same_v<T, bfloat16>) {
          // One unit in the last place of the expected value: 7 mantissa bits below its leading bit.
          ok = ok || (std::isfinite(y) && y != 0.0 && std::abs(x - y) <= std::ldexp(1.0, std::ilogb(y) - 7));
        }
      } else {
        ok = x == y;
      }
      if (!ok && mismatches++ == 0) {
        diff = fmt::format("element {} is {} where {} was expected", i, x, y);
      }
    }
  });
  if (mismatches > 1) {
    diff += fmt::format(" ({} of {} elements differ)", mismatches, got.elements());
  }
  return diff;
}

// A test data tensor for a graph value of element type `type`. ONNX 1.12 stores bfloat16 test data
// as uint16 tensors of the bit patterns (its numpy helper has no bfloat16): read those as bfloat16.
onnx::TensorProto test_tensor(onnx::TensorProto proto, DataType type) {
  if (type == DataType::bfloat16 && proto.data_type == DataType::uint16) {
    proto.data_type = DataType::bfloat16;
  }
  return proto;
}

std::vector<fs::path> data_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (std::size_t i = 0;; ++i) {
    const auto path = dir / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(path)) {
      return files;
    }
    files.push_back(path);
  }
}

// all_constant: every graph input becomes an initializer.
Outcome run_test(const fs::path& dir, onnx::ModelProto model, bool all_constant) {
  const auto set = dir / "test_data_set_0";
  const auto input_files = data_files(set, "input");
  const auto output_files = data_files(set, "output");
  // Test data input i belongs to graph input i, initializers excluded.
  std::set<std::string> initializers;
  for (const auto& t : model.graph.initializer) {
    initializers.insert(t.name);
  }
  std::vector<onnx::ValueInfoProto*> fed;
  for (auto& v : model.graph.input) {
    if (!initializers.contains(v.name)) {
      fed.push_back(&v);
    }
  }
  if (fed.size() != input_files.size()) {
    return {false, fmt::format("the model has {} inputs, the test data {}", fed.size(), input_files.size())};
  }
  std::set<std::string> plan_time;
  for (const auto& n : model.graph.node) {
    const auto it = plan_time_inputs().find(n.op_type);
    for (std::size_t i = 0; i < n.input.size(); ++i) {
      if (all_constant || (it != plan_time_inputs().end() && it->second.contains(i))) {
        plan_time.insert(n.input[i]);
      }
    }
  }
  std::vector<Tensor> inputs;
  std::vector<onnx::TensorProto> folded;
  for (std::size_t i = 0; i < fed.size(); ++i) {
    auto proto = test_tensor(onnx::read_tensor_file(input_files[i]), fed[i]->elem_type);
    proto.name = fed[i]->name;
    if (declared_shape_errata().contains(dir.filename().string())) {
      fed[i]->shape.clear();
      for (const int64_t d : proto.dims) {
        fed[i]->shape.push_back(onnx::Dimension{.has_value = true, .value = d, .param = ""});
      }
    }
    if (plan_time.contains(fed[i]->name)) {
      folded.push_back(std::move(proto));
    } else {
      inputs.push_back(tensor_from_proto(proto));
    }
  }
  for (auto& proto : folded) {
    model.graph.initializer.push_back(std::move(proto));
  }
  Session session(model, SessionOptions{.threads = 2});
  const auto outputs = session.run(inputs);
  if (outputs.size() != output_files.size()) {
    return {false, fmt::format("{} outputs where the test data has {}", outputs.size(), output_files.size())};
  }
  const auto names = session.output_names();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const DataType type = i < model.graph.output.size() ? model.graph.output[i].elem_type : DataType::undefined;
    const Tensor want = tensor_from_proto(test_tensor(onnx::read_tensor_file(output_files[i]), type));
    if (auto diff = compare(outputs[i], want); !diff.empty()) {
      return {false, fmt::format("output '{}': {}", names[i], diff)};
    }
  }
  return {true, ""};
}

Outcome run_test(const fs::path& dir, const onnx::ModelProto& model) {
  try {
    return run_test(dir, model, false);
  } catch (const std::exception& e) {
    const std::string first = e.what();
    if (first.find("must be a constant") == std::string::npos) {
      return {false, first};
    }
    try {
      return run_test(dir, model, true);
    } catch (const std::exception& e2) {
      return {false, e2.what()};
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root = "/usr/share/libonnx-testdata/data/node";
  std::string filter;
  bool verbose = false;
  std::set<std::string> known;  // tests known to fail (--known FILE), each with its reason in the file
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--known" && i + 1 < argc) {
      std::ifstream list(argv[++i]);
      if (!list) {
        fmt::print("onnx conformance: cannot read the known-failures list {}\n0 passed, 1 failed\n", argv[i]);
        return 1;
      }
      for (std::string line; std::getline(list, line);) {
        const auto name = line.substr(0, line.find_first_of(" \t#"));
        if (!name.empty()) known.insert(name);
      }
    } else if (arg == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (arg == "--verbose") {
      verbose = true;
    } else {
      root = arg;
    }
  }
  if (!fs::is_directory(root)) {
    fmt::print("onnx conformance: no node tests at {} (install libonnx-testdata)\n0 passed, 1 failed\n", root.string());
    return 1;
  }
  std::vector<fs::path> tests;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (fs::exists(entry.path() / "model.onnx") && entry.path().filename().string().find(filter) != std::string::npos) {
      tests.push_back(entry.path());
    }
  }
  std::sort(tests.begin(), tests.end());

  std::map<std::string, std::size_t> skipped;  // reason -> tests
  std::vector<std::pair<std::string, std::string>> failures;
  std::size_t passed = 0;
  for (const auto& dir : tests) {
    const auto name = dir.filename().string();
    onnx::ModelProto model;
    try {
      model = onnx::read_model_file(dir / "model.onnx");
    } catch (const std::exception& e) {
      failures.emplace_back(name, e.what());
      continue;
    }
    if (const auto why = ineligible(model); !why.empty()) {
      ++skipped[why.starts_with("operator")      ? std::string("unsupported operator")
                    : why.starts_with("refused") ? std::string("operator refused by design")
                                                 : why];
      if (verbose) {
        fmt::print("skip {}: {}\n", name, why);
      }
      continue;
    }
    const Outcome outcome = run_test(dir, model);
    if (outcome.passed) {
      ++passed;
      if (verbose) {
        fmt::print("pass {}\n", name);
      }
    } else {
      failures.emplace_back(name, outcome.reason);
    }
  }
  const std::size_t eligible = passed + failures.size();
  std::size_t skipped_total = 0;
  for (const auto& [why, n] : skipped) {
    skipped_total += n;
  }
  fmt::print("onnx conformance: {}/{} node tests passed ({} of {} tests not eligible:", passed, eligible, skipped_total,
             tests.size());
  for (const auto& [why, n] : skipped) {
    fmt::print(" {} {}", n, why);
  }
  fmt::print(")\n");
  // Known failures are reported but do not fail the run; anything else that fails does, and so
  // does a known failure that now passes (the list must stay true) or a figure under 95%.
  std::size_t unexpected = 0;
  std::size_t known_failed = 0;
  std::set<std::string> failed_names;
  for (const auto& [name, reason] : failures) {
    failed_names.insert(name);
    const bool expected = known.contains(name);
    (expected ? known_failed : unexpected) += 1;
    fmt::print("{} {}: {}\n", expected ? "KNOWN-FAIL" : "FAIL", name, reason);
  }
  for (const auto& name : known) {
    if (!failed_names.contains(name) && (filter.empty() || name.find(filter) != std::string::npos) &&
        fs::exists(root / name / "model.onnx")) {
      fmt::print("FAIL {}: passes now, but is listed as a known failure (take it off the list)\n", name);
      ++unexpected;
    }
  }
  const bool enough = eligible == 0 || passed * 100 >= eligible * 95;
  if (!enough) {
    fmt::print("FAIL: {}/{} is under the 95% the engine promises\n", passed, eligible);
    ++unexpected;
  }
  fmt::print("{} passed, {} failed, {} skipped\n", passed, unexpected, known_failed);
  return unexpected == 0 ? 0 : 1;
}
