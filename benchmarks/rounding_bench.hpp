#pragma once
// What the rounding benchmarks share (float16_rounding.cpp, grid_rounding.cpp): the activation size from the
// command line, the activations, and the best of 30 timed runs of a rounding in place.

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <random>
#include <vector>

namespace rknnxx::bench {

// The number of floats MEGAFLOATS (argv[1], default 1) asks for, or nullopt after a message naming `program`.
inline std::optional<std::size_t> activation_floats(int argc, char** argv, const char* program) {
  const long megafloats = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  if (megafloats < 1 || megafloats > 256) {
    fmt::print(stderr, "{}: MEGAFLOATS must be a whole number from 1 to 256\n", program);
    return std::nullopt;
  }
  return static_cast<std::size_t>(megafloats) << 20;
}

// A ReLU network's activations: normal values (sigma 2), a third exact zeros, and with `tiny` one in 50 scaled by
// 1e-6 (what float16 stores as subnormals). The same values on every run (a fixed seed).
inline std::vector<float> relu_activations(std::size_t count, bool tiny) {
  std::vector<float> values(count);
  std::mt19937 random(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& v : values) {
    v = random() % 3 == 0 ? 0.0f : normal(random);
    if (tiny && random() % 50 == 0) v *= 1e-6f;
  }
  return values;
}

// The best of 30 runs of f on `work`, each from a fresh copy of `source`, in microseconds.
template <class F> double best_microseconds(std::vector<float>& work, const std::vector<float>& source, F&& f) {
  double best = 1e300;
  for (int run = 0; run < 30; ++run) {
    work = source;
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    volatile float observed = work[work.size() / 2];  // the result is used: no compiler may drop the work
    (void)observed;
  }
  return best;
}

}  // namespace rknnxx::bench
