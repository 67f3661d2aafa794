#include "weights.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rknnxx::host::quantize {

WeightQuantization quantize_weights(std::span<float> values, std::span<const std::int64_t> shape, Method method,
                                    std::size_t channel_axis, std::size_t group_axis, IntRange ints) {
  WeightQuantization out{method, channel_axis, group_axis, 1, {}};
  const bool per_layer = method.kind == Method::Kind::layer;
  const bool per_group = method.kind == Method::Kind::group;
  if (!per_layer && channel_axis >= shape.size())
    throw std::invalid_argument(fmt::format("quantized_method {}: the weight of shape [{}] has no axis {}",
                                            method.name(), fmt::join(shape, ", "), channel_axis));
  if (per_group && (group_axis >= shape.size() || group_axis == channel_axis || method.group_size == 0))
    throw std::invalid_argument(fmt::format("quantized_method {}: cannot group axis {} of a weight of shape [{}]",
                                            method.name(), group_axis, fmt::join(shape, ", ")));
  // stride[a]: elements between neighbours along axis a.
  std::vector<std::size_t> stride(shape.size(), 1);
  for (std::size_t a = shape.size(); a-- > 1;) stride[a - 1] = stride[a] * static_cast<std::size_t>(shape[a]);
  const std::size_t channels = per_layer ? 1 : static_cast<std::size_t>(shape[channel_axis]);
  if (per_group) {
    const auto across = static_cast<std::size_t>(shape[group_axis]);
    out.groups = (across + method.group_size - 1) / method.group_size;
  }
  auto slot = [&](std::size_t i) -> std::size_t {
    if (per_layer) return 0;
    const std::size_t c = i / stride[channel_axis] % static_cast<std::size_t>(shape[channel_axis]);
    if (!per_group) return c;
    const std::size_t g = i / stride[group_axis] % static_cast<std::size_t>(shape[group_axis]) / method.group_size;
    return c * out.groups + g;
  };
  const std::size_t slots = channels * out.groups;
  std::vector<float> lo(slots, std::numeric_limits<float>::infinity());
  std::vector<float> hi(slots, -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    const std::size_t s = slot(i);
    lo[s] = std::min(lo[s], values[i]);
    hi[s] = std::max(hi[s], values[i]);
  }
  out.params.reserve(slots);
  for (std::size_t s = 0; s < slots; ++s)
    out.params.push_back(lo[s] <= hi[s] ? affine_from_range(lo[s], hi[s], ints) : affine_from_range(0, 0, ints));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = out.params[slot(i)].fake_quantize(values[i]);
  return out;
}

} // namespace rknnxx::host::quantize
