#include "statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace rknnxx::host::quantize {

double Histogram::total() const noexcept { return std::accumulate(counts_.begin(), counts_.end(), 0.0); }

void Histogram::grow_to(double lo, double hi) {
  if (!started_) {
    lo_ = lo;
    hi_ = hi;
    started_ = true;
    return;
  }
  if (lo >= lo_ && hi <= hi_) return;
  const double old_lo = lo_;
  const double old_width = bin_width();
  // Grow by at least half the old span, so that a slowly widening range does not rebin every time.
  const double span = hi_ - lo_;
  lo_ = lo < lo_ ? std::min(lo, lo_ - span / 2) : lo_;
  hi_ = hi > hi_ ? std::max(hi, hi_ + span / 2) : hi_;
  lo_ = std::min(lo_, 0.0);
  hi_ = std::max(hi_, 0.0);
  std::vector<double> old(counts_.size(), 0.0);
  old.swap(counts_);
  const double width = bin_width();
  const auto last = static_cast<double>(counts_.size() - 1);
  for (std::size_t k = 0; k < old.size(); ++k) {
    if (old[k] == 0.0) continue;
    const double centre = old_lo + (static_cast<double>(k) + 0.5) * old_width;
    counts_[static_cast<std::size_t>(std::clamp(std::floor((centre - lo_) / width), 0.0, last))] += old[k];
  }
}

void Histogram::add(std::span<const float> values, float lo, float hi) {
  grow_to(std::min(0.0, static_cast<double>(lo)), std::max(0.0, static_cast<double>(hi)));
  const double width = bin_width();
  if (!(width > 0.0)) {  // every value so far is 0
    counts_[0] += static_cast<double>(values.size());
    return;
  }
  const double inverse = 1.0 / width;
  const auto last = static_cast<double>(counts_.size() - 1);
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    const double bin = std::clamp(std::floor((static_cast<double>(v) - lo_) * inverse), 0.0, last);
    counts_[static_cast<std::size_t>(bin)] += 1.0;
  }
}

void TensorStatistics::add(std::span<const float> values) {
  float lo = std::numeric_limits<float>::infinity();
  float hi = -std::numeric_limits<float>::infinity();
  std::size_t finite = 0;
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    ++finite;
  }
  non_finite_ += values.size() - finite;
  if (finite == 0) return;
  min_ = count_ == 0 ? lo : std::min(min_, lo);
  max_ = count_ == 0 ? hi : std::max(max_, hi);
  count_ += finite;
  if (keep_histogram_) histogram_.add(values, lo, hi);
}

std::size_t kl_threshold_bins(std::span<const double> magnitudes, std::size_t levels) {
  const std::size_t n = magnitudes.size();
  if (levels == 0 || n <= levels) return n;
  // Bin 0 holds the exact zeros (half of a ReLU's output, zero padding) on top of the smallest
  // values. Zero is exact in every range, so they say nothing about where to clip; counted, they
  // decided it: a cut whose first level merges k bins spreads the spike over k bins of Q, a cost
  // growing with k, so the divergence preferred narrow cuts and clipped a ReLU6 output to a
  // quarter of its range (docs/quantization.md). Bin 0 counts as its neighbour instead, as
  // TensorRT's calibrators do.
  std::vector<double> counts(magnitudes.begin(), magnitudes.end());
  counts[0] = counts[1];
  std::vector<double> suffix(n + 1, 0.0);  // suffix[i]: the counts from bin i on (the outliers of a cut at i)
  for (std::size_t k = n; k-- > 0;) suffix[k] = suffix[k + 1] + counts[k];
  std::vector<double> p(n);
  std::vector<double> q(n);
  std::size_t best = n;
  double best_divergence = std::numeric_limits<double>::infinity();
  for (std::size_t i = levels; i <= n; ++i) {
    // P: the first i bins, the outliers beyond added to the last one (clipping moves them there).
    std::copy(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(i), p.begin());
    p[i - 1] += suffix[i];
    // Q: the same i bins merged into `levels` bins, each spread evenly over the bins of P it merged
    // that are not empty (an empty bin stays empty: quantization does not invent values there).
    std::fill(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(i), 0.0);
    for (std::size_t j = 0; j < levels; ++j) {
      const std::size_t start = j * i / levels;
      const std::size_t stop = (j + 1) * i / levels;
      double merged = 0.0;
      std::size_t non_empty = 0;
      for (std::size_t k = start; k < stop; ++k) {
        merged += counts[k];
        non_empty += p[k] != 0.0 ? 1 : 0;
      }
      if (non_empty == 0) continue;
      const double share = merged / static_cast<double>(non_empty);
      for (std::size_t k = start; k < stop; ++k)
        if (p[k] != 0.0) q[k] = share;
    }
    const double p_total = suffix[0];
    const double q_total = std::accumulate(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(i), 0.0);
    if (p_total <= 0.0) return n;
    // A bin P has and Q lacks would make the divergence infinite: it gets a tiny probability instead,
    // which still ranks such cuts last among comparable ones.
    constexpr double floor_probability = 1e-12;
    double divergence = 0.0;
    for (std::size_t k = 0; k < i; ++k) {
      if (p[k] == 0.0) continue;
      const double pk = p[k] / p_total;
      const double qk = q_total > 0.0 ? std::max(q[k] / q_total, floor_probability) : floor_probability;
      divergence += pk * std::log(pk / qk);
    }
    if (divergence < best_divergence) {
      best_divergence = divergence;
      best = i;
    }
  }
  return best;
}

namespace {

Range kl_range(const TensorStatistics& stats, IntRange ints) {
  const Histogram& h = stats.histogram();
  const auto counts = h.counts();
  const std::size_t n = counts.size();
  const double lo = stats.min();
  const double hi = stats.max();
  if (lo >= 0.0 || hi <= 0.0) {
    // One-signed: the histogram is of magnitudes already (or its mirror), with every level of the
    // integer range on one side of 0.
    const std::size_t levels = static_cast<std::size_t>(ints.levels()) + 1;
    std::vector<double> magnitudes(counts.begin(), counts.end());
    if (hi <= 0.0) std::reverse(magnitudes.begin(), magnitudes.end());
    const double threshold = static_cast<double>(kl_threshold_bins(magnitudes, levels)) * h.bin_width();
    return lo >= 0.0 ? Range{0.0, std::min(hi, threshold)} : Range{std::max(lo, -threshold), 0.0};
  }
  // Signed: fold into a histogram of |x| with as many bins, and split the levels between the signs.
  const double top = std::max(-h.lo(), h.hi());
  std::vector<double> magnitudes(n, 0.0);
  const double width = h.bin_width();
  for (std::size_t k = 0; k < n; ++k) {
    if (counts[k] == 0.0) continue;
    const double centre = std::abs(h.lo() + (static_cast<double>(k) + 0.5) * width);
    const double bin = std::clamp(std::floor(centre / top * static_cast<double>(n)), 0.0, static_cast<double>(n - 1));
    magnitudes[static_cast<std::size_t>(bin)] += counts[k];
  }
  const std::size_t levels = static_cast<std::size_t>(ints.levels() + 1) / 2;
  const double threshold = static_cast<double>(kl_threshold_bins(magnitudes, levels)) * top / static_cast<double>(n);
  return {std::max(lo, -threshold), std::min(hi, threshold)};
}

// The expected squared error of quantizing the histogram's values (at their bins' centres) to [lo, hi].
double histogram_mse(const Histogram& h, double lo, double hi, IntRange ints) {
  const AffineParams p = affine_from_range(lo, hi, ints);
  const auto counts = h.counts();
  const double width = h.bin_width();
  double sum = 0.0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] == 0.0) continue;
    const double centre = h.lo() + (static_cast<double>(k) + 0.5) * width;
    const double e = centre - p.fake_quantize(static_cast<float>(centre));
    sum += counts[k] * e * e;
  }
  return sum;
}

Range mmse_range(const TensorStatistics& stats, IntRange ints) {
  const Histogram& h = stats.histogram();
  const double lo = std::min(0.0, static_cast<double>(stats.min()));
  const double hi = std::max(0.0, static_cast<double>(stats.max()));
  // Coordinate descent over the fractions of each bound kept: a grid of `steps` fractions from 1
  // down to 1/steps for the upper bound with the lower fixed, then the lower with the upper fixed,
  // until neither moves (or four rounds).
  constexpr int steps = 128;
  auto fraction = [](int k) { return 1.0 - static_cast<double>(k) / steps; };
  // Start from the best common fraction of both bounds, so that descent begins near the valley
  // rather than at the unclipped range.
  int up = 0;
  int down = 0;
  double best = histogram_mse(h, lo, hi, ints);
  for (int k = 1; k < steps; ++k) {
    const double e = histogram_mse(h, lo * fraction(k), hi * fraction(k), ints);
    if (e < best) {
      best = e;
      up = down = k;
    }
  }
  for (int round = 0; round < 4; ++round) {
    const int old_up = up;
    const int old_down = down;
    for (int k = 0; k < steps && hi > 0.0; ++k) {
      const double e = histogram_mse(h, lo * fraction(down), hi * fraction(k), ints);
      if (e < best) {
        best = e;
        up = k;
      }
    }
    for (int k = 0; k < steps && lo < 0.0; ++k) {
      const double e = histogram_mse(h, lo * fraction(k), hi * fraction(up), ints);
      if (e < best) {
        best = e;
        down = k;
      }
    }
    if (up == old_up && down == old_down) break;
  }
  return {lo * fraction(down), hi * fraction(up)};
}

}  // namespace

Range choose_range(const TensorStatistics& stats, Algorithm algorithm, IntRange ints) {
  if (stats.empty()) return {0.0, 0.0};
  switch (algorithm) {
    case Algorithm::normal: return {stats.min(), stats.max()};
    case Algorithm::kl_divergence:
    case Algorithm::mmse:
      if (stats.histogram().empty())
        throw std::invalid_argument("quantized_algorithm needs histograms: the statistics were gathered without");
      return algorithm == Algorithm::mmse ? mmse_range(stats, ints) : kl_range(stats, ints);
    case Algorithm::gdq: break;
  }
  throw std::invalid_argument(
      "quantized_algorithm 'gdq' quantizes weights of w4a16/w8a16 models; it does not choose activation ranges");
}

}  // namespace rknnxx::host::quantize
