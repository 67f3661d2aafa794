#pragma once
// Mem: RAII over runtime memory (rknn_tensor_mem), destroyed through the context that made it;
// MemAccess: the scoped CPU-access window over it, which makes forgetting rknn_mem_sync impossible.
//
//   Mem m = ctx.create_mem(attr.alloc_size());          // or create_mem(size, MemAlloc::non_cacheable),
//   Mem f = ctx.wrap_fd(fd, virt, size, offset);        //    wrap_phys(phys, virt, size)
//   { auto w = m.write(); std::memcpy(w.data(), src, n); }   // on closing: rknn_mem_sync(TO_DEVICE)
//   { auto r = m.read(); use(r.as<float>()); }                // on acquire: rknn_mem_sync(FROM_DEVICE)
//   m.native_handle()                                   // the rknn_tensor_mem*, for interop
//   rknn_tensor_mem* c = m.release();                   // hands it to C code (rknn_destroy_mem is theirs)
//   m.reset();                                          // destroys it now
//
// If the Context goes first, it destroys the memory with it; the Mem then refuses every use with
// an Error ("memory outlived its Context") and its destructor does nothing.
//
// Memory imported from a dma-buf fd (Context::wrap_fd) may need the kernel's dma-buf sync around
// CPU access as well as the runtime's: set_cpu_access_hook installs it, and every access window
// calls it (begin before the runtime's sync on opening, end after it on closing).

#include <rknnxx/core/error.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/std_light.hpp>  // std::function, std::shared_ptr
#include <rknnxx/runtime/context_state.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
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

// What runs around the runtime's sync when the CPU opens (begin) and closes (end) an access window
// on a Mem, e.g. DMA_BUF_IOCTL_SYNC with DMA_BUF_SYNC_START / DMA_BUF_SYNC_END for a dma-buf.
// An exception thrown by begin refuses the window; one thrown by end reaches MemAccess::reset().
struct CpuAccessHook {
  std::function<void(CpuAccess)> begin;
  std::function<void(CpuAccess)> end;
};

class Mem;
namespace detail {
struct MemFactory;  // for owners of memory other than Context (runtime/matmul.hpp)
class ContextOps;   // context.hpp

// What every view of one runtime buffer shares: whether the buffer still exists (an IoBinding may
// hold a view of memory the application owns, and must notice when it is destroyed) and the
// CPU-access hook.
struct MemLife {
  bool alive = true;
  std::shared_ptr<const CpuAccessHook> hook;
};
}  // namespace detail

// The CPU-access window: acquiring it for reading syncs from the device, closing a window
// opened for writing syncs to the device. Move-only; the last sync error, if any, is thrown by
// reset() (the destructor cannot throw and ignores it).
template <CpuAccess A> class MemAccess {
public:
  using byte_type = std::conditional_t<A == CpuAccess::read, const std::byte, std::byte>;

  MemAccess(MemAccess&& o) noexcept
      : state_(std::move(o.state_)), hook_(std::move(o.hook_)), mem_(std::exchange(o.mem_, nullptr)) {}
  // Closes this window (as the destructor does, ignoring a sync error) and takes over `o`'s.
  MemAccess& operator=(MemAccess&& o) noexcept {
    if (this != &o) {
      close_quietly();
      state_ = std::move(o.state_);
      hook_ = std::move(o.hook_);
      mem_ = std::exchange(o.mem_, nullptr);
    }
    return *this;
  }
  MemAccess(const MemAccess&) = delete;
  MemAccess& operator=(const MemAccess&) = delete;
  ~MemAccess() { close_quietly(); }

  // The tensor's first byte: virt_addr is the start of the buffer's mapping, and memory imported
  // from an fd starts `offset` bytes into it (docs/c-interface.md#memory).
  [[nodiscard]] byte_type* data() const {
    rknn_tensor_mem* m = checked();
    return static_cast<byte_type*>(m->virt_addr) + m->offset;
  }
  [[nodiscard]] std::size_t size() const { return checked()->size; }
  [[nodiscard]] std::span<byte_type> bytes() const { return {data(), size()}; }
  // The memory as elements of T (its size rounded down to whole elements).
  template <class T> [[nodiscard]] auto as() const {
    using E = std::conditional_t<A == CpuAccess::read, const T, T>;
    return std::span<E>(reinterpret_cast<E*>(data()), size() / sizeof(T));
  }

  // Ends the window now (syncing to the device for write access, then the hook's end);
  // idempotent.
  void reset() {
    if (mem_ == nullptr) return;
    auto* m = std::exchange(mem_, nullptr);
    auto hook = std::move(hook_);
    if (!state_->alive) return;  // the memory went with its context: nothing to sync
    int rc = 0;
    if constexpr (A != CpuAccess::read) {
      if (!state_->unbound) rc = state_->api().rknn_mem_sync(state_->handle, m, RKNN_MEMORY_SYNC_TO_DEVICE);
    }
    if (hook && hook->end) hook->end(A);  // also when the runtime's sync failed: begin and end pair up
    state_->check(rc, "rknn_mem_sync(RKNN_MEMORY_SYNC_TO_DEVICE)");
  }

private:
  friend class Mem;
  MemAccess(std::shared_ptr<detail::ContextState> state, std::shared_ptr<const CpuAccessHook> hook,
            rknn_tensor_mem* mem)
      : state_(std::move(state)), hook_(std::move(hook)) {
    if (hook_ && hook_->begin) hook_->begin(A);
    // Memory made without a context has no context to sync through: the runtime reads it at
    // rknn_init (a zero-copy model buffer), after the application wrote it.
    if constexpr (A != CpuAccess::write)
      if (!state_->unbound) {
        const int rc = state_->api().rknn_mem_sync(state_->handle, mem, RKNN_MEMORY_SYNC_FROM_DEVICE);
        if (rc < 0) {
          if (hook_ && hook_->end) hook_->end(A);  // the window is refused: close what begin opened
          state_->check(rc, "rknn_mem_sync(RKNN_MEMORY_SYNC_FROM_DEVICE)");
        }
      }
    mem_ = mem;
  }
  void close_quietly() noexcept {
    try {
      reset();
    } catch (...) {  // NOLINT: a destructor must not throw; call reset() to see the error
    }
  }
  rknn_tensor_mem* checked() const {
    if (mem_ == nullptr)
      throw Error(Errc::param_invalid, "rknnxx::MemAccess", "the access window was closed (reset) or moved from");
    state_->check_alive("rknnxx::MemAccess", "a memory access window");
    return mem_;
  }

  std::shared_ptr<detail::ContextState> state_;
  std::shared_ptr<const CpuAccessHook> hook_;
  rknn_tensor_mem* mem_ = nullptr;
};

class Mem {
public:
  Mem() noexcept = default;
  Mem(Mem&& o) noexcept;
  Mem& operator=(Mem&& o) noexcept;
  Mem(const Mem&) = delete;
  Mem& operator=(const Mem&) = delete;
  ~Mem() { reset(); }

  // Memory made without a context (rknn_create_mem2 with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT), e.g.
  // for a zero-copy model buffer (Context::from_model_memory).
  [[nodiscard]] static Mem allocate_without_context(std::uint64_t size, MemAlloc flags = MemAlloc::default_flags,
                                                    std::shared_ptr<const Runtime> runtime = Runtime::load());

  // True while the Mem holds memory (false when empty: default-made, moved from, reset or
  // released; a view an IoBinding holds of memory the application owns stays true after that
  // memory is destroyed, and refuses every use).
  [[nodiscard]] explicit operator bool() const noexcept { return mem_ != nullptr; }
  [[nodiscard]] std::uint32_t size() const { return checked("rknnxx::Mem::size")->size; }
  [[nodiscard]] std::int32_t fd() const { return checked("rknnxx::Mem::fd")->fd; }
  [[nodiscard]] std::int32_t offset() const { return checked("rknnxx::Mem::offset")->offset; }
  [[nodiscard]] std::uint64_t phys_addr() const { return checked("rknnxx::Mem::phys_addr")->phys_addr; }
  [[nodiscard]] MemOrigin origin() const { return static_cast<MemOrigin>(checked("rknnxx::Mem::origin")->flags); }
  // The runtime's descriptor, for interop with C code (still owned by this Mem).
  [[nodiscard]] rknn_tensor_mem* native_handle() const { return checked("rknnxx::Mem::native_handle"); }

  // Scoped CPU access with the cache maintenance done for the caller.
  [[nodiscard]] MemAccess<CpuAccess::read> read() const;
  [[nodiscard]] MemAccess<CpuAccess::write> write();
  [[nodiscard]] MemAccess<CpuAccess::read_write> read_write();

  // Installs what runs around the runtime's sync on every later access window (see the top of
  // this file), for every view of this memory (an IoBinding's included); an empty hook removes it.
  void set_cpu_access_hook(CpuAccessHook hook);

  // Destroys the memory now (rknn_destroy_mem); the Mem becomes empty. On a view of memory the
  // application owns, only the view goes.
  void reset();
  // Gives up ownership: the caller destroys the memory (rknn_destroy_mem with the context that
  // made it, before that context goes). The Mem becomes empty; an IoBinding still holding it
  // refuses to use it from now on.
  [[nodiscard]] rknn_tensor_mem* release();

private:
  friend class detail::ContextOps;
  friend class IoBinding;
  friend struct detail::MemFactory;
  Mem(std::shared_ptr<detail::ContextState> state, rknn_tensor_mem* m)
      : state_(std::move(state)), life_(new detail::MemLife()), mem_(m) {}

  // A non-owning view of the same memory (IoBinding's hold on memory the application owns):
  // destroying the view leaves the memory alone; using it after the owner destroyed the memory
  // throws.
  [[nodiscard]] Mem view() const;
  [[nodiscard]] bool owns() const noexcept { return owns_; }
  [[nodiscard]] bool destroyed() const noexcept { return mem_ != nullptr && !life_->alive; }
  [[nodiscard]] const std::shared_ptr<detail::MemLife>& life() const noexcept { return life_; }

  rknn_tensor_mem* checked(std::string_view call) const;
  [[nodiscard]] const std::shared_ptr<detail::ContextState>& state() const noexcept { return state_; }

  std::shared_ptr<detail::ContextState> state_;
  std::shared_ptr<detail::MemLife> life_;
  rknn_tensor_mem* mem_ = nullptr;
  bool owns_ = true;
};

}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/runtime/impl/mem.hpp>
#endif
