#pragma once
// Weight quantization (quantized_method, docs/quantization.md): one set of affine parameters per
// layer (the whole tensor), per output channel (the default), or per group of `group_size`
// consecutive input channels within each output channel. Ranges are the exact minimum and maximum
// (widened to contain 0); the values are replaced in place by their quantize-dequantize image.

#include "affine.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rknnxx::host::quantize {

using Method = rknnxx::toolkit::QuantizedMethod;

struct WeightQuantization {
  Method method;
  std::size_t channel_axis = 0;  // the output-channel axis (per channel and per group)
  std::size_t group_axis = 1;    // the input-channel axis the groups split (per group)
  std::size_t groups = 1;        // groups per channel (1 unless per group)
  // layer: 1 entry; channel: one per channel; group: channel-major, `groups` per channel.
  std::vector<AffineParams> params;
};

// `values` is a row-major tensor of `shape`. Throws std::invalid_argument naming the shape when an
// axis is outside it or a group size is 0.
WeightQuantization quantize_weights(std::span<float> values, std::span<const std::int64_t> shape, Method method,
                                    std::size_t channel_axis, std::size_t group_axis = 1,
                                    IntRange ints = int8_range);

} // namespace rknnxx::host::quantize
