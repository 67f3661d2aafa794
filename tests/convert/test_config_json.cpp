// CONFIG.json with the toolkit's parameter names: reading, errors naming keys, writing back.
#include <doctest/doctest.h>

#include "convert/config_json.hpp"

#include "scratch_dir.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace rknnxx;
using rknnxx::toolkit::ConfigError;

namespace {

// The ConfigError that reading `text` throws (key and message), or a failed check.
std::pair<std::string, std::string> error_of(const std::string& text) {
  try {
    (void)host::config_from_json(text);
  } catch (const ConfigError& e) {
    return {e.key(), e.what()};
  }
  FAIL_CHECK("no error for " << text);
  return {};
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a full CONFIG.json reads into the config it describes") {
  const std::string text = R"({
    "mean_values": [[103.94, 116.78, 123.68]],
    "std_values": [[58.82, 58.82, 58.82]],
    "quant_img_RGB2BGR": true,
    "quantized_dtype": "w4a16",
    "quantized_algorithm": "gdq",
    "quantized_method": "group64",
    "float_dtype": "float16",
    "optimization_level": 2,
    "target_platform": "rk3576",
    "custom_string": "model v1",
    "remove_weight": false,
    "compress_weight": true,
    "single_core_mode": true,
    "model_pruning": true,
    "op_target": {"Add": "cpu", "conv1_out": "auto"},
    "dynamic_input": [[[1, 3, 224, 224]], [[1, 3, 192, 192]], [[1, 3, 160, 160]]],
    "quantize_weight": false,
    "remove_reshape": false,
    "sparse_infer": true,
    "enable_flash_attention": true,
    "auto_hybrid_cos_thresh": 0.95,
    "auto_hybrid_euc_thresh": 2.5,
    "memory_plan_strategy": "GreedyByLifetime",
    "compute_order": "DepthFirst"
  })";
  toolkit::Config c = host::config_from_json(text);
  CHECK(c.mean_values == std::vector<std::vector<double>>{{103.94, 116.78, 123.68}});
  CHECK(c.std_values == std::vector<std::vector<double>>{{58.82, 58.82, 58.82}});
  CHECK(c.quant_img_RGB2BGR == std::vector<bool>{true});
  CHECK(c.quantized_dtype == toolkit::QuantizedDtype::w4a16);
  CHECK(c.quantized_algorithm == toolkit::QuantizedAlgorithm::gdq);
  CHECK(c.quantized_method == toolkit::QuantizedMethod::group(64));
  CHECK(c.optimization_level == 2);
  CHECK(c.target_platform == toolkit::Platform::rk3576);
  CHECK(c.custom_string == "model v1");
  CHECK(c.compress_weight);
  CHECK(c.single_core_mode);
  CHECK(c.model_pruning);
  CHECK(c.op_target.size() == 2);
  CHECK(c.op_target.at("conv1_out") == toolkit::OpTarget::automatic);
  REQUIRE(c.dynamic_input);
  CHECK(c.dynamic_input->size() == 3);
  CHECK((*c.dynamic_input)[2][0] == toolkit::Shape{1, 3, 160, 160});
  CHECK(c.sparse_infer);
  CHECK(c.enable_flash_attention);
  CHECK(c.auto_hybrid_cos_thresh == 0.95);
  CHECK(c.auto_hybrid_euc_thresh == 2.5);
  CHECK(c.memory_plan_strategy == toolkit::MemoryPlanStrategy::GreedyByLifetime);
  CHECK(c.compute_order == toolkit::ComputeOrder::DepthFirst);

  // Written back and read again: the same config, every key present, in the toolkit's order.
  const std::string normalized = host::config_to_json(c);
  CHECK(host::config_from_json(normalized) == c);
  std::size_t last = 0;
  for (std::string_view key : toolkit::Config::keys) {
    std::size_t at = normalized.find(fmt::format("\"{}\"", key));
    CAPTURE(key);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
}

TEST_CASE("a minimal config, null for None, and the shorthand forms") {
  toolkit::Config c = host::config_from_json(R"({"target_platform": "rk3588"})");
  toolkit::Config expected;
  expected.target_platform = toolkit::Platform::rk3588;
  CHECK(c == expected);
  CHECK(host::config_from_json(host::config_to_json(c)) == c);
  CHECK(host::config_from_json(host::config_to_json(c, host::ConfigJsonFor::config_file, -1)) == c);

  c = host::config_from_json(R"({"target_platform": "RK3566", "mean_values": null, "std_values": null,
      "quantized_dtype": null, "custom_string": null, "op_target": null, "dynamic_input": null,
      "auto_hybrid_euc_thresh": null, "quant_img_RGB2BGR": null})");
  expected.target_platform = toolkit::Platform::rk3566;
  CHECK(c == expected);

  // The SDK guide's dynamic-shape example writes one input's means as a flat list.
  c = host::config_from_json(R"({"target_platform": "rk3588", "mean_values": [103.94, 116.78, 123.68],
                                 "std_values": [58.82, 58.82, 58.82], "quant_img_RGB2BGR": [true]})");
  CHECK(c.mean_values == std::vector<std::vector<double>>{{103.94, 116.78, 123.68}});
  CHECK(c.quant_img_RGB2BGR == std::vector<bool>{true});
  CHECK(host::config_from_json(host::config_to_json(c)) == c);
  c = host::config_from_json(R"({"target_platform": "rk3588", "quant_img_RGB2BGR": false})");
  CHECK(c.quant_img_RGB2BGR.empty());
}

TEST_CASE("an unknown key is refused with the valid keys listed") {
  auto [key, message] = error_of(R"({"target_platform": "rk3588", "mean_value": [[0, 0, 0]]})");
  CHECK(key == "mean_value");
  CHECK(contains(message,
                 "config: unknown key \"mean_value\" (did you mean 'mean_values'?); valid keys: mean_values, "
                 "std_values, quant_img_RGB2BGR,"));
  CHECK(contains(message, "memory_plan_strategy, compute_order"));
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "frobnicate": 1})");
  CHECK(key == "frobnicate");
  CHECK_FALSE(contains(message, "did you mean"));
  // build() parameters are named as such.
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "do_quantization": true})");
  CHECK(key == "do_quantization");
  CHECK(contains(message, "'do_quantization' is a parameter of build(), not of config()"));
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "dataset": "./dataset.txt"})");
  CHECK(key == "dataset");
}

TEST_CASE("a key given twice is refused naming it, instead of the last one silently winning") {
  auto [key, message] =
      error_of(R"({"target_platform": "rk3588", "float_dtype": "float16", "target_platform": "rk3566"})");
  CHECK(key == "target_platform");
  CHECK(contains(message, "config: the key \"target_platform\" is given twice; give each key once"));
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "op_target": {"conv1": "cpu", "conv1": "npu"}})");
  CHECK(key == "op_target");
  CHECK(contains(message, "config: \"op_target\" gives the key \"conv1\" twice"));
  // The same name in two different objects is no duplicate.
  const auto c = host::config_from_json(R"({"target_platform": "rk3588", "op_target": {"target_platform": "cpu"}})");
  CHECK(c.op_target.size() == 1);
}

TEST_CASE("a huge unknown key or op_target name is cut in the message, quickly") {
  const std::string huge(1 << 20, 'k');
  auto [key, message] = error_of(R"({"target_platform": "rk3588", ")" + huge + R"(": 1})");
  CHECK(key == huge);  // the whole key stays available to the program
  CHECK(message.size() < 1000);
  CHECK(contains(message, "config: unknown key \"" + std::string(64, 'k') + "\"... (1048576 bytes); valid keys:"));
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "op_target": {")" + huge + R"(": "tpu"}})");
  CHECK(key == "op_target");
  CHECK(message.size() < 1000);
  CHECK(contains(message, "(1048576 bytes)"));
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "float_dtype": ")" + huge + R"("})");
  CHECK(key == "float_dtype");
  CHECK(message.size() < 1000);
}

TEST_CASE("a value of the wrong JSON type names the key and the expected type") {
  struct Case {
    std::string json;
    std::string key;
    std::string message;
  };
  const std::vector<Case> cases{
      {R"({"target_platform": 3588})", "target_platform",
       "config: target_platform is an integer (3588); expected a string, one of rv1103, rv1103b, rv1106, rv1106b, "
       "rv1126b, rk2118, rk3562, rk3566, rk3568, rk3576, rk3588"},
      {R"({"target_platform": "rk3399"})", "target_platform",
       "config: target_platform is 'rk3399'; expected one of rv1103, rv1103b, rv1106, rv1106b, rv1126b, rk2118, "
       "rk3562, rk3566, rk3568, rk3576, rk3588"},
      {R"({"target_platform": "rk3588", "remove_weight": "yes"})", "remove_weight",
       "config: remove_weight is a string (\"yes\"); expected true or false"},
      {R"({"target_platform": "rk3588", "remove_weight": null})", "remove_weight",
       "config: remove_weight is null; expected true or false"},
      {R"({"target_platform": "rk3588", "optimization_level": 2.5})", "optimization_level",
       "config: optimization_level is a number (2.5); expected an integer, 0 to 3"},
      {R"({"target_platform": "rk3588", "optimization_level": 99999999999})", "optimization_level",
       "config: optimization_level is 99999999999; expected 0, 1, 2 or 3"},
      {R"({"target_platform": "rk3588", "mean_values": "128"})", "mean_values",
       "config: mean_values is a string (\"128\"); expected a list with one list of numbers per input (or, for one "
       "input, a list of numbers)"},
      {R"({"target_platform": "rk3588", "mean_values": [[1, "2", 3]]})", "mean_values",
       "config: mean_values[0][1] is a string (\"2\"); expected a number"},
      {R"({"target_platform": "rk3588", "std_values": [[1, 2], 3]})", "std_values",
       "config: std_values[1] is an integer (3); expected a list of numbers, one per channel of that input"},
      {R"({"target_platform": "rk3588", "quant_img_RGB2BGR": [true, 1]})", "quant_img_RGB2BGR",
       "config: quant_img_RGB2BGR[1] is an integer (1); expected true or false"},
      {R"({"target_platform": "rk3588", "quantized_dtype": "int8"})", "quantized_dtype",
       "config: quantized_dtype is 'int8'; expected one of w8a8, w4a16, w8a16, w16a16i_dfp"},
      {R"({"target_platform": "rk3588", "quantized_method": "group"})", "quantized_method",
       "config: quantized_method is 'group'; expected layer, channel or group{SIZE} (SIZE a multiple of 32 from 32 "
       "to 256)"},
      {R"({"target_platform": "rk3588", "float_dtype": "float32"})", "float_dtype",
       "config: float_dtype is 'float32'; expected one of float16"},
      {R"({"target_platform": "rk3588", "op_target": {"Add": "tpu"}})", "op_target",
       "config: op_target['Add'] is 'tpu'; expected one of cpu, npu, gpu, auto"},
      {R"({"target_platform": "rk3588", "op_target": ["Add"]})", "op_target",
       "config: op_target is an array; expected an object {\"tensor name or op type\": \"cpu\", ...}"},
      {R"({"target_platform": "rk3588", "dynamic_input": [[1, 3, 224, 224]]})", "dynamic_input",
       "config: dynamic_input[0][0] is an integer (1); expected a shape (a list of integers), as in "
       "[[input0_shape, input1_shape, ...], [input0_shape, ...], ...]"},
      {R"({"target_platform": "rk3588", "dynamic_input": [[[1, 3.5]]]})", "dynamic_input",
       "config: dynamic_input[0][0][1] is a number (3.5); expected an integer"},
      {R"({"target_platform": "rk3588", "dynamic_input": [[[1, 18446744073709551615]]]})", "dynamic_input",
       "config: dynamic_input[0][0][1] is an integer (18446744073709551615); out of range"},
      {R"({"target_platform": "rk3588", "auto_hybrid_cos_thresh": "high"})", "auto_hybrid_cos_thresh",
       "config: auto_hybrid_cos_thresh is a string (\"high\"); expected a number"},
      {R"({"target_platform": "rk3588", "memory_plan_strategy": "bestfit"})", "memory_plan_strategy",
       "config: memory_plan_strategy is 'bestfit'; expected one of BestFit, GreedyBySize, GreedyByLifetime, "
       "SlowPeakGrowth"},
      {R"({"target_platform": "rk3588", "compute_order": 1})", "compute_order",
       "config: compute_order is an integer (1); expected a string, one of WidthFirst, DepthFirst"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.json);
    auto [key, message] = error_of(k.json);
    CHECK(key == k.key);
    CHECK(message == k.message);
  }
}

TEST_CASE("JSON that is not an object of parameters, and the rules of config()") {
  auto [key, message] = error_of("{\"target_platform\": ");
  CHECK(key.empty());
  CHECK(contains(message,
                 "config: not valid JSON: parse error at line 1, column 21: syntax error while parsing value - "
                 "unexpected end of input"));
  // A number beyond double: nlohmann reports out_of_range, not parse_error (found by the fuzzer).
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "auto_hybrid_cos_thresh": 1e999})");
  CHECK(contains(message, "config: not valid JSON: number overflow parsing '1e999'"));
  std::tie(key, message) = error_of("[1, 2]");
  CHECK(message == "config: expected a JSON object of config() parameters, got an array");
  std::tie(key, message) = error_of("{}");
  CHECK(key == "target_platform");
  CHECK(contains(message, "config: target_platform is required"));
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "quantized_dtype": "w4a16"})");
  CHECK(key == "quantized_dtype");
  CHECK(message == "config: quantized_dtype 'w4a16' is supported only on rk3576 and rv1126b, not on rk3588");
  std::tie(key, message) =
      error_of(R"({"target_platform": "rk3588", "dynamic_input": [[[1, 224], [1, 40]], [[1, 112]]]})");
  CHECK(key == "dynamic_input");
  CHECK(contains(message, "config: dynamic_input[1] has 1 shape, dynamic_input[0] has 2"));
}

TEST_CASE("deeply nested JSON is refused without deep recursion") {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  auto [key, message] = error_of(R"({"target_platform": "rk3588", "remove_weight": )" + deep + "}");
  CHECK(key == "remove_weight");
  CHECK(message == "config: remove_weight is an array; expected true or false");
  std::tie(key, message) = error_of(R"({"target_platform": "rk3588", "dynamic_input": )" + deep + "}");
  CHECK(key == "dynamic_input");
  CHECK(contains(message, "config: dynamic_input[0][0][0] is an array; expected an integer"));
}

TEST_CASE("a config file is read from a path, and errors name the file") {
  const test::TempDir scoped;
  const auto& dir = scoped.path();
  const auto good = dir / "CONFIG.json";
  std::ofstream(good) << R"({"target_platform": "rv1106", "mean_values": [[0]], "std_values": [[255]]})";
  toolkit::Config c = host::load_config_json(good);
  CHECK(c.target_platform == toolkit::Platform::rv1106);
  const auto bad = dir / "BAD.json";
  std::ofstream(bad) << R"({"target_platform": "rv1106", "single_core_mode": true})";
  try {
    (void)host::load_config_json(bad);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "single_core_mode");
    CHECK(contains(e.what(), "config: '"));
    CHECK(contains(e.what(), "BAD.json': single_core_mode is valid only on rk3588 and rk3576, not on rv1106"));
  }
  CHECK_THROWS_WITH_AS((void)host::load_config_json(dir / "missing.json"), doctest::Contains("cannot open"),
                       ConfigError);
}

TEST_CASE("the model file's config leaves out quant_img_RGB2BGR") {
  toolkit::Config c;
  c.target_platform = toolkit::Platform::rk3588;
  c.quant_img_RGB2BGR = {true};
  CHECK(contains(host::config_to_json(c), "quant_img_RGB2BGR"));
  const std::string recorded = host::config_to_json(c, host::ConfigJsonFor::model_file, -1);
  CHECK_FALSE(contains(recorded, "quant_img_RGB2BGR"));
  CHECK_FALSE(contains(recorded, "\n"));
  toolkit::Config back = host::config_from_json(recorded);
  CHECK(back.quant_img_RGB2BGR.empty());
  // Bytes that are not UTF-8 (possible from C++) are written, not thrown on.
  c.custom_string = std::string("\xff\xfe", 2);
  CHECK_NOTHROW((void)host::config_to_json(c));
}

TEST_CASE("custom_ops lists the operators kept for rknn_register_custom_ops, and bad entries are refused") {
  const auto config = host::config_from_json(
      R"({"target_platform": "rk3588", "custom_ops": [{"op_type": "MyOp", "domain": "my.domain"}, {"op_type": "Other"}]})");
  REQUIRE(config.custom_ops.size() == 2);
  CHECK(config.custom_ops[0].op_type == "MyOp");
  CHECK(config.custom_ops[0].domain == "my.domain");
  CHECK(config.custom_ops[1].op_type == "Other");
  CHECK(config.custom_ops[1].domain.empty());
  CHECK(host::config_from_json(R"({"target_platform": "rk3588", "custom_ops": null})").custom_ops.empty());
  struct Case {
    const char* value;
    const char* says;
  };
  for (const Case& c : {Case{R"("MyOp")", "a list of operators"}, Case{R"(["MyOp"])", "an object"},
                        Case{R"([{"domain": "d"}])", "has no op_type"},
                        Case{R"([{"op_type": "A", "inputs": 2}])", "unknown key \"inputs\""},
                        Case{R"([{"op_type": ""}])", "empty op_type"},
                        Case{R"([{"op_type": "A"}, {"op_type": "A"}])", "both list op_type 'A'"}}) {
    CAPTURE(c.value);
    const auto [key, message] =
        error_of(std::string(R"({"target_platform": "rk3588", "custom_ops": )") + c.value + "}");
    CHECK(key == "custom_ops");
    CHECK(contains(message, c.says));
  }
  const auto [key, message] =
      error_of(R"({"target_platform": "rk3588", "custom_ops": [{"op_type": ")" + std::string(300, 'x') + R"("}]})");
  CHECK(key == "custom_ops");
  CHECK(contains(message, "op_type is 300 bytes"));
  const auto [platform_key, platform_message] =
      error_of(R"({"target_platform": "rv1106", "custom_ops": [{"op_type": "A"}]})");
  CHECK(platform_key == "custom_ops");
  CHECK(contains(platform_message, "rv1106 has no custom operators"));
}
