// Checks the fetched reference data as the engine's tests will read it: every case listed in
// ref/index.json and ref/networks.json loads through rknnxx::io (the .npy files are written by node, read by C++),
// matches its manifest, has a model file and finite outputs. Exits 77 (skipped) when nothing was
// fetched. Prints "N passed, N failed" over the cases.
#include "reference_case.hpp"

#include <cstdio>
#include <exception>

int main() {
  using namespace rknnxx::test_models;
  auto names = reference_case_names();
  for (auto& name : reference_case_names("networks.json")) names.push_back(std::move(name));
  if (names.empty()) {
    std::printf("no references in %s: run tests/models/fetch.sh (or set RKNNXX_MODELS)\n", models_dir().c_str());
    return 77;
  }
  int passed = 0, failed = 0;
  for (const auto& name : names) {
    try {
      const auto c = load_reference_case(name);
      if (!c) throw std::runtime_error("listed in the index but ref/" + name + "/manifest.json is missing");
      if (!std::filesystem::exists(c->model)) throw std::runtime_error("model " + c->model.string() + " is missing");
      if (c->inputs.empty() || c->outputs.empty()) throw std::runtime_error("no inputs or no outputs");
      for (const auto& t : c->outputs) {
        // Float outputs must be finite; integer ones (a detector's labels) are finite by nature.
        if (t.array.type != rknnxx::io::NpyType::float32) continue;
        const auto values = t.array.values<float>();
        if (relative_error(values, values) != 0) throw std::runtime_error("output '" + t.name + "' is not finite");
      }
      std::printf("ok   %s: %zu inputs, %zu outputs, model %s\n", name.c_str(), c->inputs.size(), c->outputs.size(),
                  c->model.filename().c_str());
      ++passed;
    } catch (const std::exception& e) {
      std::printf("FAIL %s: %s\n", name.c_str(), e.what());
      ++failed;
    }
  }
  std::printf("models: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
