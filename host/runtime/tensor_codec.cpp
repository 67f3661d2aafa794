#include "tensor_codec.hpp"

#include "api_error.hpp"

#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/layout.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace rknnxx::host {

size_t element_bytes(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32: case RKNN_TENSOR_INT32: case RKNN_TENSOR_UINT32: return 4;
    case RKNN_TENSOR_FLOAT16: case RKNN_TENSOR_INT16: case RKNN_TENSOR_UINT16: case RKNN_TENSOR_BFLOAT16: return 2;
    case RKNN_TENSOR_INT8: case RKNN_TENSOR_UINT8: case RKNN_TENSOR_BOOL: return 1;
    case RKNN_TENSOR_INT64: return 8;
    default: break;
  }
  fail(RKNN_ERR_PARAM_INVALID, "tensor type {} cannot hold input or output data here (int4 is for matmul only)",
       static_cast<int>(type));
}

namespace {

std::string_view type_name(rknn_tensor_type type) { return name_of(static_cast<TensorType>(type)); }
std::string_view format_name(rknn_tensor_format fmt) { return name_of(static_cast<TensorFormat>(fmt)); }

std::string dims_text(std::span<const uint32_t> dims) { return fmt::format("[{}]", fmt::join(dims, ",")); }

// A public layout mapping built from a caller's strides; the core's refusal (a stride smaller
// than the extent) becomes the runtime's RKNN_ERR_INPUT_INVALID with the same message.
template <class Mapping, class... Args>
Mapping checked_mapping(Args... args) {
  try {
    return Mapping(args...);
  } catch (const rknnxx::Error& e) {
    fail(RKNN_ERR_INPUT_INVALID, "{}", e.message());
  }
}

// Checks `format` against the logical NCHW extents `s` and calls visit(mapping) with the
// buffer's mapping from include/rknnxx/core/layout.hpp. The mappings refuse zero extents, so an
// empty tensor (nothing to move) is not visited.
template <class Visit>
void visit_mapping(const BufferFormat& format, const Extents4& s, Visit&& visit) {
  const auto& d = format.dims;
  auto mismatch = [&](const char* expected) {
    fail(RKNN_ERR_INPUT_INVALID, "{} dims {} do not describe the tensor [{},{},{},{}] (NCHW): expected {}",
         format_name(format.fmt), dims_text(d), s.n, s.c, s.h, s.w, expected);
  };
  const bool empty = s.n == 0 || s.c == 0 || s.h == 0 || s.w == 0;
  switch (format.fmt) {
    case RKNN_TENSOR_NCHW: {
      if (d.size() != 4 || d[0] != s.n || d[1] != s.c || d[2] != s.h || d[3] != s.w) mismatch("[N,C,H,W]");
      if (!empty) visit(checked_mapping<layout::NCHW::mapping>(s));
      return;
    }
    case RKNN_TENSOR_NHWC: {
      if (d.size() != 4 || d[0] != s.n || d[1] != s.h || d[2] != s.w || d[3] != s.c) mismatch("[N,H,W,C]");
      if (!empty) visit(checked_mapping<layout::NHWC::mapping>(s, format.w_stride, format.h_stride));
      return;
    }
    case RKNN_TENSOR_NC1HWC2: {
      // dims[3] is the row pitch: at least the width.
      if (d.size() != 5 || d[0] != s.n || d[2] != s.h || d[3] < s.w || d[4] == 0 ||
          d[1] != (uint64_t{s.c} + d[4] - 1) / d[4])
        mismatch("[N,ceil(C/C2),H,W,C2]");
      if (!empty) visit(checked_mapping<layout::NC1HWC2::mapping>(s, d[4], d[3]));
      return;
    }
    default: break;
  }
  fail(RKNN_ERR_INPUT_INVALID, "format {} is not a 4-D layout", static_cast<int>(format.fmt));
}

// Element access in a caller's buffer, by type; values pass through double so that every
// integer type round-trips exactly.
double load(const std::byte* p, rknn_tensor_type type) noexcept {
  switch (type) {
    case RKNN_TENSOR_FLOAT32: { float v; std::memcpy(&v, p, 4); return v; }
    case RKNN_TENSOR_FLOAT16: { uint16_t v; std::memcpy(&v, p, 2); return half_bits_to_float(v); }
    case RKNN_TENSOR_BFLOAT16: { uint16_t v; std::memcpy(&v, p, 2); return std::bit_cast<float>(uint32_t{v} << 16); }
    case RKNN_TENSOR_INT8: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case RKNN_TENSOR_UINT8: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case RKNN_TENSOR_INT16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case RKNN_TENSOR_UINT16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case RKNN_TENSOR_INT32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case RKNN_TENSOR_UINT32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case RKNN_TENSOR_INT64: { int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    case RKNN_TENSOR_BOOL: { uint8_t v; std::memcpy(&v, p, 1); return v != 0; }
    default: return 0;
  }
}

template <class T>
T saturate(double v) noexcept {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T{0};
    const double r = std::nearbyint(v);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  }
}

void store(std::byte* p, rknn_tensor_type type, double v) noexcept {
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (type) {
    case RKNN_TENSOR_FLOAT32: put(static_cast<float>(v)); break;
    case RKNN_TENSOR_FLOAT16: put(float_to_half_bits(static_cast<float>(v))); break;
    case RKNN_TENSOR_BFLOAT16: {
      const uint32_t bits = std::bit_cast<uint32_t>(static_cast<float>(v));
      put(static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16));  // round to nearest even
      break;
    }
    case RKNN_TENSOR_INT8: put(saturate<int8_t>(v)); break;
    case RKNN_TENSOR_UINT8: put(saturate<uint8_t>(v)); break;
    case RKNN_TENSOR_INT16: put(saturate<int16_t>(v)); break;
    case RKNN_TENSOR_UINT16: put(saturate<uint16_t>(v)); break;
    case RKNN_TENSOR_INT32: put(saturate<int32_t>(v)); break;
    case RKNN_TENSOR_UINT32: put(saturate<uint32_t>(v)); break;
    case RKNN_TENSOR_INT64: put(saturate<int64_t>(v)); break;
    case RKNN_TENSOR_BOOL: put(static_cast<uint8_t>(v != 0)); break;
    default: break;
  }
}

// The engine tensor's element type as the runtime's.
rknn_tensor_type runtime_type(DataType type) {
  switch (type) {
    case DataType::float32: return RKNN_TENSOR_FLOAT32;
    case DataType::float16: return RKNN_TENSOR_FLOAT16;
    case DataType::int8: return RKNN_TENSOR_INT8;
    case DataType::uint8: return RKNN_TENSOR_UINT8;
    case DataType::int16: return RKNN_TENSOR_INT16;
    case DataType::int32: return RKNN_TENSOR_INT32;
    case DataType::int64: return RKNN_TENSOR_INT64;
    case DataType::boolean: return RKNN_TENSOR_BOOL;
    default: break;
  }
  fail(RKNN_ERR_MODEL_INVALID, "engine element type {} has no runtime tensor type", dtype_name(type));
}

// The logical extents of a 4-D engine shape (ONNX order NCHW).
Extents4 extents4(const std::vector<int64_t>& shape) {
  return {static_cast<uint32_t>(shape[0]), static_cast<uint32_t>(shape[1]), static_cast<uint32_t>(shape[2]),
          static_cast<uint32_t>(shape[3])};
}

} // namespace

size_t BufferFormat::required_bytes() const {
  size_t elements = 1;
  if (fmt == RKNN_TENSOR_NHWC && dims.size() == 4) {
    const size_t ws = w_stride ? w_stride : dims[2];
    const size_t hs = h_stride ? h_stride : dims[1];
    elements = size_t{dims[0]} * hs * ws * dims[3];
  } else {
    for (uint32_t d : dims) elements *= d;
  }
  return elements * element_bytes(type);
}

std::string BufferFormat::describe() const {
  std::string text = fmt::format("{} {} {}", type_name(type), format_name(fmt), dims_text(dims));
  if (w_stride != 0) text += fmt::format(" w_stride {}", w_stride);
  return text;
}

void decode(std::span<const std::byte> source, const BufferFormat& format, const Normalization& normalization,
            Tensor& target) {
  const size_t needed = format.required_bytes();
  if (source.size() < needed)
    fail(RKNN_ERR_INPUT_INVALID, "buffer of {} bytes is smaller than the {} bytes of {}", source.size(), needed,
         format.describe());
  const rknn_tensor_type out_type = runtime_type(target.dtype());
  const size_t in_size = element_bytes(format.type);
  const size_t out_size = element_bytes(out_type);
  std::byte* out = target.raw();
  const auto& shape = target.shape();

  auto normalize = [&](double v, size_t channel) {
    if (!normalization.mean.empty()) v -= normalization.mean[channel];
    if (!normalization.std.empty()) v /= normalization.std[channel];
    return v;
  };

  if (format.fmt == RKNN_TENSOR_UNDEFINED || shape.size() != 4) {
    int64_t count = 1;
    for (uint32_t d : format.dims) count *= d;
    if (count != target.elements())
      fail(RKNN_ERR_INPUT_INVALID, "{} holds {} elements, the tensor {} has {}", format.describe(), count,
           shape_string(shape), target.elements());
    if (!normalization.empty() && shape.size() != 4)
      log_info("mean/std apply to 4-D inputs only; input {} is passed as is", shape_string(shape));
    for (int64_t i = 0; i < count; ++i)
      store(out + i * out_size, out_type, load(source.data() + i * in_size, format.type));
    return;
  }

  const Extents4 s = extents4(shape);
  if (!normalization.mean.empty() && normalization.mean.size() != s.c)
    fail(RKNN_ERR_MODEL_INVALID, "the model has {} mean values for {} channels", normalization.mean.size(), s.c);
  if (!normalization.std.empty() && normalization.std.size() != s.c)
    fail(RKNN_ERR_MODEL_INVALID, "the model has {} std values for {} channels", normalization.std.size(), s.c);
  visit_mapping(format, s, [&](const auto& from) {
    size_t index = 0;
    for (size_t n = 0; n < s.n; ++n)
      for (size_t c = 0; c < s.c; ++c)
        for (size_t h = 0; h < s.h; ++h)
          for (size_t w = 0; w < s.w; ++w, ++index) {
            const double v = load(source.data() + from(n, c, h, w) * in_size, format.type);
            store(out + index * out_size, out_type, normalize(v, c));
          }
  });
}

void encode(const Tensor& source, const BufferFormat& format, std::span<std::byte> target) {
  const size_t needed = format.required_bytes();
  if (target.size() < needed)
    fail(RKNN_ERR_OUTPUT_INVALID, "buffer of {} bytes is smaller than the {} bytes of {}", target.size(), needed,
         format.describe());
  const rknn_tensor_type in_type = runtime_type(source.dtype());
  const size_t in_size = element_bytes(in_type);
  const size_t out_size = element_bytes(format.type);
  const std::byte* in = source.raw();
  const auto& shape = source.shape();

  if (format.fmt == RKNN_TENSOR_UNDEFINED || shape.size() != 4) {
    int64_t count = 1;
    for (uint32_t d : format.dims) count *= d;
    if (count != source.elements())
      fail(RKNN_ERR_OUTPUT_INVALID, "{} holds {} elements, the tensor {} has {}", format.describe(), count,
           shape_string(shape), source.elements());
    for (int64_t i = 0; i < count; ++i)
      store(target.data() + i * out_size, format.type, load(in + i * in_size, in_type));
    return;
  }

  const Extents4 s = extents4(shape);
  visit_mapping(format, s, [&](const auto& to) {
    std::memset(target.data(), 0, needed);  // padding lanes and columns read as zero
    size_t index = 0;
    for (size_t n = 0; n < s.n; ++n)
      for (size_t c = 0; c < s.c; ++c)
        for (size_t h = 0; h < s.h; ++h)
          for (size_t w = 0; w < s.w; ++w, ++index)
            store(target.data() + to(n, c, h, w) * out_size, format.type, load(in + index * in_size, in_type));
  });
}

} // namespace rknnxx::host
