#pragma once
// What the examples share besides rknnxx: a synthetic RGB image (the vendor's demo resizes a photo) and the
// top-5 printout of that demo.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace example {

// A deterministic RGB image, NHWC uint8, dense rows.
inline std::vector<std::uint8_t> make_image(std::uint32_t h, std::uint32_t w) {
  std::vector<std::uint8_t> img(std::size_t{h} * w * 3);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      for (std::uint32_t k = 0; k < 3; ++k)
        img[(std::size_t{y} * w + x) * 3 + k] = static_cast<std::uint8_t>((x * 7 + y * 3 + k * 50) % 256);
  return img;
}

inline void print_top5(std::span<const float> scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t n = std::min<std::size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  fmt::print("  ---- Top{} ----\n", n);
  for (std::size_t i = 0; i < n; ++i) fmt::print("  {:8.6f} - {}\n", scores[order[i]], order[i]);
}

}  // namespace example
