#pragma once
// The buffer-geometry calculator: from (platform, element type, layout, dims) to what a tensor
// attribute reports: n_elems, size, w_stride, h_stride, size_with_stride and the native dims.
// constexpr throughout; the static form refuses impossible combinations at compile time.
//
//   constexpr auto g = geometry<Platform::rk3568, std::int8_t, layout::NC1HWC2>({1, 255, 80, 80});
//   static_assert(g.dims == Dims{1, 32, 80, 80, 8});
//   auto r = geometry(Platform::rk3588, TensorType::float16, TensorFormat::nhwc, {2, 224, 224, 3});
//
// Input dims are in the layout's logical order: NCHW [N,C,H,W], NHWC [N,H,W,C] (as the attributes
// report them), NC1HWC2 [N,C,H,W] (the logical channels; the result carries [N,C1,H,W,C2]),
// UNDEFINED any rank in the model's order.
//
// Rules (docs/c-interface.md: NC1HWC2, strides and sizes, attribute views):
//  - n_elems is the logical element count and size = n_elems x element size (int4 packed two per
//    byte); size_with_stride counts the padding too and equals mapping().required_span_size()
//    times the element size.
//  - NHWC: w_stride = W rounded up to the platform's zero-copy width alignment (INFERRED formula
//    ceil(W/A)*A; A = 8 on RK3566/RK3568, 16 on RK3562/RK3588/RV1106/RV1103, 16 INFERRED on
//    RK3576, none where undocumented) unless a w_stride is requested; h_stride = H unless a
//    larger one is requested (the ABI's h_stride is written by the caller; 0 means H).
//  - NC1HWC2: C2 is the platform's for the element type (docs/c-interface.md#nc1hwc2); C1 = ceil(C/C2); n_elems
//    excludes the padding lanes (INFERRED), size_with_stride includes them; w_stride = W unless
//    requested.
//  - NCHW and UNDEFINED are dense: size_with_stride = size; UNDEFINED reports w_stride = 0.
// Everything must fit the ABI's 32-bit fields; a geometry that does not is refused, naming it.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/platform.hpp>
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...

#include <rknnxx/core/message.hpp>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace rknnxx {

// Strides a caller asks for (0 = the platform's default) and an explicit C2 to check.
struct StrideRequest {
  std::uint32_t w_stride = 0;
  std::uint32_t h_stride = 0;
  std::uint32_t c2 = 0;  // NC1HWC2 only: must equal the platform's when the platform's is known
};

struct Geometry {
  TensorFormat format = TensorFormat::undefined;
  TensorType type = TensorType::float32;
  Dims dims;  // as the attribute reports them (NC1HWC2: [N, C1, H, W, C2])
  std::uint32_t n_elems = 0;
  std::uint32_t size = 0;              // bytes without padding
  std::uint32_t w_stride = 0;          // pixels per stored row (0 for UNDEFINED)
  std::uint32_t h_stride = 0;          // rows per stored batch (0 for UNDEFINED)
  std::uint32_t size_with_stride = 0;  // bytes with padding: allocate this much
  std::uint32_t channels = 0;          // the logical C of 4-D layouts (0 for UNDEFINED)

  [[nodiscard]] constexpr RuntimeLayout runtime_layout() const {
    return RuntimeLayout(format, dims, w_stride, h_stride, format == TensorFormat::nc1hwc2 ? channels : 0);
  }
  // The mapping of this geometry in layout L (an Error if the format is another).
  template <Layout L> [[nodiscard]] constexpr auto mapping() const { return runtime_layout().template mapping<L>(); }
  // Writes the geometry fields of an attribute (dims, n_elems, size, fmt, type, strides).
  constexpr void fill(rknn_tensor_attr& attr) const noexcept {
    dims.to_abi(attr.n_dims, attr.dims);
    attr.n_elems = n_elems;
    attr.size = size;
    attr.fmt = static_cast<rknn_tensor_format>(format);
    attr.type = static_cast<rknn_tensor_type>(type);
    attr.w_stride = w_stride;
    attr.size_with_stride = size_with_stride;
  }
  friend constexpr bool operator==(const Geometry&, const Geometry&) noexcept = default;
};

namespace detail {
constexpr std::uint32_t fit32(std::string_view field, std::uint64_t v, const Dims& dims) {
  if (v > std::numeric_limits<std::uint32_t>::max())
    fail("rknnxx::geometry", "{} = {} overflows the 32-bit field of rknn_tensor_attr (dims rank {}, {} elements)",
         field, v, dims.rank(), dims.elements());
  return static_cast<std::uint32_t>(v);
}
// In 64 bits: a width just below 2^32 rounds up past the 32-bit w_stride field (see fit32).
constexpr std::uint64_t align_up(std::uint32_t v, std::uint32_t a) noexcept {
  return a == 0 ? v : (std::uint64_t{v} + a - 1) / a * a;
}
}  // namespace detail

// The run-time calculator.
[[nodiscard]] constexpr Geometry geometry(Platform platform, TensorType type, TensorFormat format, const Dims& dims,
                                          StrideRequest request = {}) {
  constexpr std::string_view who = "rknnxx::geometry";
  const auto& info = platform_info(platform);
  if (!is_valid(type))
    detail::fail(who, "tensor type value {} is not an rknn_tensor_type", static_cast<std::uint32_t>(type));
  if (!is_valid(format))
    detail::fail(who, "format value {} is not an rknn_tensor_format", static_cast<std::uint32_t>(format));
  if (format != TensorFormat::undefined && dims.rank() != 4)
    detail::fail(who, "{} geometries take 4 dims, given {}", name_of(format), dims.rank());

  Geometry g;
  g.format = format;
  g.type = type;
  const auto bytes = [&](std::uint64_t n) { return bytes_for(type, n); };
  g.n_elems = detail::fit32("n_elems", dims.elements(), dims);
  g.size = detail::fit32("size", bytes(dims.elements()), dims);
  std::uint64_t span = dims.elements();
  switch (format) {
    case TensorFormat::undefined: g.dims = dims; break;
    case TensorFormat::nchw: {
      const layout::NCHW::mapping m(Extents4{dims[0], dims[1], dims[2], dims[3]});
      g.dims = dims;
      g.w_stride = dims[3];
      g.h_stride = dims[2];
      g.channels = dims[1];
      span = m.required_span_size();
      break;
    }
    case TensorFormat::nhwc: {
      const Extents4 e{dims[0], dims[3], dims[1], dims[2]};
      const std::uint32_t ws = request.w_stride != 0
          ? request.w_stride
          : detail::fit32("w_stride", detail::align_up(e.w, info.zero_copy_width_alignment), dims);
      const layout::NHWC::mapping m(e, ws, request.h_stride);
      g.dims = dims;
      g.w_stride = m.w_stride();
      g.h_stride = m.h_stride();
      g.channels = e.c;
      span = m.required_span_size();
      break;
    }
    case TensorFormat::nc1hwc2: {
      const std::uint32_t c2 = info.c2(type);
      if (c2 == 0 && request.c2 == 0)
        detail::fail(who, "{} has no documented NC1HWC2 C2 for {}: pass the C2 read from attr.dims[4]", info.name,
                     name_of(type));
      if (c2 != 0 && request.c2 != 0 && request.c2 != c2)
        detail::fail(who, "C2 {} is not {}'s C2 for {} ({})", request.c2, info.name, name_of(type), c2);
      const Extents4 e{dims[0], dims[1], dims[2], dims[3]};
      const layout::NC1HWC2::mapping m(e, c2 != 0 ? c2 : request.c2, request.w_stride);
      g.dims = m.dims();
      g.w_stride = m.w_stride();
      g.h_stride = e.h;
      g.channels = e.c;
      span = m.required_span_size();
      break;
    }
  }
  g.size_with_stride = detail::fit32("size_with_stride", bytes(span), dims);
  return g;
}

// The static calculator: the platform, element type and layout are types, so that combinations
// the platform does not have (an NC1HWC2 tensor of an element type without a C2) do not compile.
template <Platform P, TensorElement T, Layout L>
  requires(L::format != TensorFormat::nc1hwc2 || platform_traits<P>.c2(tensor_type_of<T>) != 0)
[[nodiscard]] constexpr Geometry geometry(const Dims& dims, StrideRequest request = {}) {
  return geometry(P, tensor_type_of<T>, L::format, dims, request);
}

// What the runtime reported against what the calculator predicts: empty when they agree, else
// one "field: computed X, reported Y" clause per difference, for messages and host-runtime tests.
// The ABI's zeros are read as documented: w_stride 0 is the width, and size_with_stride 0 (seen
// for float16 and UNDEFINED inputs) is size. A template of nothing (`template <class = void>`), compiled only
// where it is called (docs/separate-compilation.md#compile-cost).
template <class = void> [[nodiscard]] std::string geometry_mismatch(const Geometry& g, const rknn_tensor_attr& attr) {
  std::string out;
  const auto differ = [&out](std::string_view field, const auto& computed, const auto& reported) {
    if (computed == reported) return;
    out += detail::message("{}{}: computed {}, reported {}", out.empty() ? "" : "; ", field, computed, reported);
  };
  differ("fmt", name_of(g.format), name_of(static_cast<TensorFormat>(attr.fmt)));
  differ("type", name_of(g.type), name_of(static_cast<TensorType>(attr.type)));
  if (attr.n_dims > max_rank) {
    differ("n_dims", g.dims.rank(), std::size_t{attr.n_dims});
  } else {
    const std::span<const std::uint32_t> reported(attr.dims, attr.n_dims);
    if (!std::equal(g.dims.begin(), g.dims.end(), reported.begin(), reported.end()))
      differ("dims", dims_text(g.dims), dims_text(reported));
  }
  differ("n_elems", g.n_elems, attr.n_elems);
  differ("size", g.size, attr.size);
  if (g.format != TensorFormat::undefined) {
    const std::uint32_t width = g.format == TensorFormat::nhwc ? g.dims[2] : g.dims[3];
    differ("w_stride", g.w_stride, attr.w_stride == 0 ? width : attr.w_stride);
  }
  differ("size_with_stride", g.size_with_stride, attr.size_with_stride == 0 ? attr.size : attr.size_with_stride);
  return out;
}

}  // namespace rknnxx
