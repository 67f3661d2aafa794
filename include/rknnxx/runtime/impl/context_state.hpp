#pragma once
// The bodies of <rknnxx/runtime/context_state.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/context_state.hpp>

namespace rknnxx::detail {

RKNNXX_DECL const void* this_thread_token() noexcept {
  static thread_local const char token = 0;
  return &token;
}

RKNNXX_DECL std::string with_runtime_message(std::string message, const Runtime& runtime, std::string_view call) {
  const std::string said = runtime.last_error(call);
  if (!said.empty()) message += detail::message("{}the runtime says: {}", message.empty() ? "" : ": ", said);
  return message;
}

RKNNXX_DECL void ContextState::enter([[maybe_unused]] std::string_view call) {
#if RKNNXX_THREAD_CHECKS
  // The compilers' atomic builtins (g++ and clang), which std::atomic_ref wraps, without <atomic>.
  const void* const me = this_thread_token();
  const void* current = __atomic_load_n(&owner, __ATOMIC_ACQUIRE);
  if (current == me) return;
  if (current == nullptr &&
      __atomic_compare_exchange_n(&owner, &current, me, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    return;
  throw Error(Errc::ctx_invalid, std::string(call),
              "the context belongs to another thread: a Context is used by one thread at a time (call "
              "release_thread() on the owning thread to hand it over, or give each thread its own Context, e.g. "
              "with dup())");
#endif
}

RKNNXX_DECL void ContextState::leave() noexcept { __atomic_store_n(&owner, nullptr, __ATOMIC_RELEASE); }

RKNNXX_DECL void ContextState::check_alive(std::string_view call, std::string_view what) const {
  if (released)
    throw Error(
        Errc::ctx_invalid, std::string(call),
        detail::message("{} outlived its Context's ownership: Context::release() handed the handle to C code", what));
  if (!alive)
    throw Error(Errc::ctx_invalid, std::string(call),
                detail::message("{} outlived its Context: the context was destroyed, and its memory with it", what));
}

RKNNXX_DECL void ContextState::check(int rc, std::string_view call, TensorId tensor, std::string_view message) const {
  if (rc < 0) fail(static_cast<Errc>(rc), call, message, std::move(tensor));
}

RKNNXX_DECL void ContextState::fail(Errc code, std::string_view call, std::string_view message, TensorId tensor) const {
  throw Error(code, std::string(call),
              with_runtime_message(message.empty() ? detail::message("runtime {}", runtime->path())
                                                   : detail::message("{} (runtime {})", message, runtime->path()),
                                   *runtime, call),
              std::move(tensor));
}

// Here and below, loops and shared_ptr(new T) rather than algorithms with lambdas and make_shared: they cost a
// header-only translation unit less to compile (docs/separate-compilation.md#compile-cost).
RKNNXX_DECL void ContextState::forget_outputs(const std::vector<rknn_output>& given) noexcept {
  std::size_t kept = 0;
  for (const rknn_output& o : outputs) {
    bool forget = false;
    for (const rknn_output& g : given) forget = forget || g.buf == o.buf;
    if (!forget) outputs[kept++] = o;
  }
  while (outputs.size() > kept) outputs.pop_back();
}

RKNNXX_DECL void ContextState::forget_mem(rknn_tensor_mem* m) noexcept {
  std::size_t kept = 0;
  for (rknn_tensor_mem* held : mems)
    if (held != m) mems[kept++] = held;
  while (mems.size() > kept) mems.pop_back();
}

RKNNXX_DECL std::shared_ptr<ContextState> new_context_state(std::shared_ptr<const Runtime> runtime,
                                                            rknn_context handle) {
  std::shared_ptr<ContextState> s(new ContextState());
  s->runtime = std::move(runtime);
  s->handle = handle;
  return s;
}

}  // namespace rknnxx::detail
