// The rounding of float32 activations to float16 (the board's storage, engine/float16.hpp) against
// memcpy of the same bytes: the scalar reference form, the portable vector form and the CPU's
// conversion instructions (F16C, NEON) that round_to_half uses when present.
//
//   float16_rounding [MEGAFLOATS]   (default 1: a 4 MiB activation, larger than most layers' outputs)
//
// Prints the best of 30 runs of each and the ratios to memcpy; the values are a ReLU network's mix:
// normal values, a third exact zeros and a few tiny ones that float16 stores as subnormals.
#include "float16.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  const long megafloats = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  if (megafloats < 1 || megafloats > 256) {
    fmt::print(stderr, "float16_rounding: MEGAFLOATS must be a whole number from 1 to 256\n");
    return 2;
  }
  const std::size_t n = static_cast<std::size_t>(megafloats) << 20;
  std::vector<float> source(n), work(n);
  std::mt19937 random(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& v : source) {
    v = random() % 3 == 0 ? 0.0f : normal(random);
    if (random() % 50 == 0) v *= 1e-6f;
  }
  const double memcpy_us =
      best_microseconds(work, source, [&] { std::memcpy(work.data(), source.data(), n * sizeof(float)); });
  const double scalar_us = best_microseconds(work, source, [&] {
    for (float& v : work) v = rknnxx::host::round_to_half(v);
  });
  const double vector_us =
      best_microseconds(work, source, [&] { rknnxx::host::detail::round_to_half_portable(work.data(), n); });
  fmt::print("{} Mi floats  memcpy {:.0f} us  scalar {:.0f} us ({:.2f}x memcpy)  portable vector {:.0f} us ({:.2f}x "
             "memcpy, {:.1f}x faster than scalar)\n",
             megafloats, memcpy_us, scalar_us, scalar_us / memcpy_us, vector_us, vector_us / memcpy_us,
             scalar_us / vector_us);
  if (const auto hardware = rknnxx::host::detail::hardware_round_to_half()) {
    const double hardware_us = best_microseconds(work, source, [&] { hardware(work.data(), n); });
    fmt::print("  hardware conversion {:.0f} us ({:.2f}x memcpy, {:.1f}x faster than the portable vector)\n",
               hardware_us, hardware_us / memcpy_us, vector_us / hardware_us);
  } else {
    fmt::print("  no hardware conversion on this CPU: round_to_half uses the portable vector form\n");
  }
  return 0;
}
