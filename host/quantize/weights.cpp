#include "weights.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace rknnxx::host::quantize {

namespace {

// Which set of parameters ("slot") and which output channel each element of a weight belongs to.
class Slots {
public:
  Slots(std::span<const std::int64_t> shape, Method method, std::size_t channel_axis, std::size_t group_axis)
      : shape_(shape), method_(method), channel_axis_(channel_axis), group_axis_(group_axis),
        per_layer_(method.kind == Method::Kind::layer), per_group_(method.kind == Method::Kind::group),
        stride_(shape.size(), 1) {
    if (!per_layer_ && channel_axis >= shape.size())
      throw std::invalid_argument(fmt::format("quantized_method {}: the weight of shape [{}] has no axis {}",
                                              method.name(), fmt::join(shape, ", "), channel_axis));
    if (per_group_ && (group_axis >= shape.size() || group_axis == channel_axis || method.group_size == 0))
      throw std::invalid_argument(fmt::format("quantized_method {}: cannot group axis {} of a weight of shape [{}]",
                                              method.name(), group_axis, fmt::join(shape, ", ")));
    // stride[a]: elements between neighbours along axis a.
    for (std::size_t a = shape.size(); a-- > 1;) stride_[a - 1] = stride_[a] * static_cast<std::size_t>(shape[a]);
    if (per_group_) {
      const auto across = static_cast<std::size_t>(shape[group_axis]);
      groups_ = (across + method.group_size - 1) / method.group_size;
    }
    channels_ = channel_axis < shape.size() ? static_cast<std::size_t>(shape[channel_axis]) : 1;
  }
  [[nodiscard]] std::size_t groups() const noexcept { return groups_; }
  [[nodiscard]] std::size_t channels() const noexcept { return channels_; }
  [[nodiscard]] std::size_t count() const noexcept { return (per_layer_ ? 1 : channels_) * groups_; }
  // The output channel of element i (0 when the weight has no channel axis).
  [[nodiscard]] std::size_t channel(std::size_t i) const noexcept {
    return channel_axis_ < shape_.size() ? i / stride_[channel_axis_] % channels_ : 0;
  }
  [[nodiscard]] std::size_t slot(std::size_t i) const noexcept {
    if (per_layer_) return 0;
    if (!per_group_) return channel(i);
    const std::size_t g = i / stride_[group_axis_] % static_cast<std::size_t>(shape_[group_axis_]) / method_.group_size;
    return channel(i) * groups_ + g;
  }

private:
  std::span<const std::int64_t> shape_;
  Method method_;
  std::size_t channel_axis_, group_axis_;
  bool per_layer_, per_group_;
  std::vector<std::size_t> stride_;
  std::size_t groups_ = 1;
  std::size_t channels_ = 1;
};

// The exact minimum and maximum of each slot's finite values (lo > hi: none).
std::pair<std::vector<float>, std::vector<float>> slot_ranges(std::span<const float> values, const Slots& slots) {
  std::vector<float> lo(slots.count(), std::numeric_limits<float>::infinity());
  std::vector<float> hi(slots.count(), -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    const std::size_t s = slots.slot(i);
    lo[s] = std::min(lo[s], values[i]);
    hi[s] = std::max(hi[s], values[i]);
  }
  return {std::move(lo), std::move(hi)};
}

AffineParams clipped_params(float lo, float hi, double ratio, IntRange ints) {
  return lo <= hi ? affine_from_range(ratio * lo, ratio * hi, ints) : affine_from_range(0, 0, ints);
}

}  // namespace

WeightQuantization quantize_weights(std::span<float> values, std::span<const std::int64_t> shape, Method method,
                                    std::size_t channel_axis, std::size_t group_axis, IntRange ints,
                                    std::span<const float> clip) {
  const Slots slots(shape, method, channel_axis, group_axis);
  WeightQuantization out{method, channel_axis, group_axis, slots.groups(), {}};
  if (!clip.empty() && clip.size() != slots.count())
    throw std::invalid_argument(fmt::format("quantized_method {}: {} clip ratios for a weight of shape [{}], which has "
                                            "{} sets of parameters",
                                            method.name(), clip.size(), fmt::join(shape, ", "), slots.count()));
  const auto [lo, hi] = slot_ranges(values, slots);
  out.params.reserve(slots.count());
  for (std::size_t s = 0; s < slots.count(); ++s)
    out.params.push_back(clipped_params(lo[s], hi[s], clip.empty() ? 1.0 : double{clip[s]}, ints));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = out.params[slots.slot(i)].fake_quantize(values[i]);
  return out;
}

std::vector<float> gdq_clip_ratios(std::span<const float> values, std::span<const std::int64_t> shape, Method method,
                                   std::size_t channel_axis, std::size_t group_axis, IntRange ints,
                                   const WeightInputMoments& moments) {
  const Slots slots(shape, method, channel_axis, group_axis);
  if (moments.mean.size() != values.size() || moments.variance.size() != values.size())
    throw std::invalid_argument(
        fmt::format("gdq: input moments for {} elements, the weight has {}", moments.mean.size(), values.size()));
  const auto [lo, hi] = slot_ranges(values, slots);
  std::vector<std::vector<std::size_t>> members(slots.count());
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::isfinite(values[i])) members[slots.slot(i)].push_back(i);
  constexpr int candidates = 51;  // ratios 1.00, 0.99, ..., 0.50
  std::vector<float> ratios(slots.count(), 1.0f);
  // Per layer a set covers every channel; otherwise one, whose mean term is mean_error[0].
  const bool one_channel = method.kind != Method::Kind::layer;
  std::vector<double> mean_error(one_channel ? 1 : slots.channels());
  for (std::size_t s = 0; s < slots.count(); ++s) {
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k < candidates; ++k) {
      const float ratio = 1.0f - 0.01f * static_cast<float>(k);
      const AffineParams p = clipped_params(lo[s], hi[s], ratio, ints);
      std::fill(mean_error.begin(), mean_error.end(), 0.0);
      double error = 0;
      for (std::size_t i : members[s]) {
        const double d = double{values[i]} - p.fake_quantize(values[i]);
        error += moments.variance[i] * d * d;
        mean_error[one_channel ? 0 : slots.channel(i)] += moments.mean[i] * d;
      }
      for (double m : mean_error) error += m * m;
      if (error < best) {  // ties keep the wider range
        best = error;
        ratios[s] = ratio;
      }
    }
  }
  return ratios;
}

}  // namespace rknnxx::host::quantize
