#pragma once
// The activation table as a model file stores it, in the "qnt8" section (docs/quantization.md): the
// converter writes a calibrated table there (an empty one for the weight-only types), with the float16
// values of a hybrid model; the runtime and the Python accuracy analysis read it back.

#include "../convert/model_file.hpp"
#include "calibrate.hpp"
#include "settings.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

namespace rknnxx::host::quantize {

inline ModelQuantization qnt8_section(const ActivationTable& table, const Settings& settings,
                                      const ClipRatios& clips = {}) {
  if (table.samples > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error(fmt::format("quantization: {} calibration samples, more than the model file's "
                                        "32-bit count holds",
                                        table.samples));
  ModelQuantization q;
  q.dtype = settings.dtype;
  q.algorithm = settings.algorithm;
  q.method = settings.method;
  q.samples = static_cast<std::uint32_t>(table.samples);
  for (const auto& [name, params] : table.params) q.tensors.push_back({name, params.scale, params.zero_point});
  for (const auto& [name, ratios] : clips) q.clipped.push_back({name, ratios});
  q.float16.assign(table.float16.begin(), table.float16.end());
  return q;
}

// gdq's clip ratios of a model file, as QuantizedSession takes them.
inline ClipRatios clip_ratios(const ModelQuantization& q) {
  ClipRatios clips;
  for (const ClippedWeight& c : q.clipped) clips[c.name] = c.ratios;
  return clips;
}

inline ActivationTable activation_table(const ModelQuantization& q) {
  ActivationTable table;
  table.algorithm = q.algorithm;
  table.samples = q.samples;
  for (const QuantizedTensor& t : q.tensors) table.params[t.name] = {t.scale, t.zero_point, activation_range(q.dtype)};
  table.float16.insert(q.float16.begin(), q.float16.end());
  return table;
}

}  // namespace rknnxx::host::quantize
