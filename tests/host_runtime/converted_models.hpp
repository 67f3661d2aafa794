#pragma once
// Test models converted once per process from the ONNX models tests/models/fetch.sh makes.

#include "convert/converter.hpp"
#include "convert/config_json.hpp"
#include "convert/model_file.hpp"

#include "c_api_test_helpers.hpp"
#include "scratch_dir.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace rknnxx::test {

inline std::filesystem::path models_dir() {
  if (const char* env = std::getenv("RKNNXX_MODELS")) return env;
  return RKNNXX_MODELS_DEFAULT;
}

// Converts models/<onnx> with the config JSON and returns the path of the .hrknn file, made
// once per process in its scratch_dir().
inline std::string converted(const std::string& onnx, const std::string& config_json) {
  static std::map<std::string, std::string> cache;
  const std::string key = onnx + "|" + config_json;
  if (auto found = cache.find(key); found != cache.end()) return found->second;
  const auto config = host::config_from_json(config_json);
  const auto file = host::convert_onnx(read_bytes(models_dir() / onnx), config).file;
  const auto path = scratch_dir() / (std::to_string(cache.size()) + ".hrknn");
  host::save_model_file(path, file);
  return cache[key] = path.string();
}

// The dynamic-shape CNN with three shapes (224, 160 and 100: 100 is not a multiple of 16,
// so NHWC inputs get w_stride padding).
inline std::string dyncnn(const std::string& platform = "rk3588") {
  return converted("dyn/dyncnn.onnx", R"({"target_platform": ")" + platform + R"(",
    "mean_values": [[123.675, 116.28, 103.53]], "std_values": [[58.395, 57.12, 57.375]],
    "dynamic_input": [[[1, 3, 224, 224]], [[1, 3, 160, 160]], [[1, 3, 100, 100]]],
    "custom_string": "dyncnn for tests"})");
}

// A static model: squeezenet 1.1, [1,3,224,224] -> [1,1000].
inline std::string squeezenet(const std::string& platform = "rk3588") {
  return converted("vision/squeezenet1_1.onnx", R"({"target_platform": ")" + platform + R"("})");
}

}  // namespace rknnxx::test
