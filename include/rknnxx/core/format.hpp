#pragma once
// fmt formatters for the core vocabulary, printing one line the way the runtime's query dumps
// read, so that applications log attributes, dims and shape sets with fmt::print("{}", x):
//
//   [1, 3, 224, 224]                                   Dims
//   FP16 / NHWC / RK3588 / RKNN_ERR_PARAM_INVALID       TensorType / TensorFormat / Platform / Errc
//   index=0, name=data, n_dims=4, dims=[1, 224, 224, 3], n_elems=150528, size=150528, w_stride = 224,
//     size_with_stride=150528, fmt=NHWC, type=UINT8, qnt_type=AFFINE, zp=0, scale=1.000000    rknn_tensor_attr
//   index=0, name=data, shape_number=2, range=[[1, 224, 224, 3],[1, 112, 224, 3]], fmt = NHWC   rknn_input_range
//   [[[1, 224], [1, 40]], [[1, 112], [1, 80]]]          ShapeSet (the toolkit's dynamic_input)
//
// Aggregates (Geometry, Extents4, StrideRequest, MatmulBlocking, PlatformInfo) print as
// "name=value, ..." through Boost.PFR: one list of field names each, checked against the
// aggregate's field count at compile time.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/geometry.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/platform.hpp>
#include <rknnxx/core/shape_set.hpp>

#include <rknnxx/core/fmt_core.hpp>

#include <boost/pfr/core.hpp>
#include <boost/pfr/tuple_size.hpp>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <string_view>

namespace rknnxx::detail {

// Field names of the aggregates printed through Boost.PFR, in declaration order.
template <class T> inline constexpr std::array<std::string_view, 0> field_names{};
template <> inline constexpr std::array<std::string_view, 4> field_names<Extents4>{"n", "c", "h", "w"};
template <> inline constexpr std::array<std::string_view, 3> field_names<StrideRequest>{"w_stride", "h_stride", "c2"};
template <> inline constexpr std::array<std::string_view, 9> field_names<Geometry>{
    "fmt", "type", "dims", "n_elems", "size", "w_stride", "h_stride", "size_with_stride", "channels"};
template <> inline constexpr std::array<std::string_view, 5> field_names<MatmulBlocking>{
    "k_align", "n_align", "a_sub_k", "b_sub_n", "b_sub_k"};
template <> inline constexpr std::array<std::string_view, 18> field_names<PlatformInfo>{"platform",
                                                                                        "name",
                                                                                        "runtime_library",
                                                                                        "npu_cores",
                                                                                        "npu_cores_inferred",
                                                                                        "dynamic_shape",
                                                                                        "c2_8bit",
                                                                                        "c2_16bit",
                                                                                        "c2_inferred",
                                                                                        "zero_copy_width_alignment",
                                                                                        "width_alignment_inferred",
                                                                                        "matmul_int8",
                                                                                        "matmul_float16",
                                                                                        "matmul_int4",
                                                                                        "matmul_max_k",
                                                                                        "matmul_b_segment_k",
                                                                                        "function_set",
                                                                                        "query_set"};

template <class T>
concept NamedAggregate = std::is_aggregate_v<T> && (field_names<T>.size() > 0);

// Bounded copy of a fixed char array that may lack its terminator.
template <std::size_t N> constexpr std::string_view c_string(const char (&s)[N]) noexcept {
  std::size_t n = 0;
  while (n < N && s[n] != '\0') ++n;
  return {s, n};
}

template <class Out> Out format_dims(Out out, const std::uint32_t* d, std::size_t n, std::string_view sep = ", ") {
  *out++ = '[';
  for (std::size_t i = 0; i < n; ++i) out = fmt::format_to(out, "{}{}", i ? sep : "", d[i]);
  *out++ = ']';
  return out;
}

}  // namespace rknnxx::detail

template <> struct fmt::formatter<rknnxx::Dims> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknnxx::Dims& d, Ctx& ctx) const {
    return rknnxx::detail::format_dims(ctx.out(), d.begin(), d.rank());
  }
};

template <class T>
  requires std::same_as<T, rknnxx::TensorType> || std::same_as<T, rknnxx::TensorFormat> ||
    std::same_as<T, rknnxx::Platform>
struct fmt::formatter<T> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(T v, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(rknnxx::name_of(v), ctx);
  }
};

template <> struct fmt::formatter<rknnxx::Errc> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(rknnxx::Errc e, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(rknnxx::errc_name(e), ctx);
  }
};

template <> struct fmt::formatter<rknnxx::CoreMask> : fmt::formatter<std::uint32_t> {
  template <class Ctx> auto format(rknnxx::CoreMask m, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{:#x}", static_cast<std::uint32_t>(m));
  }
};

template <int E, int M> struct fmt::formatter<rknnxx::PackedFloat<E, M>> : fmt::formatter<float> {
  template <class Ctx> auto format(rknnxx::PackedFloat<E, M> v, Ctx& ctx) const {
    return fmt::formatter<float>::format(static_cast<float>(v), ctx);
  }
};

template <> struct fmt::formatter<rknnxx::Int4> : fmt::formatter<int> {
  template <class Ctx> auto format(rknnxx::Int4 v, Ctx& ctx) const {
    return fmt::formatter<int>::format(v.value(), ctx);
  }
};

// A layout tag prints its name; a mapping prints its name and the dims it reports.
template <rknnxx::Layout L> struct fmt::formatter<L> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const L&, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(L::name, ctx);
  }
};
template <class M>
  requires rknnxx::Layout<typename M::layout_type> &&
    std::same_as<M, typename M::layout_type::template mapping<typename M::extents_type>>
struct fmt::formatter<M> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const M& m, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{} {}, span={}", M::layout_type::name, m.dims(), m.required_span_size());
  }
};

template <> struct fmt::formatter<rknnxx::RuntimeLayout> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknnxx::RuntimeLayout& l, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "{} {}, w_stride={}, h_stride={}", l.format(), l.dims(), l.w_stride(),
                          l.h_stride());
  }
};

template <rknnxx::detail::NamedAggregate T> struct fmt::formatter<T> : fmt::formatter<std::string_view> {
  static_assert(rknnxx::detail::field_names<T>.size() == boost::pfr::tuple_size_v<T>,
                "field_names<T> must name every field of T");
  template <class Ctx> auto format(const T& v, Ctx& ctx) const {
    auto out = ctx.out();
    boost::pfr::for_each_field(v, [&](const auto& field, std::size_t i) {
      using F = std::remove_cvref_t<decltype(field)>;
      if constexpr (rknnxx::detail::NamedAggregate<F>)  // nested: braced, so that the line stays readable
        out = fmt::format_to(out, "{}{}={{{}}}", i ? ", " : "", rknnxx::detail::field_names<T>[i], field);
      else out = fmt::format_to(out, "{}{}={}", i ? ", " : "", rknnxx::detail::field_names<T>[i], field);
    });
    return out;
  }
};

template <std::size_t I, std::size_t S> struct fmt::formatter<rknnxx::ShapeSet<I, S>>
    : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknnxx::ShapeSet<I, S>& set, Ctx& ctx) const {
    auto out = ctx.out();
    *out++ = '[';
    for (std::size_t g = 0; g < set.num_shapes(); ++g) {
      out = fmt::format_to(out, "{}[", g ? ", " : "");
      for (std::size_t i = 0; i < set.num_inputs(); ++i)
        out = fmt::format_to(out, "{}{}", i ? ", " : "", set.shape(g, i));
      *out++ = ']';
    }
    *out++ = ']';
    return out;
  }
};

template <> struct fmt::formatter<rknn_tensor_attr> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknn_tensor_attr& a, Ctx& ctx) const {
    using namespace rknnxx;
    auto out = fmt::format_to(ctx.out(), "index={}, name={}, n_dims={}, dims=", a.index,
                              rknnxx::detail::c_string(a.name), a.n_dims);
    out = rknnxx::detail::format_dims(out, a.dims, a.n_dims < max_rank ? a.n_dims : max_rank);
    return fmt::format_to(out,
                          ", n_elems={}, size={}, w_stride = {}, size_with_stride={}, fmt={}, type={}, qnt_type={}, "
                          "zp={}, scale={:f}",
                          a.n_elems, a.size, a.w_stride, a.size_with_stride, get_format_string(a.fmt),
                          get_type_string(a.type), get_qnt_type_string(a.qnt_type), a.zp, a.scale);
  }
};

template <> struct fmt::formatter<rknn_input_range> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknn_input_range& r, Ctx& ctx) const {
    using namespace rknnxx;
    auto out = fmt::format_to(ctx.out(), "index={}, name={}, shape_number={}, range=[", r.index,
                              rknnxx::detail::c_string(r.name), r.shape_number);
    const std::size_t shapes = r.shape_number < max_shapes ? r.shape_number : max_shapes;
    const std::size_t rank = r.n_dims < max_rank ? r.n_dims : max_rank;
    for (std::size_t s = 0; s < shapes; ++s) {
      if (s) *out++ = ',';
      out = rknnxx::detail::format_dims(out, r.dyn_range[s], rank);
    }
    return fmt::format_to(out, "], fmt = {}", get_format_string(r.fmt));
  }
};

template <> struct fmt::formatter<rknn_input_output_num> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknn_input_output_num& n, Ctx& ctx) const {
    return fmt::format_to(ctx.out(), "model input num: {}, output num: {}", n.n_input, n.n_output);
  }
};

template <> struct fmt::formatter<rknnxx::TensorId> : fmt::formatter<std::string_view> {
  template <class Ctx> auto format(const rknnxx::TensorId& t, Ctx& ctx) const {
    auto out = fmt::format_to(ctx.out(), "{}",
                              t.io == rknnxx::Io::input        ? "input"
                                  : t.io == rknnxx::Io::output ? "output"
                                                               : "tensor");
    if (t.index) out = fmt::format_to(out, " {}", *t.index);
    if (!t.name.empty()) out = fmt::format_to(out, " \"{}\"", t.name);
    return out;
  }
};
