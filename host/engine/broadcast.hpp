#pragma once
// numpy-style (multidirectional) broadcasting for elementwise kernels with any number of
// operands. Adjacent dimensions that broadcast alike are merged, so that the common cases
// (same shape, scalar, per-channel [1, C, 1, 1]) run as long contiguous rows.

#include "thread_pool.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host {

// The broadcast shape, or nullopt-like failure reported through `error` (empty on success).
std::vector<int64_t> broadcast_shape(std::span<const std::vector<int64_t>> shapes, std::string& error);

class Broadcast {
public:
  static constexpr std::size_t max_operands = 8;

  // Shapes must be broadcast-compatible (see broadcast_shape).
  explicit Broadcast(std::span<const std::vector<int64_t>> shapes);

  const std::vector<int64_t>& shape() const noexcept { return shape_; }
  int64_t elements() const noexcept { return elements_; }
  std::size_t operands() const noexcept { return strides_.size(); }

  // Calls f(out_offset, offsets, steps, count) for runs of `count` consecutive output elements
  // covering [begin, end), where operand k's element j of the run is at offsets[k] + j * steps[k]
  // (steps are 0 or 1).
  template <class F> void for_each_run(int64_t begin, int64_t end, F&& f) const {
    const int64_t row = dims_.empty() ? 1 : dims_.back();
    std::array<int64_t, max_operands> offset_storage{};
    std::array<int64_t, max_operands> step_storage{};
    const std::span<int64_t> offsets(offset_storage.data(), operands());
    const std::span<int64_t> steps(step_storage.data(), operands());
    for (std::size_t k = 0; k < operands(); ++k) {
      steps[k] = dims_.empty() ? 0 : strides_[k].back();
    }
    int64_t e = begin;
    while (e < end) {
      const int64_t r = e / row;
      const int64_t col = e - r * row;
      const int64_t count = std::min(row - col, end - e);
      row_offsets(r, offsets);
      for (std::size_t k = 0; k < operands(); ++k) {
        offsets[k] += col * steps[k];
      }
      f(e, std::span<const int64_t>(offsets), std::span<const int64_t>(steps), count);
      e += count;
    }
  }

  // Splits the output over the pool and calls for_each_run on each part.
  template <class F> void parallel_runs(ThreadPool& pool, F&& f) const {
    pool.parallel_for(elements_, int64_t{1} << 14, [&](int64_t begin, int64_t end) { for_each_run(begin, end, f); });
  }

private:
  void row_offsets(int64_t row, std::span<int64_t> offsets) const;

  std::vector<int64_t> shape_;
  int64_t elements_ = 0;
  std::vector<int64_t> dims_;                  // merged output dimensions
  std::vector<std::vector<int64_t>> strides_;  // per operand, per merged dimension (0 when broadcast)
};

}  // namespace rknnxx::host
