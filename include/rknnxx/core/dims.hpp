#pragma once
// Dims: the dimensions of a tensor, rank 0 to RKNN_MAX_DIMS (16), every extent at least 1, as in
// rknn_tensor_attr::dims. A literal type usable in constexpr code and as a template argument.
//
//   constexpr Dims d{1, 3, 224, 224};   // d.rank() == 4, d.elements() == 150528
//   Dims::from_abi(attr.n_dims, attr.dims) // validated: names the bad value

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...

#include <array>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace rknnxx {

inline constexpr std::size_t max_rank = RKNN_MAX_DIMS;

class Dims {
public:
  constexpr Dims() noexcept = default;
  constexpr Dims(std::initializer_list<std::uint32_t> extents) { assign(extents.begin(), extents.size()); }
  constexpr explicit Dims(std::span<const std::uint32_t> extents) { assign(extents.data(), extents.size()); }

  // From the (n_dims, dims) pair of an ABI struct; refuses n_dims > 16 and zero extents.
  [[nodiscard]] static constexpr Dims from_abi(std::uint32_t n_dims, const std::uint32_t (&dims)[RKNN_MAX_DIMS]) {
    if (n_dims > max_rank) detail::fail("rknnxx::Dims", "rank {} exceeds RKNN_MAX_DIMS ({})", n_dims, max_rank);
    return Dims(std::span<const std::uint32_t>(dims, n_dims));
  }
  // Writes into the (n_dims, dims) pair of an ABI struct; unused entries become 0.
  constexpr void to_abi(std::uint32_t& n_dims, std::uint32_t (&dims)[RKNN_MAX_DIMS]) const noexcept {
    n_dims = rank_;
    for (std::size_t i = 0; i < max_rank; ++i) dims[i] = extents_[i];
  }

  // The members of std::extents a layout mapping reads, so that Dims can be the extents of one
  // whose rank is known at run time (layout::Undefined's default).
  using index_type = std::size_t;
  using size_type = std::size_t;
  using rank_type = std::size_t;
  [[nodiscard]] constexpr index_type extent(rank_type r) const noexcept { return extents_[r]; }

  [[nodiscard]] constexpr std::size_t rank() const noexcept { return rank_; }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return rank_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return rank_ == 0; }
  [[nodiscard]] constexpr std::uint32_t operator[](std::size_t i) const noexcept { return extents_[i]; }
  [[nodiscard]] constexpr std::uint32_t at(std::size_t i) const {
    if (i >= rank_) detail::fail("rknnxx::Dims::at", "index {} is out of range for rank {}", i, rank_);
    return extents_[i];
  }
  [[nodiscard]] constexpr const std::uint32_t* begin() const noexcept { return extents_.data(); }
  [[nodiscard]] constexpr const std::uint32_t* end() const noexcept { return extents_.data() + rank_; }
  [[nodiscard]] constexpr std::span<const std::uint32_t> span() const noexcept { return {extents_.data(), rank_}; }

  // Product of the extents (1 for rank 0), in 64 bits so that overflow of the ABI's 32-bit
  // n_elems and size fields can be detected by the caller; beyond 64 bits it is refused.
  [[nodiscard]] constexpr std::uint64_t elements() const {
    std::uint64_t n = 1;
    for (auto e : span()) n = detail::checked_mul(n, e, "the element count of the dims");
    return n;
  }

  friend constexpr bool operator==(const Dims&, const Dims&) noexcept = default;

  // Public only because a type used as a template argument must have public members; never
  // write them: they hold the invariant rank_ <= 16, extents >= 1 below rank_, zeros above.
  std::uint32_t rank_ = 0;
  std::array<std::uint32_t, max_rank> extents_{};

private:
  constexpr void assign(const std::uint32_t* p, std::size_t n) {
    if (n > max_rank) detail::fail("rknnxx::Dims", "rank {} exceeds RKNN_MAX_DIMS ({})", n, max_rank);
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] == 0) detail::fail("rknnxx::Dims", "dims[{}] is {}: every extent must be at least 1", i, p[i]);
    rank_ = static_cast<std::uint32_t>(n);
    std::copy(p, p + n, extents_.begin());
  }
};

// The runtime reports 4-D inputs as NHWC ([N, H, W, C]) while models and the toolkit's
// dynamic_input use the framework's order (NCHW for ONNX). Other ranks have no such order and
// pass through unchanged.
// Function objects (so that set.transform(nchw_to_nhwc) works) over any shape type with size(),
// [] and construction from a braced list: Dims, the engine's std::vector<int64_t>.
namespace detail {
struct NchwToNhwc {
  template <class Shape> [[nodiscard]] constexpr Shape operator()(const Shape& d) const {
    return d.size() == 4 ? Shape{d[0], d[2], d[3], d[1]} : d;
  }
};
struct NhwcToNchw {
  template <class Shape> [[nodiscard]] constexpr Shape operator()(const Shape& d) const {
    return d.size() == 4 ? Shape{d[0], d[3], d[1], d[2]} : d;
  }
};
}  // namespace detail
inline constexpr detail::NchwToNhwc nchw_to_nhwc{};
inline constexpr detail::NhwcToNchw nhwc_to_nchw{};

// "[1, 3, 224, 224]": how every message of the library writes dims and shapes, whatever their
// integer type (the runtime's uint32 extents, the engine's int64 ones with -1 for unknown).
template <std::integral I> [[nodiscard]] std::string dims_text(std::span<const I> extents) {
  std::string s = "[";
  for (std::size_t i = 0; i < extents.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(extents[i]);
  }
  return s + "]";
}
[[nodiscard]] inline std::string dims_text(const Dims& d) { return dims_text(d.span()); }
// The same for any contiguous container of integers (the engine's std::vector<int64_t> shapes).
template <class C>
  requires std::integral<typename C::value_type> && requires(const C& c) { std::span(c); }
[[nodiscard]] std::string dims_text(const C& extents) {
  return dims_text(std::span(extents));
}

}  // namespace rknnxx
