// The config's quantization keys as the host quantizer takes them.
#include "settings.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace rknnxx::host::quantize;
using rknnxx::toolkit::Config;
using rknnxx::toolkit::QuantizedAlgorithm;
using rknnxx::toolkit::QuantizedDtype;
using rknnxx::toolkit::QuantizedMethod;

namespace {
std::string refusal(const Config& config) {
  try {
    (void)settings_for(config);
  } catch (const rknnxx::toolkit::ConfigError& e) {
    return e.key() + ": " + e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("defaults: w8a8, normal, per channel") {
  Config config;
  config.target_platform = rknnxx::Platform::rk3588;
  const Settings s = settings_for(config);
  CHECK(s.algorithm == QuantizedAlgorithm::normal);
  CHECK(s.method == QuantizedMethod::channel());
  config.quantized_algorithm = QuantizedAlgorithm::kl_divergence;
  config.quantized_method = QuantizedMethod::layer();
  CHECK(settings_for(config).algorithm == QuantizedAlgorithm::kl_divergence);
  CHECK(settings_for(config).method == QuantizedMethod::layer());
}

TEST_CASE("platform and key rules, with the toolkit's names") {
  Config config;
  config.target_platform = rknnxx::Platform::rk2118;
  CHECK(refusal(config).starts_with(
      "quantized_dtype: config: quantized_dtype 'w8a8' (the default) is not supported on rk2118"));
  config.quantized_dtype = QuantizedDtype::w8a8;
  CHECK(refusal(config) == "quantized_dtype: config: quantized_dtype 'w8a8' is not supported on rk2118");

  config.target_platform = rknnxx::Platform::rk3588;
  config.quantized_dtype = QuantizedDtype::w8a16;
  CHECK(refusal(config).find("'w8a16' is supported only on rk3562, not on rk3588") != std::string::npos);
  config.quantized_dtype = QuantizedDtype::w4a16;
  CHECK(refusal(config).find("'w4a16' is supported only on") != std::string::npos);
  config.quantized_dtype = QuantizedDtype::w16a16i_dfp;
  CHECK(refusal(config).find("'w16a16i_dfp' is supported only on") != std::string::npos);

  config.quantized_dtype = std::nullopt;
  config.quantized_algorithm = QuantizedAlgorithm::gdq;
  CHECK(refusal(config).starts_with("quantized_algorithm: config: quantized_algorithm 'gdq' is valid only with"));
  config.quantized_algorithm = std::nullopt;
  config.quantized_method = QuantizedMethod::group(64);
  CHECK(refusal(config).starts_with(
      "quantized_method: config: quantized_method 'group64' is valid only with quantized_dtype w4a16"));
  config.quantized_method = QuantizedMethod::group(48);
  CHECK(refusal(config).find("multiple of 32") != std::string::npos);
}

TEST_CASE("the weight-only types and gdq on their platforms") {
  Config config;
  config.target_platform = rknnxx::Platform::rk3562;
  config.quantized_dtype = QuantizedDtype::w8a16;
  Settings s = settings_for(config);
  CHECK(s.dtype == QuantizedDtype::w8a16);
  CHECK(weight_only(s.dtype));
  CHECK(weight_range(s.dtype) == int8_range);
  config.target_platform = rknnxx::Platform::rk3576;
  config.quantized_dtype = QuantizedDtype::w4a16;
  config.quantized_method = QuantizedMethod::group(128);
  s = settings_for(config);
  CHECK(s.dtype == QuantizedDtype::w4a16);
  CHECK(s.method == QuantizedMethod::group(128));
  CHECK(weight_range(s.dtype) == IntRange{-8, 7});
  CHECK_FALSE(weight_only(QuantizedDtype::w8a8));
  config.quantized_algorithm = QuantizedAlgorithm::gdq;
  CHECK(settings_for(config).algorithm == QuantizedAlgorithm::gdq);
  config.quantized_dtype = QuantizedDtype::w8a8;
  config.target_platform = rknnxx::Platform::rk3588;
  config.quantized_method = std::nullopt;
  CHECK(refusal(config).starts_with("quantized_algorithm: config: quantized_algorithm 'gdq' is valid only with "
                                    "quantized_dtype w4a16 or w8a16, not w8a8"));
}

TEST_CASE("w16a16i_dfp: int16 dynamic fixed point on rv1103/rv1106, normal ranges only") {
  Config config;
  config.quantized_dtype = QuantizedDtype::w16a16i_dfp;
  for (const auto platform : {rknnxx::Platform::rv1106, rknnxx::Platform::rv1103}) {
    config.target_platform = platform;
    const Settings s = settings_for(config);
    CHECK(s.dtype == QuantizedDtype::w16a16i_dfp);
    CHECK(s.algorithm == QuantizedAlgorithm::normal);
    CHECK(s.method == QuantizedMethod::channel());  // the default, an fl per output channel
    CHECK_FALSE(weight_only(s.dtype));
    CHECK(weight_range(s.dtype) == int16_dfp_range);
    CHECK(activation_range(s.dtype) == int16_dfp_range);
  }
  config.quantized_method = QuantizedMethod::layer();
  CHECK(settings_for(config).method == QuantizedMethod::layer());
  CHECK(activation_range(QuantizedDtype::w8a8) == int8_range);

  for (const auto platform : {rknnxx::Platform::rk3588, rknnxx::Platform::rv1106b, rknnxx::Platform::rk3562}) {
    config.target_platform = platform;
    CHECK(refusal(config).starts_with("quantized_dtype: config: quantized_dtype 'w16a16i_dfp' is supported only on"));
  }
  config.target_platform = rknnxx::Platform::rv1106;
  config.quantized_algorithm = QuantizedAlgorithm::kl_divergence;
  CHECK(refusal(config) ==
        "quantized_algorithm: config: quantized_algorithm 'kl_divergence' is not supported with "
        "quantized_dtype 'w16a16i_dfp' by the host runtime; use 'normal' (the exact range)");
  config.quantized_algorithm = QuantizedAlgorithm::mmse;
  CHECK(refusal(config).starts_with("quantized_algorithm: config: quantized_algorithm 'mmse' is not supported"));
  config.quantized_algorithm = QuantizedAlgorithm::gdq;
  CHECK(refusal(config).starts_with("quantized_algorithm: config: quantized_algorithm 'gdq'"));
  config.quantized_algorithm = std::nullopt;
  config.quantized_method = QuantizedMethod::group(32);
  CHECK(refusal(config).starts_with("quantized_method: "));
}
