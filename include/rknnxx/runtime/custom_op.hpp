#pragma once
// CustomOp: a custom operator from a C++ callable, registered with a Context (rknn_register_custom_ops,
// docs/custom-operators.md); no C structs in user code.
//
//   ctx.register_custom_op(CustomOp{"ScaleShift", [](std::span<const CustomTensor> in, std::span<CustomTensor> out,
//                                                    const CustomOpAttrs& attrs) {
//     const float alpha = attrs.value<float>("alpha").value_or(1.0f);
//     auto x = in[0].data<float>();
//     auto y = out[0].data<float>();
//     for (std::size_t i = 0; i < x.size(); ++i) y[i] = alpha * x[i];
//   }});
//
// The callable takes (inputs, outputs) or (inputs, outputs, attrs); an object with such a compute()
// member works too (it is kept, and shared by every node of its op type). It runs on the thread that
// calls Context::run; an exception it throws fails that run with an Error carrying its message.
//
// The C interface's callbacks carry no user pointer, so each registered CustomOp occupies one of
// custom_op_slots process-wide trampolines until its Context is destroyed; registering more at once
// throws Error(Errc::fail) saying so.

#include <rknnxx/abi/c_custom_op.h>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/context_state.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rknnxx {

// One tensor a custom operator reads or writes, as the runtime describes it (dense, in the model's
// dimension order). Views the runtime's description: valid during the compute call only.
class CustomTensor {
public:
  explicit CustomTensor(const rknn_custom_op_tensor& tensor) noexcept : t_(&tensor) {}

  [[nodiscard]] std::string_view name() const noexcept;
  [[nodiscard]] TensorType type() const noexcept { return static_cast<TensorType>(t_->attr.type); }
  [[nodiscard]] std::span<const std::uint32_t> dims() const noexcept;
  [[nodiscard]] std::size_t elements() const noexcept { return t_->attr.n_elems; }
  [[nodiscard]] std::size_t bytes() const noexcept { return t_->attr.size; }
  [[nodiscard]] const rknn_custom_op_tensor& native() const noexcept { return *t_; }

  // The elements as T, which must be the tensor's element type (Error naming both otherwise).
  template <TensorElement T> [[nodiscard]] std::span<const T> data() const { return typed<const T>(); }
  template <TensorElement T> [[nodiscard]] std::span<T> data() { return typed<T>(); }

private:
  template <class T> std::span<T> typed() const {
    if (tensor_type_of<T> != type())
      throw Error(Errc::param_invalid, "rknnxx::CustomTensor::data",
                  detail::message("tensor '{}' holds {}, not {}", name(), name_of(type()), name_of(tensor_type_of<T>)));
    auto* base = static_cast<std::byte*>(t_->mem.virt_addr) + t_->mem.offset;
    return {reinterpret_cast<T*>(base), elements()};
  }

  const rknn_custom_op_tensor* t_;
};

// The ONNX attributes of the node being computed (rknn_custom_op_get_op_attr). INT and INTS read as
// std::int64_t, FLOAT and FLOATS as float, STRING with string(), TENSOR as its element type.
class CustomOpAttrs {
public:
  using GetAttr = void (*)(rknn_custom_op_context*, const char*, rknn_custom_op_attr*);
  CustomOpAttrs(GetAttr get, rknn_custom_op_context* op_ctx) noexcept : get_(get), op_ctx_(op_ctx) {}

  // The values of attribute `name`: empty when the node lacks it; Error when it holds another type.
  template <TensorElement T> [[nodiscard]] std::vector<T> values(std::string_view name) const {
    const rknn_custom_op_attr a = lookup(name);
    if (a.n_elems == 0 || a.data == nullptr) return {};
    if (static_cast<TensorType>(a.dtype) != tensor_type_of<T>)
      throw Error(Errc::param_invalid, "rknnxx::CustomOpAttrs::values",
                  detail::message("attribute '{}' holds {}, not {}", name, name_of(static_cast<TensorType>(a.dtype)),
                                  name_of(tensor_type_of<T>)));
    std::vector<T> out(a.n_elems);
    std::memcpy(out.data(), a.data, out.size() * sizeof(T));
    return out;
  }
  // Its single value (the first of several), or nullopt when the node lacks it.
  template <TensorElement T> [[nodiscard]] std::optional<T> value(std::string_view name) const {
    auto v = values<T>(name);
    return v.empty() ? std::nullopt : std::optional<T>(v.front());
  }
  // A STRING attribute, or nullopt when the node lacks it.
  [[nodiscard]] std::optional<std::string> string(std::string_view name) const;

private:
  rknn_custom_op_attr lookup(std::string_view name) const;

  GetAttr get_;
  rknn_custom_op_context* op_ctx_;
};

template <class F>
concept CustomCompute2 = std::invocable<F&, std::span<const CustomTensor>, std::span<CustomTensor>>;
template <class F>
concept CustomCompute3 =
    std::invocable<F&, std::span<const CustomTensor>, std::span<CustomTensor>, const CustomOpAttrs&>;
template <class F>
concept CustomComputeObject =
    requires(F& f, std::span<const CustomTensor> in, std::span<CustomTensor> out, const CustomOpAttrs& attrs) {
      f.compute(in, out, attrs);
    } || requires(F& f, std::span<const CustomTensor> in, std::span<CustomTensor> out) { f.compute(in, out); };

// A custom operator: the ONNX op type it implements and how it computes.
class CustomOp {
public:
  using Compute = std::function<void(std::span<const CustomTensor>, std::span<CustomTensor>, const CustomOpAttrs&)>;

  template <class F>
    requires(CustomCompute2<F> || CustomCompute3<F> || CustomComputeObject<F>)
  CustomOp(std::string op_type, F f) : op_type_(std::move(op_type)), compute_(adapt(std::move(f))) {
    if (op_type_.empty()) throw Error(Errc::param_invalid, "rknnxx::CustomOp", "the op type is empty");
    if (op_type_.size() >= RKNN_MAX_NAME_LEN || op_type_.find('\0') != std::string::npos)
      throw Error(Errc::param_invalid, "rknnxx::CustomOp",
                  detail::message("the op type must be under {} bytes without NUL, given {} bytes", RKNN_MAX_NAME_LEN,
                                  op_type_.size()));
  }

  [[nodiscard]] const std::string& op_type() const noexcept { return op_type_; }
  [[nodiscard]] const Compute& compute() const noexcept { return compute_; }

private:
  template <class F> static Compute adapt(F f) {
    auto held = std::make_shared<F>(std::move(f));  // shared: Compute copies; the object keeps one state
    return [held](std::span<const CustomTensor> in, std::span<CustomTensor> out, const CustomOpAttrs& attrs) {
      F& fn = *held;
      if constexpr (CustomCompute3<F>) {
        std::invoke(fn, in, out, attrs);
      } else if constexpr (CustomCompute2<F>) {
        std::invoke(fn, in, out);
      } else if constexpr (requires { fn.compute(in, out, attrs); }) {
        fn.compute(in, out, attrs);
      } else {
        fn.compute(in, out);
      }
    };
  }

  std::string op_type_;
  Compute compute_;
};

namespace detail {

inline constexpr std::size_t custom_op_slots = 64;

// A registered CustomOp and the C struct that points the runtime at its trampoline.
class CustomOpBinding;
inline std::array<std::atomic<CustomOpBinding*>, custom_op_slots> custom_op_slot_table{};
inline std::mutex custom_op_slot_mutex;

class CustomOpBinding final : public RegisteredCustomOp {
public:
  CustomOpBinding(CustomOp op, CustomOpAttrs::GetAttr get_attr);
  // RKNNXX_DECL on the virtual members: no key function defined inline (docs/separate-compilation.md#compile-cost).
  RKNNXX_DECL ~CustomOpBinding() override;
  CustomOpBinding(const CustomOpBinding&) = delete;
  CustomOpBinding& operator=(const CustomOpBinding&) = delete;

  [[nodiscard]] const rknn_custom_op& abi() const noexcept { return abi_; }
  [[nodiscard]] RKNNXX_DECL std::string take_error() override;

  int compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, std::uint32_t n_inputs,
              rknn_custom_op_tensor* outputs, std::uint32_t n_outputs) noexcept;

private:
  void remember(std::string message) noexcept;

  CustomOp op_;
  CustomOpAttrs::GetAttr get_attr_;
  rknn_custom_op abi_{};
  std::size_t slot_ = 0;
  std::mutex error_mutex_;
  std::string error_;
};

template <std::size_t I> int custom_op_trampoline(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                                                  std::uint32_t n_inputs, rknn_custom_op_tensor* outputs,
                                                  std::uint32_t n_outputs) {
  CustomOpBinding* binding = custom_op_slot_table[I].load(std::memory_order_acquire);
  return binding == nullptr ? RKNN_ERR_CTX_INVALID : binding->compute(op_ctx, inputs, n_inputs, outputs, n_outputs);
}

template <std::size_t... I> constexpr auto custom_op_trampolines(std::index_sequence<I...>) {
  return std::array{&custom_op_trampoline<I>...};
}

}  // namespace detail
}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/runtime/impl/custom_op.hpp>
#endif
