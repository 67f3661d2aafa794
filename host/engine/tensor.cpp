#include "tensor.hpp"

#include "onnx_reader.hpp"

#include <fmt/format.h>

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/error.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

namespace rknnxx::host {

bool is_supported(DataType type) noexcept {
  switch (type) {
    case DataType::float32:
    case DataType::float16:
    case DataType::bfloat16:
    case DataType::float64:
    case DataType::int8:
    case DataType::uint8:
    case DataType::int16:
    case DataType::uint16:
    case DataType::int32:
    case DataType::uint32:
    case DataType::int64:
    case DataType::uint64:
    case DataType::boolean: return true;
    default: return false;
  }
}

std::size_t element_size(DataType type) {
  if (!is_supported(type))
    throw EngineError(fmt::format("element type {} is not supported by the host engine", dtype_name(type)));
  return onnx::bytes_per_element(type);
}

// One table of names: the ONNX reader's.
std::string_view dtype_name(DataType type) noexcept { return onnx::to_string(type); }

int64_t checked_mul(int64_t a, int64_t b, std::string_view what) {
  if (a < 0 || b < 0) {
    throw EngineError(fmt::format("{} multiplies the negative number {}", what, std::min(a, b)));
  }
  std::uint64_t product = 0;
  try {
    product = rknnxx::detail::checked_mul(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b), what);
  } catch (const rknnxx::Error&) {
    product = std::numeric_limits<std::uint64_t>::max();  // reported below, in the engine's words
  }
  if (product > static_cast<std::uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw EngineError(fmt::format("{} overflows 64 bits ({} x {})", what, a, b));
  }
  return static_cast<int64_t>(product);
}

int64_t checked_add(int64_t a, int64_t b, std::string_view what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw EngineError(fmt::format("{} overflows 64 bits ({} + {})", what, a, b));
  }
  return sum;
}

int64_t checked_sub(int64_t a, int64_t b, std::string_view what) {
  int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference)) {
    throw EngineError(fmt::format("{} overflows 64 bits ({} - {})", what, a, b));
  }
  return difference;
}

namespace {

// The product of the non-zero extents: what bounds every stride and offset of the shape.
int64_t extent_product(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      throw EngineError(fmt::format("shape {} has a negative dimension", shape_string(shape)));
    }
    if (d != 0) {
      n = checked_mul(n, d, fmt::format("the element count of shape {}", shape_string(shape)));
    }
  }
  return n;
}

}  // namespace

int64_t element_count(std::span<const int64_t> shape) {
  const int64_t product = extent_product(shape);
  return std::find(shape.begin(), shape.end(), int64_t{0}) != shape.end() ? 0 : product;
}

std::size_t byte_count(DataType type, std::span<const int64_t> shape) {
  const auto size = static_cast<int64_t>(element_size(type));
  const int64_t extents = extent_product(shape);
  if (static_cast<uint64_t>(extents) > max_tensor_bytes / static_cast<uint64_t>(size)) {
    throw EngineError(fmt::format("tensor {} {} would take {} x {} bytes, more than the {} bytes a tensor may take "
                                  "(the runtime's 32-bit size fields)",
                                  dtype_name(type), shape_string(shape), extents, size, max_tensor_bytes));
  }
  return static_cast<std::size_t>(element_count(shape) * size);
}

std::string shape_string(std::span<const int64_t> shape) { return dims_text(shape); }

std::string info_string(const TensorInfo& info) {
  return fmt::format("{} {}", dtype_name(info.dtype), shape_string(info.shape));
}

Tensor::Tensor(DataType dtype, std::vector<int64_t> shape) : Tensor(uninitialized(dtype, std::move(shape))) {
  if (data_ != nullptr) std::memset(data_, 0, bytes());
}

Tensor Tensor::uninitialized(DataType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  const std::size_t n = t.bytes();  // refuses negative dimensions and tensors beyond max_tensor_bytes
  if (n != 0) {
    t.storage_.reset(static_cast<std::byte*>(::operator new(n, std::align_val_t{tensor_alignment})));
    t.data_ = t.storage_.get();
  }
  return t;
}

Tensor Tensor::view(DataType dtype, std::vector<int64_t> shape, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  return t;
}

Tensor::Tensor(const Tensor& other) : dtype_(other.dtype_), shape_(other.shape_), data_(other.data_) {
  if (other.owns_storage()) {
    *this = other.clone();
  }
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    Tensor copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (t.bytes() != 0) {
    std::memcpy(t.raw(), raw(), t.bytes());
  }
  return t;
}

void Tensor::check_type(DataType wanted) const {
  if (wanted != dtype_) {
    throw EngineError(fmt::format("tensor of type {} read as {}", dtype_name(dtype_), dtype_name(wanted)));
  }
}

namespace {

template <class T, class Source> void convert_into(Tensor& t, const std::vector<Source>& source) {
  T* out = t.data<T>();
  for (std::size_t i = 0; i < source.size(); ++i) {
    if constexpr (is_float_bits_v<T>) {
      out[i] = T{static_cast<uint16_t>(source[i])};
    } else {
      out[i] = static_cast<T>(source[i]);
    }
  }
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto) {
  const std::string name = proto.name.empty() ? std::string("(unnamed)") : proto.name;
  if (proto.has_external_data) {
    throw EngineError(fmt::format("tensor '{}': external data is not supported; embed the weights in the model", name));
  }
  if (!is_supported(proto.data_type)) {
    throw EngineError(fmt::format("tensor '{}': element type {} is not supported by the host engine", name,
                                  dtype_name(proto.data_type)));
  }
  // Sized, bounded and checked against the data before anything is allocated: a corrupt file may
  // declare any dims.
  const std::size_t bytes = byte_count(proto.data_type, proto.dims);
  const auto count = static_cast<std::size_t>(element_count(proto.dims));
  const bool raw = !proto.raw_data.empty() || count == 0;
  if (raw && proto.raw_data.size() != bytes) {
    throw EngineError(fmt::format("tensor '{}': shape {} of {} needs {} bytes, raw_data has {}", name,
                                  shape_string(proto.dims), dtype_name(proto.data_type), bytes, proto.raw_data.size()));
  }
  auto check_count = [&](std::size_t given, std::string_view field) {
    if (given != count) {
      throw EngineError(fmt::format("tensor '{}': shape {} holds {} elements, {} holds {}", name,
                                    shape_string(proto.dims), count, field, given));
    }
  };
  if (!raw) {
    switch (proto.data_type) {
      case DataType::float32: check_count(proto.float_data.size(), "float_data"); break;
      case DataType::int64: check_count(proto.int64_data.size(), "int64_data"); break;
      case DataType::float64: check_count(proto.double_data.size(), "double_data"); break;
      case DataType::uint32:
      case DataType::uint64: check_count(proto.uint64_data.size(), "uint64_data"); break;
      default: check_count(proto.int32_data.size(), "int32_data"); break;
    }
  }
  Tensor t(proto.data_type, proto.dims);
  if (raw) {
    if (count != 0) {
      std::memcpy(t.raw(), proto.raw_data.data(), bytes);  // little-endian hosts only (x86-64, aarch64)
    }
    return t;
  }
  switch (proto.data_type) {
    case DataType::float32: std::memcpy(t.raw(), proto.float_data.data(), bytes); break;
    case DataType::int64: std::memcpy(t.raw(), proto.int64_data.data(), bytes); break;
    case DataType::float64: std::memcpy(t.raw(), proto.double_data.data(), bytes); break;
    case DataType::uint32: convert_into<uint32_t>(t, proto.uint64_data); break;
    case DataType::uint64: std::memcpy(t.raw(), proto.uint64_data.data(), bytes); break;
    default:
      visit_dtype(proto.data_type, [&]<class T>() {
        if constexpr (!std::is_floating_point_v<T> && !std::is_same_v<T, int64_t> && !std::is_same_v<T, uint32_t> &&
                      !std::is_same_v<T, uint64_t>) {
          convert_into<T>(t, proto.int32_data);  // the types ONNX stores in int32_data
        }
      });
      break;
  }
  return t;
}

AlignedBuffer::AlignedBuffer(std::size_t bytes) : size_(bytes) {
  if (bytes != 0) {
    data_.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{tensor_alignment})));
    std::memset(data_.get(), 0, bytes);
  }
}

void require_aligned(const void* memory, std::size_t alignment, std::string_view what) {
  const auto address = reinterpret_cast<std::uintptr_t>(memory);
  if (address % alignment != 0) {
    throw EngineError(fmt::format("{} at {:#x} is not aligned to {} bytes", what, address, alignment));
  }
}

}  // namespace rknnxx::host
