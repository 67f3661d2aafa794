#pragma once
// Summaries of measured durations for `rknnxx bench`: min, median, p99, mean, and throughput.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

namespace rknnxx::tool {

struct TimingSummary {
  std::size_t count = 0;
  double min_ms = 0;
  double median_ms = 0;
  double p99_ms = 0;  // nearest rank: the smallest sample >= 99 % of the samples
  double mean_ms = 0;
  double max_ms = 0;
};

[[nodiscard]] inline TimingSummary summarize(std::span<const double> samples_ms) {
  TimingSummary s;
  s.count = samples_ms.size();
  if (samples_ms.empty()) return s;
  std::vector<double> sorted(samples_ms.begin(), samples_ms.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.min_ms = sorted.front();
  s.max_ms = sorted.back();
  s.median_ms = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99_ms = sorted[std::clamp<std::size_t>(rank, 1, n) - 1];
  s.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  return s;
}

}  // namespace rknnxx::tool
