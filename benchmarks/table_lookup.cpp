// The lookup of an element-wise chain's table (host/engine/elementwise_chain.hpp: a quantized graph's HardSwish
// written out, its affine blocks), against memcpy of the same bytes: the float table (a gather of sixteen with
// AVX-512, else element by element) and the same table as the output grid's bytes (AVX512-VBMI's byte permutes).
//
//   table_lookup [MEGAFLOATS]   (default 1: a 4 MiB activation, larger than most layers' outputs)
//
// Prints the best of 30 runs of each on one thread and the ratios to memcpy; the input holds the values of an int8
// grid, the table a HardSwish of them rounded to the output's int8 grid.
#include "elementwise_chain.hpp"
#include "tensor.hpp"
#include "thread_pool.hpp"

#include "rounding_bench.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

using rknnxx::bench::best_microseconds;

int main(int argc, char** argv) {
  using namespace rknnxx::host;
  const std::optional<std::size_t> floats = rknnxx::bench::activation_floats(argc, argv, "table_lookup");
  if (!floats) return 2;
  const std::size_t n = *floats;
  constexpr float in_scale = 0.05f, out_scale = 0.03f;
  constexpr int32_t in_zero = 3, out_zero = -100;
  Tensor x(DataType::float32, {static_cast<int64_t>(n)});
  std::mt19937 random(1);
  std::uniform_int_distribution<int32_t> integer(-128, 127);
  for (float& v : x.values<float>()) v = static_cast<float>(in_scale * static_cast<double>(integer(random) - in_zero));
  std::vector<float> table(256);
  for (int32_t k = 0; k < 256; ++k) {
    const float v = in_scale * static_cast<float>(k - 128 - in_zero);
    const float hard_swish = v * std::clamp(v + 3.0f, 0.0f, 6.0f) / 6.0f;
    const float q = std::clamp(std::nearbyint(hard_swish / out_scale) + out_zero, -128.0f, 127.0f);
    table[static_cast<std::size_t>(k)] = (q - static_cast<float>(out_zero)) * out_scale;
  }
  const ChainInput input{&x, in_scale, in_zero, -128, 127};
  ThreadPool pool(1);
  Tensor y(DataType::float32, {static_cast<int64_t>(n)});
  std::vector<float> work(n), source(x.values<float>().begin(), x.values<float>().end());
  const double memcpy_us =
      best_microseconds(work, source, [&] { std::memcpy(work.data(), source.data(), n * sizeof(float)); });
  fmt::print("{} Mi floats  memcpy {:.0f} us\n", n >> 20, memcpy_us);
  const auto lookup = [&](const char* name, ChainOutputGrid grid) {
    bool bytes = false;
    const double us = best_microseconds(work, source, [&] { bytes = look_up_table(table, input, grid, y, pool); });
    fmt::print("  {} {:.0f} us ({:.2f}x memcpy, {:.2f} ns a value){}\n", name, us, us / memcpy_us,
               us * 1e3 / static_cast<double>(n), bytes ? "" : ", on the floats");
    return us;
  };
  const double on_floats = lookup("float table", ChainOutputGrid{});
  const double on_bytes = lookup("byte table ", ChainOutputGrid{out_scale, out_zero});
  fmt::print("  bytes / floats {:.2f}\n", on_bytes / on_floats);
  return 0;
}
