#include "tensor_codec.hpp"

#include "api_error.hpp"
#include "byte_table.hpp"

#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/tensor/convert.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rknnxx::host {

std::optional<rknn_tensor_type> rknn_type_of(DataType dtype) {
  switch (dtype) {
    case DataType::float32: return RKNN_TENSOR_FLOAT32;
    case DataType::float16: return RKNN_TENSOR_FLOAT16;
    case DataType::int8: return RKNN_TENSOR_INT8;
    case DataType::uint8: return RKNN_TENSOR_UINT8;
    case DataType::int16: return RKNN_TENSOR_INT16;
    case DataType::uint16: return RKNN_TENSOR_UINT16;
    case DataType::int32: return RKNN_TENSOR_INT32;
    case DataType::uint32: return RKNN_TENSOR_UINT32;
    case DataType::int64: return RKNN_TENSOR_INT64;
    case DataType::boolean: return RKNN_TENSOR_BOOL;
    case DataType::bfloat16: return RKNN_TENSOR_BFLOAT16;
    default: return std::nullopt;
  }
}

size_t element_bytes(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32:
    case RKNN_TENSOR_INT32:
    case RKNN_TENSOR_UINT32: return 4;
    case RKNN_TENSOR_FLOAT16:
    case RKNN_TENSOR_INT16:
    case RKNN_TENSOR_UINT16:
    case RKNN_TENSOR_BFLOAT16: return 2;
    case RKNN_TENSOR_INT8:
    case RKNN_TENSOR_UINT8:
    case RKNN_TENSOR_BOOL: return 1;
    case RKNN_TENSOR_INT64: return 8;
    default: break;
  }
  fail(RKNN_ERR_PARAM_INVALID, "tensor type {} cannot hold input or output data here (int4 is for matmul only)",
       static_cast<int>(type));
}

namespace {

std::string_view type_name(rknn_tensor_type type) { return name_of(static_cast<TensorType>(type)); }
std::string_view format_name(rknn_tensor_format fmt) { return name_of(static_cast<TensorFormat>(fmt)); }

// A public layout mapping built from a caller's strides; the core's refusal (a stride smaller
// than the extent) becomes the runtime's RKNN_ERR_INPUT_INVALID with the same message.
template <class Mapping, class... Args> Mapping checked_mapping(Args... args) {
  try {
    return Mapping(args...);
  } catch (const rknnxx::Error& e) {
    fail(RKNN_ERR_INPUT_INVALID, "{}", e.message());
  }
}

// Checks `format` against the logical NCHW extents `s` and calls visit(mapping) with the
// buffer's mapping from include/rknnxx/core/layout.hpp (zero extents included: an empty tensor's
// buffer may still have padding to clear).
template <class Visit> void visit_mapping(const BufferFormat& format, const Extents4& s, Visit&& visit) {
  const auto& d = format.dims;
  auto mismatch = [&](const char* expected) {
    const uint32_t nchw[] = {s.n, s.c, s.h, s.w};
    fail(RKNN_ERR_INPUT_INVALID, "{} dims {} do not describe the tensor {} (NCHW): expected {}",
         format_name(format.fmt), dims_text(d), dims_text(std::span<const uint32_t>(nchw)), expected);
  };
  switch (format.fmt) {
    case RKNN_TENSOR_NCHW: {
      if (d.size() != 4 || d[0] != s.n || d[1] != s.c || d[2] != s.h || d[3] != s.w) mismatch("[N,C,H,W]");
      return visit(checked_mapping<layout::NCHW::mapping<>>(s));
    }
    case RKNN_TENSOR_NHWC: {
      if (d.size() != 4 || d[0] != s.n || d[1] != s.h || d[2] != s.w || d[3] != s.c) mismatch("[N,H,W,C]");
      return visit(checked_mapping<layout::NHWC::mapping<>>(s, format.w_stride, format.h_stride));
    }
    case RKNN_TENSOR_NC1HWC2: {
      // dims[3] is the row pitch: at least the width.
      if (d.size() != 5 || d[0] != s.n || d[2] != s.h || d[3] < s.w || d[4] == 0 ||
          d[1] != (uint64_t{s.c} + d[4] - 1) / d[4])
        mismatch("[N,ceil(C/C2),H,W,C2]");
      return visit(checked_mapping<layout::NC1HWC2::mapping<>>(s, d[4], d[3]));
    }
    default: fail(RKNN_ERR_INPUT_INVALID, "format {} is not a 4-D layout", static_cast<int>(format.fmt));
  }
}

// The engine tensor's element type as the runtime's.
TensorType runtime_type(DataType type) {
  switch (type) {
    case DataType::float32: return TensorType::float32;
    case DataType::float16: return TensorType::float16;
    case DataType::int8: return TensorType::int8;
    case DataType::uint8: return TensorType::uint8;
    case DataType::int16: return TensorType::int16;
    case DataType::int32: return TensorType::int32;
    case DataType::int64: return TensorType::int64;
    case DataType::boolean: return TensorType::boolean;
    default: break;
  }
  fail(RKNN_ERR_MODEL_INVALID, "engine element type {} has no runtime tensor type", dtype_name(type));
}

// Element access in a caller's buffer or an engine tensor: convert.hpp's, one function per
// tensor. Values pass through double, so that every integer type round-trips exactly; integers
// round to nearest, ties to even, and saturate. The type is checked by element_bytes() first.
rknnxx::detail::LoadFn loader(rknn_tensor_type type) { return rknnxx::detail::load_fn(static_cast<TensorType>(type)); }
rknnxx::detail::LoadFn loader(DataType type) { return rknnxx::detail::load_fn(runtime_type(type)); }

// Converts `count` elements, `in_step` apart from `from` to `out_step` apart from `to`, each value
// through `op`. The loads and stores are convert.hpp's, so every path gives the same values.
template <class S, class D> struct TypedRun {
  template <class Op> void operator()(const std::byte* in, size_t from, size_t in_step, std::byte* out, size_t to,
                                      size_t out_step, size_t count, const Op& op) const noexcept {
    for (size_t i = 0; i < count; ++i)
      rknnxx::detail::store_as<D>(out, to + i * out_step, op(rknnxx::detail::load_as<S>(in, from + i * in_step)));
  }
};

// The same through the per-type functions: the rare pairs, without a loop compiled for each.
struct ErasedRun {
  rknnxx::detail::LoadFn load;
  rknnxx::detail::StoreFn store;
  template <class Op> void operator()(const std::byte* in, size_t from, size_t in_step, std::byte* out, size_t to,
                                      size_t out_step, size_t count, const Op& op) const noexcept {
    for (size_t i = 0; i < count; ++i) store(out, to + i * out_step, op(load(in, from + i * in_step)));
  }
};

// The element types of every inference's inputs and outputs (images, float16 and quantized
// tensors, the engine's float32): their pairs get loops with the load and store inlined, about
// ten times the speed of a call per element (benchmarks/README.md, I/O conversions).
template <class F> bool visit_io_type(TensorType t, F&& f) {
  switch (t) {
    case TensorType::float32: f(static_cast<float*>(nullptr)); return true;
    case TensorType::float16: f(static_cast<Float16*>(nullptr)); return true;
    case TensorType::int8: f(static_cast<int8_t*>(nullptr)); return true;
    case TensorType::uint8: f(static_cast<uint8_t*>(nullptr)); return true;
    case TensorType::int16: f(static_cast<int16_t*>(nullptr)); return true;
    default: return false;
  }
}

// out[w] = table[row[w * stride]] for w < width: a row of an image's bytes through its channel's table.
void look_up_bytes_scalar(const uint8_t* row, std::size_t stride, const float* table, float* out, std::size_t width) {
  for (std::size_t w = 0; w < width; ++w) out[w] = table[row[w * stride]];
}

#if defined(__x86_64__)
// g++ 12's AVX-512 headers start each result from a deliberately undefined register and warn about it (GCC bug
// 105593); the warning is about the header, not this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The permutes' indices, per stride 1 to 4, built once: filled per call and loaded at once, they cost a failed
// store forwarding on every row (40 % of the lookup's time on a 224-pixel row).
struct BytePicks {
  alignas(64) uint8_t of[4][64] = {};
  constexpr BytePicks() {
    for (std::size_t s = 0; s < 4; ++s)
      for (std::size_t k = 0; k < 16; ++k) of[s][k] = static_cast<uint8_t>(k * (s + 1));
  }
};
constexpr BytePicks byte_picks;

// Sixteen at a time with AVX512-VBMI: the bytes of sixteen pixels in one masked load (no byte past the last one
// read), picked by a byte permute, widened and looked up by a gather. A 224x224 image's inputs_set was 5 % of
// MobileNetV3-small's run with the scalar loads (benchmarks/README.md, "AMX or VNNI").
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void
look_up_bytes_avx512(const uint8_t* row, std::size_t stride, const float* table, float* out, std::size_t width) {
  const __m512i order = _mm512_load_si512(byte_picks.of[stride - 1]);
  const auto span = static_cast<unsigned>(15 * stride + 1);  // the bytes sixteen pixels reach: at most 61
  const __mmask64 needed = (__mmask64{1} << span) - 1;
  std::size_t w = 0;
  for (; w + 16 <= width; w += 16) {
    const __m512i bytes = _mm512_maskz_loadu_epi8(needed, row + w * stride);
    const __m128i codes = _mm512_castsi512_si128(_mm512_permutexvar_epi8(order, bytes));
    _mm512_storeu_ps(out + w, _mm512_i32gather_ps(_mm512_cvtepu8_epi32(codes), table, 4));
  }
  look_up_bytes_scalar(row + w * stride, stride, table, out + w, width - w);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// The lookup of look_up_bytes_scalar on the widest loop this CPU has for this stride.
void look_up_bytes(const uint8_t* row, std::size_t stride, const float* table, float* out, std::size_t width) {
#if defined(__x86_64__)
  if (cpu_has_byte_permutes() && stride >= 1 && stride <= 4)
    return look_up_bytes_avx512(row, stride, table, out, width);
#endif
  look_up_bytes_scalar(row, stride, table, out, width);
}

// Calls body(run) with the run converting `source` elements into `target` ones.
template <class Body> void with_run(TensorType source, TensorType target, Body&& body) {
  bool typed = false;
  visit_io_type(source, [&](auto* s) {
    typed = visit_io_type(target, [&](auto* d) {
      body(TypedRun<std::remove_pointer_t<decltype(s)>, std::remove_pointer_t<decltype(d)>>{});
    });
  });
  if (!typed) body(ErasedRun{rknnxx::detail::load_fn(source), rknnxx::detail::store_fn(target)});
}

// The logical extents of a 4-D engine shape (ONNX order NCHW).
Extents4 extents4(const std::vector<int64_t>& shape) {
  return {static_cast<uint32_t>(shape[0]), static_cast<uint32_t>(shape[1]), static_cast<uint32_t>(shape[2]),
          static_cast<uint32_t>(shape[3])};
}

// The number of elements `dims` hold. Checked: crafted dims must not wrap to a small count.
uint64_t elements_of(std::span<const uint32_t> dims) {
  uint64_t count = 1;
  for (uint32_t d : dims) count = rknnxx::detail::checked_mul(count, d, "the element count of the dims");
  return count;
}

// The element count check of a format without a 4-D layout (UNDEFINED, or a tensor of another rank).
void check_count(const BufferFormat& format, const std::vector<int64_t>& shape, uint64_t count, int count_error) {
  const auto elements = static_cast<uint64_t>(element_count(shape));
  if (count != elements)
    fail(count_error, "{} holds {} elements, the tensor {} has {}", format.describe(), count, shape_string(shape),
         elements);
}

bool without_layout(const BufferFormat& format, const std::vector<int64_t>& shape) {
  return format.fmt == RKNN_TENSOR_UNDEFINED || shape.size() != 4;
}

}  // namespace

void check_fits(const BufferFormat& format, DataType engine_type, const std::vector<int64_t>& shape, int count_error) {
  (void)format.required_bytes();  // the element type and a byte count that does not wrap
  (void)loader(format.type);
  (void)loader(engine_type);  // an engine type the runtime can name (the storer's check is the same)
  if (without_layout(format, shape)) return check_count(format, shape, elements_of(format.dims), count_error);
  visit_mapping(format, extents4(shape), [](const auto&) {});  // the dims and strides, mapping built and dropped
}

size_t BufferFormat::required_bytes() const {
  // Checked: crafted strides or dims can make the product wrap to a small byte count, and a
  // buffer of that size would then be read or written far past its end.
  uint64_t bytes = element_bytes(type);
  try {
    auto times = [&](uint64_t factor) { bytes = rknnxx::detail::checked_mul(bytes, factor, "the byte size"); };
    if (fmt == RKNN_TENSOR_NHWC && dims.size() == 4) {
      times(dims[0]);
      times(h_stride ? h_stride : dims[1]);
      times(w_stride ? w_stride : dims[2]);
      times(dims[3]);
    } else {
      times(elements_of(dims));
    }
  } catch (const rknnxx::Error& e) {
    fail(RKNN_ERR_PARAM_INVALID, "{}: {}", describe(), e.message());
  }
  if (bytes > std::numeric_limits<size_t>::max())
    fail(RKNN_ERR_PARAM_INVALID, "{}: {} bytes cannot be addressed on this target", describe(), bytes);
  return static_cast<size_t>(bytes);
}

std::string BufferFormat::describe() const {
  std::string text = fmt::format("{} {} {}", type_name(type), format_name(fmt), dims_text(dims));
  if (w_stride != 0) text += fmt::format(" w_stride {}", w_stride);
  if (h_stride != 0) text += fmt::format(" h_stride {}", h_stride);
  return text;
}

void decode(std::span<const std::byte> source, const BufferFormat& format, const Normalization& normalization,
            Tensor& target, const FloatFinish& finish, ThreadPool* pool) {
  const size_t needed = format.required_bytes();
  if (source.size() < needed)
    fail(RKNN_ERR_INPUT_INVALID, "buffer of {} bytes is smaller than the {} bytes of {}", source.size(), needed,
         format.describe());
  const TensorType from_type = static_cast<TensorType>(format.type);
  const TensorType to_type = runtime_type(target.dtype());
  const std::byte* in = source.data();
  std::byte* out = target.raw();
  const auto& shape = target.shape();
  const auto as_is = [](double v) noexcept { return v; };
  // `count` float32 values from element `index` of the target, just written.
  const auto finish_values = [&](size_t index, size_t count) {
    if (finish && to_type == TensorType::float32) finish({target.data<float>() + index, count});
  };

  if (without_layout(format, shape)) {
    const uint64_t count = elements_of(format.dims);
    check_count(format, shape, count, RKNN_ERR_INPUT_INVALID);
    if (!normalization.empty() && shape.size() != 4)
      log_info("mean/std apply to 4-D inputs only; input {} is passed as is", shape_string(shape));
    with_run(from_type, to_type, [&](const auto& run) { run(in, 0, 1, out, 0, 1, static_cast<size_t>(count), as_is); });
    finish_values(0, static_cast<size_t>(count));
    return;
  }

  const Extents4 s = extents4(shape);
  if (!normalization.mean.empty() && normalization.mean.size() != s.c)
    fail(RKNN_ERR_MODEL_INVALID, "the model has {} mean values for {} channels", normalization.mean.size(), s.c);
  if (!normalization.std.empty() && normalization.std.size() != s.c)
    fail(RKNN_ERR_MODEL_INVALID, "the model has {} std values for {} channels", normalization.std.size(), s.c);
  const bool has_mean = !normalization.mean.empty();
  const bool has_std = !normalization.std.empty();
  // Calls use(op) with channel c's normalization.
  const auto with_channel_op = [&](size_t c, const auto& use) {
    const double mean = has_mean ? normalization.mean[c] : 0.0;
    const double deviation = has_std ? normalization.std[c] : 1.0;
    if (has_std) use([&](double v) noexcept { return (v - mean) / deviation; });  // no division without std
    else if (has_mean) use([&](double v) noexcept { return v - mean; });
    else use(as_is);
  };
  // Bytes (an image's uint8 or int8) into float32: each channel's 256 possible values converted once, through the
  // same run and finish as any other element, and each element then looked up: the same bits for a fraction of
  // the work. Where the tensor has fewer pixels than a table has entries, the rows convert directly.
  const bool by_table = (from_type == TensorType::uint8 || from_type == TensorType::int8) &&
      to_type == TensorType::float32 && uint64_t{s.n} * s.h * s.w >= 256;
  std::vector<float> tables;
  if (by_table) {
    std::byte codes[256];
    for (size_t i = 0; i < 256; ++i) codes[i] = static_cast<std::byte>(i);
    tables.resize(size_t{256} * s.c);
    with_run(from_type, to_type, [&](const auto& run) {
      for (size_t c = 0; c < s.c; ++c) {
        with_channel_op(c, [&](const auto& op) {
          run(codes, 0, 1, reinterpret_cast<std::byte*>(tables.data()), c * 256, 1, 256, op);
        });
        if (finish) finish({tables.data() + c * 256, 256});
      }
    });
  }
  visit_mapping(format, s, [&](const auto& from) {
    if (uint64_t{s.n} * s.c * s.h * s.w == 0) return;  // an empty tensor (and no division by a zero extent below)
    // Every layout is affine along w: one step from the mapping, then a run per row, rows in any order.
    const size_t step = s.w > 1 ? from(0, 0, 0, 1) - from(0, 0, 0, 0) : 1;
    const auto rows = [&](int64_t begin, int64_t end) {
      const auto first = static_cast<size_t>(begin);
      size_t h = first % s.h, c = first / s.h % s.c, n = first / s.h / s.c;  // row r's, counted on below
      for (size_t r = first; r < static_cast<size_t>(end); ++r, h = h + 1 == s.h ? 0 : h + 1) {
        if (r != first && h == 0 && ++c == s.c) {
          c = 0;
          ++n;
        }
        const size_t index = r * s.w;
        if (by_table) {
          look_up_bytes(reinterpret_cast<const uint8_t*>(in) + from(n, c, h, 0), step, tables.data() + c * 256,
                        target.data<float>() + index, s.w);
          continue;
        }
        with_run(from_type, to_type, [&](const auto& run) {
          with_channel_op(c, [&](const auto& op) { run(in, from(n, c, h, 0), step, out, index, 1, s.w, op); });
        });
        finish_values(index, s.w);
      }
    };
    const auto count = static_cast<int64_t>(uint64_t{s.n} * s.c * s.h);
    if (pool != nullptr) pool->parallel_for(count, std::max<int64_t>(1, 16384 / static_cast<int64_t>(s.w)), rows);
    else rows(0, count);
  });
}

void encode(const Tensor& source, const BufferFormat& format, std::span<std::byte> target,
            const std::function<double(double)>& map) {
  const size_t needed = format.required_bytes();
  if (target.size() < needed)
    fail(RKNN_ERR_OUTPUT_INVALID, "buffer of {} bytes is smaller than the {} bytes of {}", target.size(), needed,
         format.describe());
  const TensorType from_type = runtime_type(source.dtype());
  const TensorType to_type = static_cast<TensorType>(format.type);
  const std::byte* in = source.raw();
  std::byte* out = target.data();
  const auto& shape = source.shape();
  // Every row through one of the two: the caller's map is a call per element, the identity none.
  const auto rows = [&](auto&& each_row) {
    if (map) with_run(from_type, to_type, [&](const auto& run) { each_row(run, map); });
    else with_run(from_type, to_type, [&](const auto& run) { each_row(run, [](double v) noexcept { return v; }); });
  };

  if (without_layout(format, shape)) {
    const uint64_t count = elements_of(format.dims);
    check_count(format, shape, count, RKNN_ERR_OUTPUT_INVALID);
    rows([&](const auto& run, const auto& op) { run(in, 0, 1, out, 0, 1, static_cast<size_t>(count), op); });
    return;
  }

  const Extents4 s = extents4(shape);
  visit_mapping(format, s, [&](const auto& to) {
    std::memset(out, 0, needed);  // padding lanes and columns read as zero, also around an empty tensor
    if (s.w == 0) return;
    const size_t step = s.w > 1 ? to(0, 0, 0, 1) - to(0, 0, 0, 0) : 1;  // every layout is affine along w
    rows([&](const auto& run, const auto& op) {
      size_t index = 0;
      for (size_t n = 0; n < s.n; ++n)
        for (size_t c = 0; c < s.c; ++c)
          for (size_t h = 0; h < s.h; ++h, index += s.w) run(in, index, 1, out, to(n, c, h, 0), step, s.w, op);
    });
  });
}

}  // namespace rknnxx::host
