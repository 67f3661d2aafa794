#pragma once
// The geometry of the matmul API (C = A x B, docs/matmul.md): the element types of A, B and C for
// each rknn_matmul_type, the dims and byte sizes the runtime reports in rknn_matmul_io_attr for the
// normal, native and transposed layouts on a platform, and where element (row, column) of each
// matrix lives in its layout. constexpr, so that the host runtime and rknnxx::MatMul compute one
// rule and a wrong shape can be refused at compile time.
//
//   constexpr auto g = matmul_geometry(platform_traits<Platform::rk3588>, RKNN_INT8_MM_INT8_TO_INT32,
//                                      {4, 64, 32}, MatmulLayout::native, MatmulLayout::normal);
//   static_assert(g.b.n_dims == 4 && g.b.dims[2] == 32);

#include <rknnxx/abi/c_matmul_api.h>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/platform.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rknnxx {

// The element types of A, B and C for one rknn_matmul_type.
struct MatmulTypes {
  TensorType a;
  TensorType b;
  TensorType c;
  friend constexpr bool operator==(const MatmulTypes&, const MatmulTypes&) = default;
};

// Nothing for a value that is no rknn_matmul_type (13 and 14 are not).
[[nodiscard]] constexpr std::optional<MatmulTypes> matmul_types(int type) noexcept {
  using T = TensorType;
  switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32: return MatmulTypes{T::float16, T::float16, T::float32};
    case RKNN_INT8_MM_INT8_TO_INT32: return MatmulTypes{T::int8, T::int8, T::int32};
    case RKNN_INT8_MM_INT8_TO_INT8: return MatmulTypes{T::int8, T::int8, T::int8};
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16: return MatmulTypes{T::float16, T::float16, T::float16};
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32: return MatmulTypes{T::float16, T::int8, T::float32};
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16: return MatmulTypes{T::float16, T::int8, T::float16};
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32: return MatmulTypes{T::float16, T::int4, T::float32};
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16: return MatmulTypes{T::float16, T::int4, T::float16};
    case RKNN_INT8_MM_INT8_TO_FLOAT32: return MatmulTypes{T::int8, T::int8, T::float32};
    case RKNN_INT4_MM_INT4_TO_INT16: return MatmulTypes{T::int4, T::int4, T::int16};
    case RKNN_INT8_MM_INT4_TO_INT32: return MatmulTypes{T::int8, T::int4, T::int32};
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16: return MatmulTypes{T::float16, T::int4, T::bfloat16};
    case RKNN_INT8_MM_INT4_TO_FLOAT16: return MatmulTypes{T::int8, T::int4, T::float16};
    default: return std::nullopt;
  }
}

enum class MatmulLayout : std::int16_t {
  normal = RKNN_MM_LAYOUT_NORM,         // A [M, K], B [K, N], C [M, N]
  native = RKNN_MM_LAYOUT_NATIVE,       // the NPU's blocked layouts (docs/matmul.md)
  transposed = RKNN_MM_LAYOUT_TP_NORM,  // B only: [N, K]
};

struct MatmulShape {
  std::uint32_t m = 0;
  std::uint32_t k = 0;
  std::uint32_t n = 0;
  friend constexpr bool operator==(const MatmulShape&, const MatmulShape&) = default;
};

// One of A, B and C as the runtime reports it in rknn_matmul_tensor_attr.
struct MatmulMatrix {
  TensorType type = TensorType::float32;
  MatmulLayout layout = MatmulLayout::normal;
  std::uint32_t n_dims = 0;
  std::array<std::uint32_t, 4> dims{};
  std::uint32_t size = 0;  // bytes (int4: two elements a byte)
  // Native layouts: the block extents (A: subK; B: subN, subK, segment K; C: subN). 0 otherwise.
  std::uint32_t sub_n = 0;
  std::uint32_t sub_k = 0;
  std::uint32_t segment_k = 0;  // native B: K rows per segment laid out on its own
  std::uint32_t rows = 0;       // A: M, B: K, C: M
  std::uint32_t cols = 0;       // A: K, B: N, C: N
  friend constexpr bool operator==(const MatmulMatrix&, const MatmulMatrix&) = default;

  // Where element (row, col) of the logical matrix lives, in elements from the start.
  [[nodiscard]] constexpr std::uint64_t offset(std::uint64_t row, std::uint64_t col) const noexcept {
    switch (layout) {
      case MatmulLayout::normal: return row * cols + col;
      case MatmulLayout::transposed: return col * rows + row;  // B [N, K]
      case MatmulLayout::native: break;
    }
    if (segment_k == 0) {
      // A [K/subK, M, subK] (row = m, col = k) and C [N/subN, M, subN] (row = m, col = n).
      const std::uint32_t block = sub_k != 0 ? sub_k : sub_n;
      return ((col / block) * rows + row) * block + col % block;
    }
    // B: segments of segment_k rows of K, each [N/subN, Ks/subK, subN, subK].
    const std::uint64_t segment = row / segment_k;
    const std::uint64_t first_row = segment * segment_k;
    const std::uint64_t segment_rows = rows - first_row < segment_k ? rows - first_row : segment_k;
    const std::uint64_t k = row - first_row;
    return first_row * cols + ((col / sub_n * (segment_rows / sub_k) + k / sub_k) * sub_n + col % sub_n) * sub_k +
        k % sub_k;
  }
};

struct MatmulGeometry {
  MatmulMatrix a;
  MatmulMatrix b;
  MatmulMatrix c;
};

namespace detail {
// C's native block holds 16 bytes of one row (docs/matmul.md): 4 float32 or int32, 8 float16, 16 int8.
[[nodiscard]] constexpr std::uint32_t matmul_c_sub_n(TensorType c) noexcept {
  return static_cast<std::uint32_t>(128 / bits_of(c));
}

[[nodiscard]] constexpr std::uint32_t matmul_bytes(TensorType t, std::uint64_t elements, std::string_view what) {
  const std::uint64_t bytes = bytes_for(t, elements);
  if (bytes > UINT32_MAX)
    fail("rknn_matmul_create", "{} is {} bytes, more than the 32-bit size field holds", what, bytes);
  return static_cast<std::uint32_t>(bytes);
}
}  // namespace detail

// The io_attr dims and sizes for shape (M, K, N) of `type` on `platform`, or rknnxx::Error
// (RKNN_ERR_PARAM_INVALID) naming what the platform refuses (docs/matmul.md).
[[nodiscard]] constexpr MatmulGeometry matmul_geometry(const PlatformInfo& platform, int type, MatmulShape shape,
                                                       MatmulLayout b_layout, MatmulLayout ac_layout) {
  using detail::fail;
  const auto types = matmul_types(type);
  if (!types) fail("rknn_matmul_create", "type {} is not a rknn_matmul_type (1..12 or 15)", type);
  if (platform.matmul_max_k == 0) fail("rknn_matmul_create", "{} has no matmul API", platform.name);
  const MatmulBlocking block_a = platform.matmul(types->a);
  const MatmulBlocking block_b = platform.matmul(types->b);
  if (!block_a.supported() || !block_b.supported())
    fail("rknn_matmul_create", "{} is not supported on {}", get_matmul_type_string(static_cast<rknn_matmul_type>(type)),
         platform.name);
  if (shape.m == 0 || shape.k == 0 || shape.n == 0)
    fail("rknn_matmul_create", "M, K and N must be positive (M={}, K={}, N={})", shape.m, shape.k, shape.n);
  const std::uint32_t k_align = block_a.k_align > block_b.k_align ? block_a.k_align : block_b.k_align;
  if (shape.k % k_align != 0)
    fail("rknn_matmul_create", "K={} must be a multiple of {} for {} on {}", shape.k, k_align,
         get_matmul_type_string(static_cast<rknn_matmul_type>(type)), platform.name);
  if (shape.n % block_b.n_align != 0)
    fail("rknn_matmul_create", "N={} must be a multiple of {} for {} on {}", shape.n, block_b.n_align,
         get_matmul_type_string(static_cast<rknn_matmul_type>(type)), platform.name);
  if (ac_layout == MatmulLayout::transposed)
    fail("rknn_matmul_create", "AC_layout 2 (transposed) is for B only: A and C take 0 (normal) or 1 (native)");

  MatmulGeometry g;
  const std::uint64_t mk = detail::checked_mul(shape.m, shape.k, "M x K");
  const std::uint64_t kn = detail::checked_mul(shape.k, shape.n, "K x N");
  const std::uint64_t mn = detail::checked_mul(shape.m, shape.n, "M x N");

  g.a = {types->a, ac_layout, 2,      {shape.m, shape.k, 0, 0}, detail::matmul_bytes(types->a, mk, "A"), 0, 0,
         0,        shape.m,   shape.k};
  if (ac_layout == MatmulLayout::native) {
    g.a.sub_k = block_a.a_sub_k;
    g.a.n_dims = 3;
    g.a.dims = {shape.k / g.a.sub_k, shape.m, g.a.sub_k, 0};
  }

  g.b = {types->b, b_layout, 2,      {shape.k, shape.n, 0, 0}, detail::matmul_bytes(types->b, kn, "B"), 0, 0,
         0,        shape.k,  shape.n};
  if (b_layout == MatmulLayout::transposed) {
    g.b.dims = {shape.n, shape.k, 0, 0};
  } else if (b_layout == MatmulLayout::native) {
    g.b.sub_n = block_b.b_sub_n;
    g.b.sub_k = block_b.b_sub_k;
    // Large K: B is cut into segments of matmul_b_segment_k rows, each laid out on its own.
    g.b.segment_k = platform.matmul_b_segment_k != 0 && shape.k > platform.matmul_b_segment_k
        ? platform.matmul_b_segment_k
        : shape.k;
    if (shape.n % g.b.sub_n != 0 || shape.k % g.b.sub_k != 0 || g.b.segment_k % g.b.sub_k != 0)
      fail("rknn_matmul_create", "native B needs N a multiple of {} and K of {} (N={}, K={})", g.b.sub_n, g.b.sub_k,
           shape.n, shape.k);
    g.b.n_dims = 4;
    g.b.dims = {shape.n / g.b.sub_n, shape.k / g.b.sub_k, g.b.sub_n, g.b.sub_k};
  } else if (b_layout != MatmulLayout::normal) {
    fail("rknn_matmul_create", "B_layout {} is not 0 (normal), 1 (native) or 2 (transposed)",
         static_cast<int>(b_layout));
  }

  g.c = {types->c, ac_layout, 2,      {shape.m, shape.n, 0, 0}, detail::matmul_bytes(types->c, mn, "C"), 0, 0,
         0,        shape.m,   shape.n};
  if (ac_layout == MatmulLayout::native) {
    g.c.sub_n = detail::matmul_c_sub_n(types->c);
    if (shape.n % g.c.sub_n != 0)
      fail("rknn_matmul_create", "native C needs N a multiple of {} (N={})", g.c.sub_n, shape.n);
    g.c.n_dims = 3;
    g.c.dims = {shape.n / g.c.sub_n, shape.m, g.c.sub_n, 0};
  } else if (ac_layout != MatmulLayout::normal) {
    fail("rknn_matmul_create", "AC_layout {} is not 0 (normal) or 1 (native)", static_cast<int>(ac_layout));
  }
  return g;
}

}  // namespace rknnxx
