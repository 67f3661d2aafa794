#pragma once
// Memory behind rknn_tensor_mem on the host. Runtime-allocated memory is a memfd mapping,
// so mem->fd is a real file descriptor that create_mem_from_fd can wrap again, as a
// dma-buf fd can on a board. Wrapped memory (from fd, phys or a user pointer) stays the
// caller's.
//
// Cache emulation: a board's NPU sees memory through its own view, which the CPU's caches
// reach only at a sync. Each HostMem may keep a "device view"; when a context disables the
// runtime's own flushes (RKNN_FLAG_DISABLE_FLUSH_*_MEM_CACHE), the engine reads and writes
// that view and only rknn_mem_sync moves bytes between it and the CPU view, so a forgotten
// sync shows on the host exactly as stale data would on a board.
//
// The registry and every binding share a HostMem (shared_ptr and weak_ptr): rknn_destroy_mem in one
// thread while another syncs or runs on the same memory unmaps it only after the last user is done.

#include <rknnxx/abi/c_api.h>

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

namespace rknnxx::host {

class HostMem {
public:
  // Runtime-owned memory of `size` bytes (zeroed), mapped from a memfd.
  static std::unique_ptr<HostMem> allocate(rknn_context owner, uint64_t size, uint64_t alloc_flags);
  // Wraps memory the caller owns; `virt` must stay valid while the mem lives.
  static std::unique_ptr<HostMem> wrap(rknn_context owner, void* virt, uint32_t size, int32_t fd, int32_t offset,
                                       uint64_t phys, uint32_t flags);
  ~HostMem();
  HostMem(const HostMem&) = delete;
  HostMem& operator=(const HostMem&) = delete;

  [[nodiscard]] rknn_tensor_mem* descriptor() noexcept { return &desc_; }
  [[nodiscard]] rknn_context owner() const noexcept { return owner_; }
  [[nodiscard]] std::span<std::byte> cpu_view() noexcept;

  // The bytes the NPU would read or write: the CPU view itself when the runtime syncs for
  // the caller, otherwise the separate device view.
  [[nodiscard]] std::span<std::byte> device_view(bool emulate_cache);
  void sync_to_device();
  void sync_from_device();

private:
  HostMem() = default;
  // The device view, made once on first use: never resized, so that a sync in one thread and a run
  // in another (a caller's race, as on a board) race on bytes only, never on the allocation.
  std::span<std::byte> device_bytes();

  rknn_tensor_mem desc_{};
  rknn_context owner_ = 0;
  void* mapping_ = nullptr;  // our mmap of the memfd, when we allocated
  size_t mapping_size_ = 0;
  std::once_flag device_made_;
  std::atomic<bool> device_exists_{false};
  std::vector<std::byte> device_;  // the device view
};

// The memory behind a binding, held for the length of a call; RKNN_ERR_PARAM_INVALID naming `role`
// ("input 0", "weight memory") when it was destroyed since it was bound.
[[nodiscard]] std::shared_ptr<HostMem> live_mem(const std::weak_ptr<HostMem>& mem, std::string_view role);

}  // namespace rknnxx::host
