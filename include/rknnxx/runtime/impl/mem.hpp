#pragma once
// The bodies of <rknnxx/runtime/mem.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/mem.hpp>

namespace rknnxx {

RKNNXX_DECL Mem::Mem(Mem&& o) noexcept
    : state_(std::move(o.state_)), life_(std::move(o.life_)), mem_(std::exchange(o.mem_, nullptr)),
      owns_(std::exchange(o.owns_, true)) {}

RKNNXX_DECL Mem& Mem::operator=(Mem&& o) noexcept {
  if (this != &o) {
    reset();
    state_ = std::move(o.state_);
    life_ = std::move(o.life_);
    mem_ = std::exchange(o.mem_, nullptr);
    owns_ = std::exchange(o.owns_, true);
  }
  return *this;
}

RKNNXX_DECL Mem Mem::allocate_without_context(std::uint64_t size, MemAlloc flags,
                                              std::shared_ptr<const Runtime> runtime) {
  auto state = detail::new_context_state(std::move(runtime), 0);
  state->unbound = true;
  auto* create = state->require(state->api().rknn_create_mem2, "rknn_create_mem2");
  rknn_tensor_mem* m = create(0, size, static_cast<std::uint64_t>(flags) | RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  if (m == nullptr)
    throw Error(Errc::malloc_fail, "rknn_create_mem2", detail::message("{} bytes without a context", size));
  state->mems.push_back(m);
  return Mem(std::move(state), m);
}

RKNNXX_DECL MemAccess<CpuAccess::read> Mem::read() const {
  auto* m = checked("rknnxx::Mem::read");
  return {state_, life_->hook, m};
}

RKNNXX_DECL MemAccess<CpuAccess::write> Mem::write() {
  auto* m = checked("rknnxx::Mem::write");
  return {state_, life_->hook, m};
}

RKNNXX_DECL MemAccess<CpuAccess::read_write> Mem::read_write() {
  auto* m = checked("rknnxx::Mem::read_write");
  return {state_, life_->hook, m};
}

RKNNXX_DECL void Mem::set_cpu_access_hook(CpuAccessHook hook) {
  (void)checked("rknnxx::Mem::set_cpu_access_hook");
  life_->hook =
      hook.begin || hook.end ? std::shared_ptr<const CpuAccessHook>(new CpuAccessHook(std::move(hook))) : nullptr;
}

RKNNXX_DECL void Mem::reset() {
  if (mem_ == nullptr) return;
  auto* m = std::exchange(mem_, nullptr);
  if (owns_) {
    life_->alive = false;
    if (state_->alive) {
      state_->forget_mem(m);
      (void)state_->api().rknn_destroy_mem(state_->handle, m);
    }
  }
  state_.reset();
  life_.reset();
  owns_ = true;
}

RKNNXX_DECL rknn_tensor_mem* Mem::release() {
  auto* m = checked("rknnxx::Mem::release");
  if (!owns_)
    throw Error(Errc::param_invalid, "rknnxx::Mem::release",
                "this Mem is an IoBinding's view of memory the application owns: release the application's Mem");
  life_->alive = false;
  state_->forget_mem(m);
  mem_ = nullptr;
  state_.reset();
  life_.reset();
  return m;
}

RKNNXX_DECL Mem Mem::view() const {
  Mem v;
  v.state_ = state_;
  v.life_ = life_;
  v.mem_ = checked("rknnxx::Mem::view");
  v.owns_ = false;
  return v;
}

RKNNXX_DECL rknn_tensor_mem* Mem::checked(std::string_view call) const {
  if (mem_ == nullptr)
    throw Error(Errc::param_invalid, std::string(call), "the Mem is empty (moved from, reset or released)");
  state_->check_alive(call, "the memory");
  if (!life_->alive)
    throw Error(Errc::param_invalid, std::string(call),
                "the memory was destroyed (or released to C code) by the Mem that owns it");
  return mem_;
}

}  // namespace rknnxx
