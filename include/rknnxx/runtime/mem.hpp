#pragma once
// Mem: RAII over runtime memory (rknn_tensor_mem), destroyed through the context that made it;
// MemAccess: the scoped CPU-access window over it, which makes forgetting rknn_mem_sync impossible.
//
//   Mem m = ctx.create_mem(attr.alloc_size());          // or create_mem(size, MemAlloc::non_cacheable),
//   Mem f = ctx.wrap_fd(fd, virt, size, offset);        //    wrap_phys(phys, virt, size)
//   { auto w = m.write(); std::memcpy(w.data(), src, n); }   // on release: rknn_mem_sync(TO_DEVICE)
//   { auto r = m.read(); use(r.as<float>()); }                // on acquire: rknn_mem_sync(FROM_DEVICE)
//   m.native_handle()                                   // the rknn_tensor_mem*, for interop
//
// If the Context goes first, it destroys the memory with it; the Mem then refuses every use with
// an Error ("memory outlived its Context") and its destructor does nothing.

#include <rknnxx/core/error.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/runtime/context_state.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

namespace rknnxx {

// Allocation flags of rknn_create_mem2 (docs/c-interface.md#memory).
enum class MemAlloc : std::uint64_t {
  default_flags = RKNN_FLAG_MEMORY_FLAGS_DEFAULT,
  cacheable = RKNN_FLAG_MEMORY_CACHEABLE,
  non_cacheable = RKNN_FLAG_MEMORY_NON_CACHEABLE,
  try_sram = RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM,
};
[[nodiscard]] constexpr MemAlloc operator|(MemAlloc a, MemAlloc b) noexcept {
  return static_cast<MemAlloc>(static_cast<std::uint64_t>(a) | static_cast<std::uint64_t>(b));
}

// Where the memory came from (rknn_tensor_mem::flags).
enum class MemOrigin : std::uint32_t {
  allocated = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE,
  from_fd = RKNN_TENSOR_MEMORY_FLAGS_FROM_FD,
  from_phys = RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS,
  unknown = RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN,
};

enum class CpuAccess : std::uint8_t { read, write, read_write };

class Mem;
namespace detail {
struct MemFactory;  // for owners of memory other than Context (runtime/matmul.hpp)
} // namespace detail

// The CPU-access window: acquiring it for reading syncs from the device, releasing a window
// opened for writing syncs to the device. Move-only; the last sync error, if any, is thrown by
// release() (the destructor cannot throw and ignores it).
template <CpuAccess A> class MemAccess {
public:
  using byte_type = std::conditional_t<A == CpuAccess::read, const std::byte, std::byte>;

  MemAccess(MemAccess&& o) noexcept : state_(std::move(o.state_)), mem_(std::exchange(o.mem_, nullptr)) {}
  MemAccess& operator=(MemAccess&&) = delete;
  MemAccess(const MemAccess&) = delete;
  ~MemAccess() {
    try {
      release();
    } catch (...) { // NOLINT: a destructor must not throw; call release() to see the error
    }
  }

  [[nodiscard]] byte_type* data() const { return static_cast<byte_type*>(checked()->virt_addr); }
  [[nodiscard]] std::size_t size() const { return checked()->size; }
  [[nodiscard]] std::span<byte_type> bytes() const { return {data(), size()}; }
  // The memory as elements of T (its size rounded down to whole elements).
  template <class T> [[nodiscard]] auto as() const {
    using E = std::conditional_t<A == CpuAccess::read, const T, T>;
    return std::span<E>(reinterpret_cast<E*>(data()), size() / sizeof(T));
  }

  // Ends the window now (syncing to the device for write access); idempotent.
  void release() {
    if (mem_ == nullptr) return;
    auto* m = std::exchange(mem_, nullptr);
    if constexpr (A != CpuAccess::read) {
      if (state_->alive && !state_->unbound)
        state_->check(state_->api().rknn_mem_sync(state_->handle, m, RKNN_MEMORY_SYNC_TO_DEVICE),
                      "rknn_mem_sync(RKNN_MEMORY_SYNC_TO_DEVICE)");
    }
  }

private:
  friend class Mem;
  MemAccess(std::shared_ptr<detail::ContextState> state, rknn_tensor_mem* mem)
      : state_(std::move(state)), mem_(mem) {
    // Memory made without a context has no context to sync through: the runtime reads it at
    // rknn_init (a zero-copy model buffer), after the application wrote it.
    if constexpr (A != CpuAccess::write)
      if (!state_->unbound)
        state_->check(state_->api().rknn_mem_sync(state_->handle, mem_, RKNN_MEMORY_SYNC_FROM_DEVICE),
                      "rknn_mem_sync(RKNN_MEMORY_SYNC_FROM_DEVICE)");
  }
  rknn_tensor_mem* checked() const {
    if (mem_ == nullptr) throw Error(Errc::param_invalid, "rknnxx::MemAccess", "the access window was released or moved from");
    state_->check_alive("rknnxx::MemAccess", "a memory access window");
    return mem_;
  }

  std::shared_ptr<detail::ContextState> state_;
  rknn_tensor_mem* mem_ = nullptr;
};

class Mem {
public:
  Mem() noexcept = default;
  Mem(Mem&& o) noexcept : state_(std::move(o.state_)), mem_(std::exchange(o.mem_, nullptr)) {}
  Mem& operator=(Mem&& o) noexcept {
    if (this != &o) {
      reset();
      state_ = std::move(o.state_);
      mem_ = std::exchange(o.mem_, nullptr);
    }
    return *this;
  }
  Mem(const Mem&) = delete;
  Mem& operator=(const Mem&) = delete;
  ~Mem() { reset(); }

  // Memory made without a context (rknn_create_mem2 with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT), e.g.
  // for a zero-copy model buffer (Context::from_model_memory).
  [[nodiscard]] static Mem allocate_without_context(std::uint64_t size, MemAlloc flags = MemAlloc::default_flags,
                                                    std::shared_ptr<const Runtime> runtime = Runtime::load()) {
    auto state = std::make_shared<detail::ContextState>();
    state->runtime = std::move(runtime);
    state->unbound = true;
    auto* create = state->require(state->api().rknn_create_mem2, "rknn_create_mem2");
    rknn_tensor_mem* m = create(0, size, static_cast<std::uint64_t>(flags) | RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
    if (m == nullptr)
      throw Error(Errc::malloc_fail, "rknn_create_mem2", fmt::format("{} bytes without a context", size));
    state->mems.push_back(m);
    return Mem(std::move(state), m);
  }

  [[nodiscard]] explicit operator bool() const noexcept { return mem_ != nullptr; }
  [[nodiscard]] std::uint32_t size() const { return checked("rknnxx::Mem::size")->size; }
  [[nodiscard]] std::int32_t fd() const { return checked("rknnxx::Mem::fd")->fd; }
  [[nodiscard]] std::int32_t offset() const { return checked("rknnxx::Mem::offset")->offset; }
  [[nodiscard]] std::uint64_t phys_addr() const { return checked("rknnxx::Mem::phys_addr")->phys_addr; }
  [[nodiscard]] MemOrigin origin() const { return static_cast<MemOrigin>(checked("rknnxx::Mem::origin")->flags); }
  // The runtime's descriptor, for interop with C code (still owned by this Mem).
  [[nodiscard]] rknn_tensor_mem* native_handle() const { return checked("rknnxx::Mem::native_handle"); }

  // Scoped CPU access with the cache maintenance done for the caller.
  [[nodiscard]] MemAccess<CpuAccess::read> read() const { return {state_, checked("rknnxx::Mem::read")}; }
  [[nodiscard]] MemAccess<CpuAccess::write> write() { return {state_, checked("rknnxx::Mem::write")}; }
  [[nodiscard]] MemAccess<CpuAccess::read_write> read_write() { return {state_, checked("rknnxx::Mem::read_write")}; }

  // Destroys the memory now (rknn_destroy_mem); the Mem becomes empty.
  void reset() {
    if (mem_ == nullptr) return;
    auto* m = std::exchange(mem_, nullptr);
    if (state_->alive) {
      state_->forget_mem(m);
      (void)state_->api().rknn_destroy_mem(state_->handle, m);
    }
    state_.reset();
  }

private:
  friend class Context;
  friend struct detail::MemFactory;
  Mem(std::shared_ptr<detail::ContextState> state, rknn_tensor_mem* m) : state_(std::move(state)), mem_(m) {}

  rknn_tensor_mem* checked(std::string_view call) const {
    if (mem_ == nullptr) throw Error(Errc::param_invalid, std::string(call), "the Mem is empty (moved from or reset)");
    state_->check_alive(call, "the memory");
    return mem_;
  }
  [[nodiscard]] const std::shared_ptr<detail::ContextState>& state() const noexcept { return state_; }

  std::shared_ptr<detail::ContextState> state_;
  rknn_tensor_mem* mem_ = nullptr;
};

} // namespace rknnxx
