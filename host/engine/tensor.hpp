#pragma once
// Tensor values of the host engine: an element type from the ONNX subset the engine
// executes, a shape, and storage that is either owned (64-byte aligned) or a view.

#include "engine_error.hpp"
#include "float16.hpp"
#include "onnx_model.hpp"

#include <rknnxx/abi/c_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rknnxx::host {

using onnx::DataType;

inline constexpr std::size_t tensor_alignment = 64;

// n rounded up to a multiple of `alignment`.
constexpr std::size_t align_up(std::size_t n, std::size_t alignment) noexcept {
  return (n + alignment - 1) / alignment * alignment;
}
// Throws EngineError naming `what`, its address and the alignment unless `memory` starts at a
// multiple of `alignment` (memory a caller hands the engine to keep tensors in).
void require_aligned(const void* memory, std::size_t alignment, std::string_view what);

// float32, float16, bfloat16, float64, int8, uint8, int16, uint16, int32, uint32, int64, uint64 and bool.
bool is_supported(DataType type) noexcept;
// Bytes of one element; throws EngineError for a type outside the supported subset.
std::size_t element_size(DataType type);
std::string_view dtype_name(DataType type) noexcept;

template <class T> struct dtype_of_t;
template <> struct dtype_of_t<float> {
  static constexpr DataType value = DataType::float32;
};
template <> struct dtype_of_t<half> {
  static constexpr DataType value = DataType::float16;
};
template <> struct dtype_of_t<bfloat16> {
  static constexpr DataType value = DataType::bfloat16;
};
template <> struct dtype_of_t<double> {
  static constexpr DataType value = DataType::float64;
};
template <> struct dtype_of_t<int8_t> {
  static constexpr DataType value = DataType::int8;
};
template <> struct dtype_of_t<uint8_t> {
  static constexpr DataType value = DataType::uint8;
};
template <> struct dtype_of_t<int16_t> {
  static constexpr DataType value = DataType::int16;
};
template <> struct dtype_of_t<uint16_t> {
  static constexpr DataType value = DataType::uint16;
};
template <> struct dtype_of_t<uint32_t> {
  static constexpr DataType value = DataType::uint32;
};
template <> struct dtype_of_t<uint64_t> {
  static constexpr DataType value = DataType::uint64;
};
template <> struct dtype_of_t<int32_t> {
  static constexpr DataType value = DataType::int32;
};
template <> struct dtype_of_t<int64_t> {
  static constexpr DataType value = DataType::int64;
};
template <> struct dtype_of_t<bool> {
  static constexpr DataType value = DataType::boolean;
};
template <class T> inline constexpr DataType dtype_of = dtype_of_t<T>::value;

// Calls f.template operator()<T>() with the C++ type of `type`; throws for other types.
template <class F> decltype(auto) visit_dtype(DataType type, F&& f) {
  switch (type) {
    case DataType::float32: return f.template operator()<float>();
    case DataType::float16: return f.template operator()<half>();
    case DataType::bfloat16: return f.template operator()<bfloat16>();
    case DataType::float64: return f.template operator()<double>();
    case DataType::int8: return f.template operator()<int8_t>();
    case DataType::uint8: return f.template operator()<uint8_t>();
    case DataType::int16: return f.template operator()<int16_t>();
    case DataType::uint16: return f.template operator()<uint16_t>();
    case DataType::uint32: return f.template operator()<uint32_t>();
    case DataType::uint64: return f.template operator()<uint64_t>();
    case DataType::int32: return f.template operator()<int32_t>();
    case DataType::int64: return f.template operator()<int64_t>();
    case DataType::boolean: return f.template operator()<bool>();
    default: break;
  }
  throw EngineError("element type " + std::string(dtype_name(type)) + " is not supported by the host engine");
}

// The most bytes one tensor may take. The runtime reports the size of a tensor, and of the weight
// and internal memory the engine needs, in 32-bit fields (rknn_tensor_attr::size, rknn_mem_size), so
// a larger tensor could be neither described nor placed. Zero extents aside, the extents of every
// shape the engine accepts multiply out to at most this many bytes, so that every element count,
// stride and offset computed from them fits int64_t.
inline constexpr uint64_t max_tensor_bytes = std::numeric_limits<decltype(rknn_tensor_attr::size)>::max();

// a * b for extents, element counts and byte counts (neither negative), through the library's one
// checked multiply; throws EngineError naming `what` when the product exceeds int64_t.
int64_t checked_mul(int64_t a, int64_t b, std::string_view what);
// a + b and a - b for extents and attributes that may be negative (pads); throw EngineError naming
// `what` on overflow.
int64_t checked_add(int64_t a, int64_t b, std::string_view what);
int64_t checked_sub(int64_t a, int64_t b, std::string_view what);

// Product of the dimensions (1 for a scalar). Throws EngineError for a negative dimension and for
// a product of the non-zero dimensions beyond int64_t (so no shape's count wraps).
int64_t element_count(std::span<const int64_t> shape);
// Bytes of a tensor of this type and shape; throws EngineError, naming the tensor as "type [shape]",
// when its non-zero extents describe more than max_tensor_bytes (or the type is not supported).
std::size_t byte_count(DataType type, std::span<const int64_t> shape);
// "[1, 3, 224, 224]": the library's one way of writing dims in messages (rknnxx::dims_text)
std::string shape_string(std::span<const int64_t> shape);

// Element type and shape of a tensor, without data.
struct TensorInfo {
  DataType dtype = DataType::undefined;
  std::vector<int64_t> shape;

  int64_t elements() const { return element_count(shape); }
  std::size_t bytes() const { return byte_count(dtype, shape); }
  friend bool operator==(const TensorInfo&, const TensorInfo&) = default;
};
// "float32 [1, 3, 224, 224]"
std::string info_string(const TensorInfo& info);

class Tensor {
public:
  Tensor() = default;
  // Owning, zero-filled, 64-byte aligned.
  Tensor(DataType dtype, std::vector<int64_t> shape);
  explicit Tensor(const TensorInfo& info) : Tensor(info.dtype, info.shape) {}
  // Owning, 64-byte aligned, its bytes left as the allocator gives them: for a caller that writes every one.
  static Tensor uninitialized(DataType dtype, std::vector<int64_t> shape);

  // A view of memory owned elsewhere (must hold the tensor's bytes and outlive the view).
  static Tensor view(DataType dtype, std::vector<int64_t> shape, void* data);
  static Tensor view(DataType dtype, std::vector<int64_t> shape, const void* data) {
    return view(dtype, std::move(shape), const_cast<void*>(data));
  }
  // Owning tensor holding a copy of `values` (element count must match the shape).
  template <class T> static Tensor from(std::vector<int64_t> shape, std::span<const T> values) {
    Tensor t(dtype_of<T>, std::move(shape));
    if (static_cast<std::size_t>(t.elements()) != values.size()) {
      throw EngineError("Tensor::from: shape " + shape_string(t.shape()) + " holds " + std::to_string(t.elements()) +
                        " elements, given " + std::to_string(values.size()));
    }
    if (!values.empty()) {
      std::memcpy(t.raw(), values.data(), values.size_bytes());
    }
    return t;
  }
  template <class T> static Tensor from(std::vector<int64_t> shape, std::initializer_list<T> values) {
    return from<T>(std::move(shape), std::span<const T>(values.begin(), values.size()));
  }
  template <class T> static Tensor scalar(T value) { return from<T>({}, {value}); }

  // Copies are deep for owning tensors and stay views for views.
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&& other) noexcept = default;
  Tensor& operator=(Tensor&& other) noexcept = default;
  ~Tensor() = default;

  DataType dtype() const noexcept { return dtype_; }
  const std::vector<int64_t>& shape() const noexcept { return shape_; }
  std::size_t rank() const noexcept { return shape_.size(); }
  int64_t dim(std::size_t axis) const { return shape_.at(axis); }
  int64_t elements() const { return element_count(shape_); }
  std::size_t bytes() const { return byte_count(dtype_, shape_); }
  TensorInfo info() const { return {dtype_, shape_}; }
  bool owns_storage() const noexcept { return storage_ != nullptr; }

  std::byte* raw() noexcept { return static_cast<std::byte*>(data_); }
  const std::byte* raw() const noexcept { return static_cast<const std::byte*>(data_); }
  template <class T> T* data() {
    check_type(dtype_of<T>);
    return static_cast<T*>(data_);
  }
  template <class T> const T* data() const {
    check_type(dtype_of<T>);
    return static_cast<const T*>(data_);
  }
  template <class T> std::span<T> values() { return {data<T>(), static_cast<std::size_t>(elements())}; }
  template <class T> std::span<const T> values() const { return {data<T>(), static_cast<std::size_t>(elements())}; }

  // Points a view at other memory (the planner rebinds graph inputs on each run).
  void rebind(void* data) noexcept { data_ = data; }
  // An owning copy (also of a view).
  Tensor clone() const;

private:
  struct AlignedDelete {
    void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{tensor_alignment}); }
  };
  void check_type(DataType wanted) const;

  DataType dtype_ = DataType::undefined;
  std::vector<int64_t> shape_;
  std::unique_ptr<std::byte, AlignedDelete> storage_;
  void* data_ = nullptr;
};

// Decodes an ONNX initializer or Constant value (raw_data or the typed fields).
// Throws EngineError naming the tensor for unsupported types, external data or a size mismatch.
Tensor tensor_from_proto(const onnx::TensorProto& proto);

// Owning, 64-byte aligned bytes (the planner's arena).
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes);
  std::byte* data() noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }

private:
  struct Delete {
    void operator()(std::byte* p) const noexcept { ::operator delete(p, std::align_val_t{tensor_alignment}); }
  };
  std::unique_ptr<std::byte, Delete> data_;
  std::size_t size_ = 0;
};

}  // namespace rknnxx::host
