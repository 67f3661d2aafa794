// libFuzzer target over the two readers of untrusted conversion input: the host model file
// (host/model_file.cpp) and CONFIG.json (host/convert/config_json.cpp).
// The first byte picks the reader; the rest is the input. Beyond "no crash, no sanitizer report, no
// uncaught exception other than the documented ones", it checks round trips: a model file that parses
// serializes to bytes that parse to the same value, and a config that parses writes JSON that reads
// back equal. Built and run by tests/fuzz/run_model_file.sh.
//
// With -DMODEL_FILE_FUZZ_SEEDS it is a small program instead, writing seed inputs into a directory (each
// seed also goes through the checks above, so a seed that breaks a property fails before fuzzing).

#include "convert/config_json.hpp"
#include "convert/model_file.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

[[noreturn]] void property_failed(const char* what) {
  std::fprintf(stderr, "model_file_fuzz: property failed: %s\n", what);
  std::abort();
}

void fuzz_model_file(std::span<const std::byte> bytes) {
  rknnxx::host::ModelFile model;
  try {
    model = rknnxx::host::parse_model_file(bytes);
  } catch (const rknnxx::host::ModelFileError& e) {
    if (std::strncmp(e.what(), "model file: ", 12) != 0) property_failed("a model file error without its prefix");
    return;
  }
  // Inspection must never fail on a file that loads.
  (void)rknnxx::host::model_file_metadata_json(model);
  std::vector<std::byte> again;
  try {
    again = rknnxx::host::serialize_model_file(model);
  } catch (const rknnxx::host::ModelFileError&) {
    property_failed("a file that parses does not serialize");
  }
  if (!(rknnxx::host::parse_model_file(again) == model)) property_failed("model file round trip changed the value");
}

void fuzz_config(std::string_view text) {
  rknnxx::toolkit::Config config;
  try {
    config = rknnxx::host::config_from_json(text);
  } catch (const rknnxx::toolkit::ConfigError& e) {
    if (std::strncmp(e.what(), "config: ", 8) != 0) property_failed("a config error without its prefix");
    return;
  }
  const std::string written = rknnxx::host::config_to_json(config);
  if (!(rknnxx::host::config_from_json(written) == config)) property_failed("config JSON round trip changed the value");
  (void)config.max_shape_group();
}

}  // namespace

#ifndef MODEL_FILE_FUZZ_SEEDS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto* bytes = reinterpret_cast<const std::byte*>(data + 1);
  if (data[0] & 1U) fuzz_config(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  else fuzz_model_file(std::span(bytes, size - 1));
  return 0;
}

#else

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  auto write = [&](const std::string& name, char selector, std::string_view body) {
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.put(selector);
    out.write(body.data(), static_cast<std::streamsize>(body.size()));
    if (selector & 1) fuzz_config(body);
    else fuzz_model_file(std::as_bytes(std::span(body.data(), body.size())));
  };
  auto write_model = [&](const std::string& name, const rknnxx::host::ModelFile& m) {
    const auto bytes = rknnxx::host::serialize_model_file(m);
    write(name, 0, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  };

  rknnxx::host::ModelFile m;
  m.config_json = R"({"target_platform":"rk3588"})";
  write_model("model_minimal", m);
  m.custom_string = "custom";
  m.preprocess = {{{0, 0, 0}, {255, 255, 255}}};
  m.dynamic_input = rknnxx::toolkit::DynamicInput{{{1, 3, 4, 4}}, {{1, 3, 2, 2}}};
  m.onnx = {std::byte{0x08}, std::byte{0x07}, std::byte{0x12}, std::byte{0x00}};
  m.extra_sections.push_back({"qtab", false, {std::byte{1}, std::byte{2}}});
  m.quantization = rknnxx::host::ModelQuantization{rknnxx::toolkit::QuantizedDtype::w8a8,
                                                   rknnxx::toolkit::QuantizedAlgorithm::kl_divergence,
                                                   rknnxx::toolkit::QuantizedMethod::channel(),
                                                   20,
                                                   {{"x", 0.02f, -3}, {"y", 0.5f, -128}},
                                                   {},
                                                   {}};
  write_model("model_full", m);
  rknnxx::host::ModelFile hybrid = m;  // automatic hybrid quantization: y's layer runs in float16
  hybrid.quantization->float16 = {"y"};
  write_model("model_hybrid", hybrid);
  rknnxx::host::ModelFile weight_only = m;
  weight_only.quantization = rknnxx::host::ModelQuantization{rknnxx::toolkit::QuantizedDtype::w4a16,
                                                             rknnxx::toolkit::QuantizedAlgorithm::gdq,
                                                             rknnxx::toolkit::QuantizedMethod::group(64),
                                                             8,
                                                             {},
                                                             {{"w", {1.0f, 0.5f}}},
                                                             {}};
  write_model("model_w4a16", weight_only);
  rknnxx::host::ModelFile dfp = m;  // int16 dynamic fixed point: scales 2^-fl, zero points 0
  dfp.config_json = R"({"target_platform":"rv1106","quantized_dtype":"w16a16i_dfp"})";
  dfp.quantization = rknnxx::host::ModelQuantization{rknnxx::toolkit::QuantizedDtype::w16a16i_dfp,
                                                     rknnxx::toolkit::QuantizedAlgorithm::normal,
                                                     rknnxx::toolkit::QuantizedMethod::channel(),
                                                     16,
                                                     {{"x", 0.125f, 0}, {"y", 0x1p-14f, 0}},
                                                     {},
                                                     {}};
  write_model("model_w16a16i_dfp", dfp);

  // Crafted files an attack on rknn_init used (issue 12): each parses, and the runtime refuses it at load.
  rknnxx::host::ModelFile crafted = m;
  crafted.dynamic_input = rknnxx::toolkit::DynamicInput{{{1, 3, 1 << 20, 1 << 20}}, {{1, 3, 2, 2}}};
  write_model("model_shape_beyond_limit", crafted);  // 2^40 pixels: more than a tensor attribute describes
  crafted = m;
  crafted.preprocess = {{std::vector<double>(7, 0.0), std::vector<double>(7, 1.0)}};
  write_model("model_prep_seven_channels", crafted);  // 7 means and stds for a 3-channel input
  crafted = m;
  crafted.config_json = R"({"target_platform":"rk3588","mean_values":[[1,2,3,4,5,6,7]]})";
  write_model("model_conf_seven_means", crafted);

  write("config_minimal", 1, R"({"target_platform": "rk3588"})");
  write("config_full", 1, R"({"mean_values": [[103.94, 116.78, 123.68]], "std_values": [[58.82, 58.82, 58.82]],
    "quant_img_RGB2BGR": [true], "quantized_dtype": "w4a16", "quantized_algorithm": "gdq", "quantized_method": "group64",
    "float_dtype": "float16", "optimization_level": 2, "target_platform": "rk3576", "custom_string": "s",
    "remove_weight": false, "compress_weight": true, "single_core_mode": true, "model_pruning": false,
    "op_target": {"Add": "cpu"}, "dynamic_input": [[[1, 3, 224, 224]], [[1, 3, 160, 160]]], "quantize_weight": false,
    "remove_reshape": false, "sparse_infer": true, "enable_flash_attention": false, "auto_hybrid_cos_thresh": 0.9,
    "auto_hybrid_euc_thresh": null, "memory_plan_strategy": "SlowPeakGrowth", "compute_order": "DepthFirst"})");
  write("config_two_inputs", 1, R"({"target_platform": "rk3588", "mean_values": [[0], [1, 2, 3]],
    "dynamic_input": [[[1, 224], [1, 40]], [[1, 112], [1, 80]]]})");
  return 0;
}

#endif
