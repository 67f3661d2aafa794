#pragma once
// Weight quantization (quantized_method, docs/quantization.md): one set of affine parameters per
// layer (the whole tensor), per output channel (the default), or per group of `group_size`
// consecutive input channels within each output channel. Ranges are the exact minimum and maximum
// (widened to contain 0), or that range scaled by a clip ratio gdq chose; the values are replaced
// in place by their quantize-dequantize image.

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

// `values` is a row-major tensor of `shape`. `clip` is empty (every range the exact minimum and
// maximum) or one ratio in (0, 1] per set of parameters, in the order of `params`, that scales its
// range (gdq_clip_ratios). Throws std::invalid_argument naming the shape when an axis is outside
// it, a group size is 0, or `clip` has another count.
WeightQuantization quantize_weights(std::span<float> values, std::span<const std::int64_t> shape, Method method,
                                    std::size_t channel_axis, std::size_t group_axis = 1, IntRange ints = int8_range,
                                    std::span<const float> clip = {});

// What gdq needs to know of the inputs a weight multiplies: per weight element, the mean and the
// variance of the input value it meets, over the calibration samples.
struct WeightInputMoments {
  std::vector<double> mean;
  std::vector<double> variance;
};

// gdq (docs/quantization.md): for every set of parameters, the clip ratio, among 1, 0.99, ...,
// 0.50, whose rounding least changes the layer's output on inputs of these moments. The expected
// squared output error of output channel c is, with d = w - Q(w) and the inputs' covariance
// taken as diagonal plus their mean, sum_i var_i d_i^2 + (sum_i mean_i d_i)^2 (the sums over
// the channel's elements); a set's error is that of the elements it covers. Same arguments as
// quantize_weights; `moments` has one entry per element.
std::vector<float> gdq_clip_ratios(std::span<const float> values, std::span<const std::int64_t> shape, Method method,
                                   std::size_t channel_axis, std::size_t group_axis, IntRange ints,
                                   const WeightInputMoments& moments);

}  // namespace rknnxx::host::quantize
