#pragma once
// Per-tensor activation statistics gathered over a calibration set, and the toolkit's three ways
// of choosing a tensor's quantization range from them (quantized_algorithm, docs/quantization.md):
//   normal         the exact minimum and maximum seen;
//   kl_divergence  the clipping threshold whose 8-bit histogram is closest (Kullback-Leibler) to the
//                  full histogram, as TensorRT's entropy calibration (2048 bins);
//   mmse           the clipping range whose quantization error (mean squared) is least.

#include "affine.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace rknnxx::host::quantize {

using Algorithm = rknnxx::toolkit::QuantizedAlgorithm;

// Counts over `bin_count` equal bins of [lo, hi]; lo <= 0 <= hi. When values fall outside, the range
// grows to cover them and the counts move to the bins holding their old bins' centres (so a count
// is never lost; resolution is that of the final range).
class Histogram {
public:
  static constexpr std::size_t default_bins = 2048;
  explicit Histogram(std::size_t bin_count = default_bins) : counts_(bin_count, 0.0) {}

  // `lo`/`hi`: the minimum and maximum of `values` (the caller has them already).
  void add(std::span<const float> values, float lo, float hi);

  [[nodiscard]] double lo() const noexcept { return lo_; }
  [[nodiscard]] double hi() const noexcept { return hi_; }
  [[nodiscard]] double bin_width() const noexcept { return (hi_ - lo_) / static_cast<double>(counts_.size()); }
  [[nodiscard]] std::span<const double> counts() const noexcept { return counts_; }
  [[nodiscard]] double total() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return !started_; }

private:
  void grow_to(double lo, double hi);
  std::vector<double> counts_;
  double lo_ = 0.0;
  double hi_ = 0.0;
  bool started_ = false;
};

// Statistics of one tensor: the exact range, and a histogram when an algorithm needs one.
class TensorStatistics {
public:
  explicit TensorStatistics(bool keep_histogram = true) : keep_histogram_(keep_histogram) {}
  // Non-finite values are not counted (they would make every range infinite); nan_count() tells.
  void add(std::span<const float> values);

  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }
  [[nodiscard]] float min() const noexcept { return min_; }
  [[nodiscard]] float max() const noexcept { return max_; }
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  [[nodiscard]] std::size_t non_finite_count() const noexcept { return non_finite_; }
  [[nodiscard]] const Histogram& histogram() const noexcept { return histogram_; }

private:
  bool keep_histogram_;
  float min_ = 0.0f;
  float max_ = 0.0f;
  std::size_t count_ = 0;
  std::size_t non_finite_ = 0;
  Histogram histogram_;
};

// The clipping range [lo, hi] an algorithm chooses (gdq is a weight method: not for activations).
struct Range {
  double lo = 0.0;
  double hi = 0.0;
};
// Throws std::invalid_argument for gdq, or kl_divergence/mmse on statistics without a histogram.
[[nodiscard]] Range choose_range(const TensorStatistics& stats, Algorithm algorithm, IntRange ints = int8_range);
[[nodiscard]] inline AffineParams choose_params(const TensorStatistics& stats, Algorithm algorithm,
                                                IntRange ints = int8_range) {
  const Range r = choose_range(stats, algorithm, ints);
  return affine_from_range(r.lo, r.hi, ints);
}

// TensorRT's entropy calibration on a histogram of magnitudes (bin 0 starts at 0): the number of
// leading bins, at least `levels`, whose clipped distribution quantized to `levels` bins has the
// least KL divergence from the full one. The threshold is that count times the bin width. Bin 0
// (where the exact zeros are) counts as much as bin 1.
[[nodiscard]] std::size_t kl_threshold_bins(std::span<const double> magnitudes, std::size_t levels);

}  // namespace rknnxx::host::quantize
