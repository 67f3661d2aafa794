#pragma once
// For tests that compare the engine with the ONNX Runtime references made by fetch.sh:
// where the models folder is, one reference case loaded from its manifest, and the error rule.
//
//   auto ref = rknnxx::test_models::load_reference_case("resnet18");   // nullopt: not fetched
//   if (!ref) return 77;   // or doctest's skip: the data is made by tests/models/fetch.sh
//   ... run ref->model on ref->inputs[i].array ...
//   CHECK(rknnxx::test_models::relative_error(engine_output, ref->outputs[0].array.values<float>()) <= 1e-4);
//
// Needs models_cpp_args (tests/models/meson.build) for the default folder and nlohmann-json.

#include <rknnxx/io/npy.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#ifndef RKNNXX_MODELS_DEFAULT
#error "compile with models_cpp_args from tests/models/meson.build (defines RKNNXX_MODELS_DEFAULT)"
#endif

namespace rknnxx::test_models {

// $RKNNXX_MODELS when set and not empty, else the default of the build (<repo>/build/models).
inline std::filesystem::path models_dir() {
  if (const char* env = std::getenv("RKNNXX_MODELS"); env && *env) return env;
  return RKNNXX_MODELS_DEFAULT;
}

struct ReferenceTensor {
  std::string name;            // the model's input or output name
  rknnxx::io::NpyArray array;  // its value; the shape is array.shape
};

struct ReferenceCase {
  std::string name;                      // e.g. "resnet18", "dyncnn_99x130"
  std::filesystem::path model;           // absolute path of the .onnx
  std::vector<ReferenceTensor> inputs;   // in the model's input order
  std::vector<ReferenceTensor> outputs;  // in the model's output order
  double tolerance = 1e-4;               // bound on relative_error per output
  double mean_tolerance = 1e-4;          // bound on the mean error (mean|a - ref| / max|ref|) per output
};

// The case names fetch.sh made, from ref/index.json (or ref/networks.json: the real networks of
// export_networks.py); empty when nothing was fetched.
inline std::vector<std::string> reference_case_names(std::string_view index_file = "index.json") {
  const auto index = models_dir() / "ref" / std::string(index_file);
  std::ifstream in(index);
  if (!in) return {};
  std::vector<std::string> names;
  for (const auto& entry : nlohmann::json::parse(in)) names.push_back(entry.at("case").get<std::string>());
  return names;
}

// Loads ref/<name>/; nullopt when that case was not fetched, throws when it is there but broken.
inline std::optional<ReferenceCase> load_reference_case(std::string_view name) {
  const auto dir = models_dir() / "ref" / std::string(name);
  std::ifstream in(dir / "manifest.json");
  if (!in) return std::nullopt;
  const auto manifest = nlohmann::json::parse(in);
  ReferenceCase c;
  c.name = name;
  c.model = models_dir() / manifest.at("model").get<std::string>();
  c.tolerance = manifest.at("tolerance").at("max").get<double>();
  // Cases that bound the mean too say so (the QDQ model); the worst element's bound covers it otherwise.
  c.mean_tolerance = manifest.at("tolerance").value("mean", c.tolerance);
  auto load = [&](const nlohmann::json& list, std::vector<ReferenceTensor>& into) {
    for (const auto& t : list) {
      ReferenceTensor r{t.at("name").get<std::string>(), rknnxx::io::read_npy(dir / t.at("file").get<std::string>())};
      if (r.array.shape != t.at("shape").get<std::vector<std::int64_t>>())
        throw std::runtime_error((dir / t.at("file").get<std::string>()).string() +
                                 ": shape differs from manifest.json");
      into.push_back(std::move(r));
    }
  };
  load(manifest.at("inputs"), c.inputs);
  load(manifest.at("outputs"), c.outputs);
  return c;
}

// The comparison rule of the references: max_i |actual_i - reference_i| / max_i |reference_i|.
// Infinity when the sizes differ or a value is not finite; 0 for two all-zero tensors.
inline double relative_error(std::span<const float> actual, std::span<const float> reference) {
  if (actual.size() != reference.size()) return INFINITY;
  double max_diff = 0, max_ref = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (!std::isfinite(actual[i]) || !std::isfinite(reference[i])) return INFINITY;
    max_diff = std::max(max_diff, std::abs(double(actual[i]) - double(reference[i])));
    max_ref = std::max(max_ref, std::abs(double(reference[i])));
  }
  if (max_diff == 0) return 0;
  return max_ref == 0 ? INFINITY : max_diff / max_ref;
}

}  // namespace rknnxx::test_models
