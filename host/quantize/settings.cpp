#include "settings.hpp"

#include <fmt/format.h>

namespace rknnxx::host::quantize {

Settings settings_for(const rknnxx::toolkit::Config& config) {
  using rknnxx::toolkit::ConfigError;
  using rknnxx::toolkit::QuantizedDtype;
  for (const auto& problem : config.check())
    if (problem.key == "quantized_dtype" || problem.key == "quantized_algorithm" || problem.key == "quantized_method")
      throw ConfigError(problem);
  const QuantizedDtype dtype = config.effective_quantized_dtype();
  // check() judges an explicit quantized_dtype only (a float model on rk2118 is valid); quantizing
  // uses the default too.
  if (dtype == QuantizedDtype::w8a8 && config.target_platform == rknnxx::Platform::rk2118)
    throw ConfigError(
        "quantized_dtype",
        "config: quantized_dtype 'w8a8' (the default) is not supported on rk2118; it has no quantized type "
        "the host implements");
  const auto algorithm = config.effective_quantized_algorithm();
  // The clip searches measure rounding error on a 2048-bin histogram, coarser than int16's 65536
  // steps, and a power-of-two grid only clips by halving the range (docs/quantization.md#w16a16i_dfp-int16-dynamic-fixed-point-rv1103rv1106).
  if (dtype == QuantizedDtype::w16a16i_dfp && algorithm != rknnxx::toolkit::QuantizedAlgorithm::normal)
    throw ConfigError("quantized_algorithm",
                      fmt::format("config: quantized_algorithm '{}' is not supported with quantized_dtype "
                                  "'w16a16i_dfp' by the host runtime; use 'normal' (the exact range)",
                                  rknnxx::toolkit::spelling(algorithm)));
  return {dtype, algorithm, config.effective_quantized_method()};
}

}  // namespace rknnxx::host::quantize
