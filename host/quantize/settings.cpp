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
  if (dtype != QuantizedDtype::w8a8 && !weight_only(dtype))
    throw ConfigError("quantized_dtype",
                      fmt::format("config: quantized_dtype '{}' is not quantized by the host runtime yet (w8a8, "
                                  "w8a16 and w4a16 are)",
                                  rknnxx::toolkit::spelling(dtype)));
  return {dtype, config.effective_quantized_algorithm(), config.effective_quantized_method()};
}

}  // namespace rknnxx::host::quantize
