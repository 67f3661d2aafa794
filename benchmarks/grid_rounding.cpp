// The rounding of float32 activations to an int8 grid (quantize::fake_quantize, what a quantized model's run
// does to every activation, docs/quantization.md) against memcpy of the same bytes: the exact per-value form
// (a division in double) and each vector loop this CPU has.
//
//   grid_rounding [MEGAFLOATS]   (default 1: a 4 MiB activation, larger than most layers' outputs)
//
// Prints the best of 30 runs of each and the ratios to memcpy; the values are a ReLU network's mix on a grid of
// step 6 / 255 (a Relu6's): normal values, a third exact zeros.
#include "affine.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
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
  using namespace rknnxx::host::quantize;
  const long megafloats = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1;
  if (megafloats < 1 || megafloats > 256) {
    fmt::print(stderr, "grid_rounding: MEGAFLOATS must be a whole number from 1 to 256\n");
    return 2;
  }
  const std::size_t n = static_cast<std::size_t>(megafloats) << 20;
  std::vector<float> source(n), work(n);
  std::mt19937 random(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& v : source) v = random() % 3 == 0 ? 0.0f : normal(random);
  const AffineParams grid = affine_from_range(0.0, 6.0);
  const double memcpy_us =
      best_microseconds(work, source, [&] { std::memcpy(work.data(), source.data(), n * sizeof(float)); });
  const double exact_us = best_microseconds(work, source, [&] {
    for (float& v : work) v = grid.fake_quantize(v);
  });
  fmt::print("{} Mi floats  memcpy {:.0f} us  exact per value {:.0f} us ({:.2f}x memcpy, {:.2f} ns a value)\n",
             megafloats, memcpy_us, exact_us, exact_us / memcpy_us, exact_us * 1e3 / static_cast<double>(n));
  const std::pair<QuantizeLoop, const char*> loops[] = {
      {QuantizeLoop::portable, "portable vector"}, {QuantizeLoop::avx2, "AVX2"}, {QuantizeLoop::avx512, "AVX-512"}};
  for (const auto& [loop, name] : loops) {
    if (!quantize_loop_available(loop)) {
      fmt::print("  {}: not on this CPU\n", name);
      continue;
    }
    const double us = best_microseconds(work, source, [&] { fake_quantize(work, grid, loop); });
    fmt::print("  {} {:.0f} us ({:.2f}x memcpy, {:.2f} ns a value, {:.1f}x faster than per value)\n", name, us,
               us / memcpy_us, us * 1e3 / static_cast<double>(n), exact_us / us);
  }
  return 0;
}
