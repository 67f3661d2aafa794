#pragma once
// The quantization keys of the toolkit's config() as the host quantizer honours them
// (docs/quantization.md): quantized_dtype, quantized_algorithm and quantized_method, checked with
// the config's own rules (platforms, gdq, group sizes) and then against what the host implements.

#include "statistics.hpp"
#include "weights.hpp"

#include <rknnxx/toolkit/config.hpp>

namespace rknnxx::host::quantize {

struct Settings {
  Algorithm algorithm = Algorithm::normal;
  Method method = Method::channel();
};

// For build(do_quantization=True). Throws rknnxx::toolkit::ConfigError naming the key, with the
// toolkit's names in the message, for a problem Config::check() reports on a quantization key; for
// the default w8a8 on rk2118 (which has no w8a8); and for the types the host does not quantize yet
// (w8a16, w4a16, w16a16i_dfp; their algorithm gdq with them).
Settings settings_for(const rknnxx::toolkit::Config& config);

} // namespace rknnxx::host::quantize
