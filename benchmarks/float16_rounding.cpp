// The rounding of float32 activations to float16 (the board's storage, engine/float16.hpp) against
// memcpy of the same bytes: the scalar reference form, the portable vector form and the CPU's
// conversion instructions (F16C, NEON) that round_to_half uses when present.
//
//   float16_rounding [MEGAFLOATS]   (default 1: a 4 MiB activation, larger than most layers' outputs)
//
// Prints the best of 30 runs of each and the ratios to memcpy; the values are a ReLU network's mix:
// normal values, a third exact zeros and a few tiny ones that float16 stores as subnormals.
#include "float16.hpp"

#include "rounding_bench.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

using rknnxx::bench::best_microseconds;

int main(int argc, char** argv) {
  const std::optional<std::size_t> floats = rknnxx::bench::activation_floats(argc, argv, "float16_rounding");
  if (!floats) return 2;
  const std::size_t n = *floats;
  const std::size_t megafloats = n >> 20;
  const std::vector<float> source = rknnxx::bench::relu_activations(n, true);
  std::vector<float> work(n);
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
