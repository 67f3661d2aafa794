#pragma once
// The converted models the runtime tests use, made by run_runtime_tests.sh into the build folder
// (RKNNXX_TEST_MODEL_DIR). A test that needs one returns early, marked skipped, when the ONNX
// models have not been made (tests/models/fetch.sh); the script then exits 77.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace rknnxx::test {

inline std::optional<std::string> model(const char* file) {
  const char* dir = std::getenv("RKNNXX_TEST_MODEL_DIR");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  const std::string path = std::string(dir) + "/" + file;
  if (!std::filesystem::exists(path)) return std::nullopt;
  return path;
}

}  // namespace rknnxx::test

// Binds `var` to the model's path or leaves the test case (reported as a message).
#define RKNNXX_NEED_MODEL(var, file)                                                                                   \
  const auto var##_opt = ::rknnxx::test::model(file);                                                                  \
  if (!var##_opt) {                                                                                                    \
    MESSAGE("skipped: " file " was not made (run tests/models/fetch.sh)");                                             \
    return;                                                                                                            \
  }                                                                                                                    \
  const std::string var = *var##_opt
