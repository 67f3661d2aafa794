#pragma once
// The bodies of <rknnxx/runtime/custom_op.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/runtime/custom_op.hpp>

namespace rknnxx {

RKNNXX_DECL std::string_view CustomTensor::name() const noexcept {
  return {t_->attr.name, ::strnlen(t_->attr.name, RKNN_MAX_NAME_LEN)};
}

RKNNXX_DECL std::span<const std::uint32_t> CustomTensor::dims() const noexcept {
  return {t_->attr.dims, std::min<std::uint32_t>(t_->attr.n_dims, RKNN_MAX_DIMS)};
}

RKNNXX_DECL std::optional<std::string> CustomOpAttrs::string(std::string_view name) const {
  auto bytes = values<std::uint8_t>(name);
  if (bytes.empty()) return std::nullopt;
  return std::string(bytes.begin(), bytes.end());
}

RKNNXX_DECL rknn_custom_op_attr CustomOpAttrs::lookup(std::string_view name) const {
  rknn_custom_op_attr a{};
  if (get_ == nullptr) throw Error(Errc::fail, "rknn_custom_op_get_op_attr", "the runtime does not provide it");
  if (name.size() >= RKNN_MAX_NAME_LEN)
    throw Error(Errc::param_invalid, "rknn_custom_op_get_op_attr",
                detail::message("an attribute name of {} bytes exceeds {}", name.size(), RKNN_MAX_NAME_LEN - 1));
  const std::string terminated(name);
  get_(op_ctx_, terminated.c_str(), &a);
  return a;
}

}  // namespace rknnxx

namespace rknnxx::detail {

RKNNXX_DECL CustomOpBinding::~CustomOpBinding() {
  const std::lock_guard lock(custom_op_slot_mutex);
  custom_op_slot_table[slot_].store(nullptr, std::memory_order_release);
}

RKNNXX_DECL std::string CustomOpBinding::take_error() {
  const std::lock_guard lock(error_mutex_);
  return std::exchange(error_, {});
}

RKNNXX_DECL int CustomOpBinding::compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                                         std::uint32_t n_inputs, rknn_custom_op_tensor* outputs,
                                         std::uint32_t n_outputs) noexcept {
  try {
    std::vector<CustomTensor> in;
    std::vector<CustomTensor> out;
    in.reserve(n_inputs);
    out.reserve(n_outputs);
    for (std::uint32_t i = 0; i < n_inputs; ++i) in.emplace_back(inputs[i]);
    for (std::uint32_t i = 0; i < n_outputs; ++i) out.emplace_back(outputs[i]);
    op_.compute()(in, out, CustomOpAttrs(get_attr_, op_ctx));
    return RKNN_SUCC;
  } catch (const std::exception& e) {
    remember(detail::message("custom operator {}: {}", op_.op_type(), e.what()));
  } catch (...) {
    remember(detail::message("custom operator {}: an exception that is not a std::exception", op_.op_type()));
  }
  return RKNN_ERR_FAIL;
}

RKNNXX_DECL void CustomOpBinding::remember(std::string message) noexcept {
  try {
    const std::lock_guard lock(error_mutex_);
    error_ = std::move(message);
  } catch (...) {}
}

RKNNXX_DECL CustomOpBinding::CustomOpBinding(CustomOp op, CustomOpAttrs::GetAttr get_attr)
    : op_(std::move(op)), get_attr_(get_attr) {
  static constexpr auto trampolines = custom_op_trampolines(std::make_index_sequence<custom_op_slots>{});
  {
    const std::lock_guard lock(custom_op_slot_mutex);
    std::size_t free = custom_op_slots;
    for (std::size_t i = 0; i < custom_op_slots && free == custom_op_slots; ++i)
      if (custom_op_slot_table[i].load(std::memory_order_relaxed) == nullptr) free = i;
    if (free == custom_op_slots)
      throw Error(Errc::fail, "rknn_register_custom_ops",
                  detail::message("{} C++ custom operators are registered already, the most a process can hold at once",
                                  custom_op_slots));
    slot_ = free;
    custom_op_slot_table[slot_].store(this, std::memory_order_release);
  }
  abi_.version = 1;
  abi_.target = RKNN_TARGET_TYPE_CPU;
  std::memcpy(abi_.op_type, op_.op_type().data(), op_.op_type().size());  // CustomOp checked it fits
  abi_.compute = trampolines[slot_];
}

// Context's registration, here rather than in runtime/impl/context.hpp: see ContextOps::register_custom_ops.
RKNNXX_DECL void ContextOps::register_custom_ops(std::vector<CustomOp> ops) {
  auto& s = use("rknn_register_custom_ops");
  auto reg = s.require(s.api().rknn_register_custom_ops, "rknn_register_custom_ops");
  if (ops.empty()) throw Error(Errc::param_invalid, "rknn_register_custom_ops", "no custom operators given");
  std::vector<std::shared_ptr<CustomOpBinding>> bindings;
  std::vector<rknn_custom_op> abi;
  for (CustomOp& op : ops) {
    bindings.push_back(std::make_shared<CustomOpBinding>(std::move(op), s.api().rknn_custom_op_get_op_attr));
    abi.push_back(bindings.back()->abi());
  }
  s.check(reg(s.handle, abi.data(), static_cast<std::uint32_t>(abi.size())), "rknn_register_custom_ops");
  s.custom_ops.insert(s.custom_ops.end(), bindings.begin(), bindings.end());
}

RKNNXX_DECL void ContextOps::register_custom_op(CustomOp op) {
  std::vector<CustomOp> ops;
  ops.push_back(std::move(op));
  register_custom_ops(std::move(ops));
}

}  // namespace rknnxx::detail
