#pragma once
// The direct discrete Fourier transform shared by DFT (dft.cpp) and STFT (stft.cpp): a table of
// twiddle factors made once per plan, and one frequency of one signal summed from it.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

namespace rknnxx::host {

// cos and sin of sign * 2 pi t / length for t in [0, length), interleaved (sign -1: forward, +1: inverse).
inline std::vector<double> twiddle_table(int64_t length, double sign) {
  std::vector<double> twiddle(static_cast<std::size_t>(2 * length));
  for (int64_t t = 0; t < length; ++t) {
    const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(t) / static_cast<double>(length);
    twiddle[static_cast<std::size_t>(2 * t)] = std::cos(angle);
    twiddle[static_cast<std::size_t>(2 * t + 1)] = std::sin(angle);
  }
  return twiddle;
}

// Frequency f of a signal of `count` points, sample(t) giving point t as {real, imaginary}: the sum
// of the points times twiddle[f t mod length], the index kept below length without a product that
// could overflow. Returns {real, imaginary}.
template <class Sample> std::pair<double, double> frequency_sum(const std::vector<double>& twiddle, int64_t length,
                                                                int64_t f, int64_t count, Sample&& sample) {
  double re = 0.0, im = 0.0;
  int64_t phase = 0;
  for (int64_t t = 0; t < count; ++t) {
    const auto [a, b] = sample(t);
    const double c = twiddle[static_cast<std::size_t>(2 * phase)];
    const double s = twiddle[static_cast<std::size_t>(2 * phase + 1)];
    re += a * c - b * s;
    im += a * s + b * c;
    phase += f;
    if (phase >= length) {
      phase -= length;
    }
  }
  return {re, im};
}

}  // namespace rknnxx::host
