// The rounding of float32 activations to an int8 grid (quantize::fake_quantize, what a quantized model's run
// does to every activation, docs/quantization.md) against memcpy of the same bytes: the exact per-value form
// (a division in double) and each vector loop this CPU has.
//
//   grid_rounding [MEGAFLOATS]   (default 1: a 4 MiB activation, larger than most layers' outputs)
//
// Prints the best of 30 runs of each and the ratios to memcpy; the values are a ReLU network's mix on a grid of
// step 6 / 255 (a Relu6's): normal values, a third exact zeros.
#include "affine.hpp"

#include "rounding_bench.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

using rknnxx::bench::best_microseconds;

int main(int argc, char** argv) {
  using namespace rknnxx::host::quantize;
  const std::optional<std::size_t> floats = rknnxx::bench::activation_floats(argc, argv, "grid_rounding");
  if (!floats) return 2;
  const std::size_t n = *floats;
  const std::size_t megafloats = n >> 20;
  const std::vector<float> source = rknnxx::bench::relu_activations(n, false);
  std::vector<float> work(n);
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
