#include "host_mem.hpp"

#include "api_error.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>

namespace rknnxx::host {

std::unique_ptr<HostMem> HostMem::allocate(rknn_context owner, uint64_t size, uint64_t alloc_flags) {
  if (size == 0) fail(RKNN_ERR_PARAM_INVALID, "size is 0");
  if (size > std::numeric_limits<uint32_t>::max())
    fail(RKNN_ERR_PARAM_INVALID, "size {} does not fit the 32-bit size field of rknn_tensor_mem", size);
  const int fd = memfd_create("rknnxx-mem", MFD_CLOEXEC);
  if (fd < 0) fail(RKNN_ERR_MALLOC_FAIL, "memfd_create failed: {}", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    close(fd);
    fail(RKNN_ERR_MALLOC_FAIL, "cannot allocate {} bytes: {}", size, std::strerror(err));
  }
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    const int err = errno;
    close(fd);
    fail(RKNN_ERR_MALLOC_FAIL, "cannot map {} bytes: {}", size, std::strerror(err));
  }
  auto mem = std::unique_ptr<HostMem>(new HostMem);
  mem->owner_ = owner;
  mem->mapping_ = map;
  mem->mapping_size_ = size;
  mem->desc_.virt_addr = map;
  // A host has no physical addresses; a stable made-up one keeps code that logs it honest.
  mem->desc_.phys_addr = reinterpret_cast<uintptr_t>(map);
  mem->desc_.fd = fd;
  mem->desc_.offset = 0;
  mem->desc_.size = static_cast<uint32_t>(size);
  mem->desc_.flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
  mem->desc_.priv_data = nullptr;
  (void)alloc_flags;  // cacheable or not, SRAM or not: one kind of memory on a host
  return mem;
}

std::unique_ptr<HostMem> HostMem::wrap(rknn_context owner, void* virt, uint32_t size, int32_t fd, int32_t offset,
                                       uint64_t phys, uint32_t flags) {
  if (virt == nullptr) fail(RKNN_ERR_PARAM_INVALID, "virt_addr is NULL");
  if (size == 0) fail(RKNN_ERR_PARAM_INVALID, "size is 0");
  if (offset < 0) fail(RKNN_ERR_PARAM_INVALID, "offset {} is negative", offset);
  auto mem = std::unique_ptr<HostMem>(new HostMem);
  mem->owner_ = owner;
  mem->desc_.virt_addr = virt;  // as on a board: the base, with the offset kept apart
  mem->desc_.phys_addr = phys;
  mem->desc_.fd = fd;
  mem->desc_.offset = offset;
  mem->desc_.size = size;
  mem->desc_.flags = flags;
  return mem;
}

HostMem::~HostMem() {
  if (mapping_ != nullptr) {
    munmap(mapping_, mapping_size_);
    close(desc_.fd);
  }
}

std::span<std::byte> HostMem::cpu_view() noexcept {
  return {static_cast<std::byte*>(desc_.virt_addr) + desc_.offset, desc_.size};
}

std::span<std::byte> HostMem::device_bytes() {
  std::call_once(device_made_, [&] {
    device_.assign(desc_.size, std::byte{0});
    device_exists_.store(true, std::memory_order_release);
  });
  return device_;
}

std::span<std::byte> HostMem::device_view(bool emulate_cache) {
  if (!emulate_cache) return cpu_view();
  return device_bytes();
}

void HostMem::sync_to_device() {
  auto cpu = cpu_view();
  std::copy(cpu.begin(), cpu.end(), device_bytes().begin());
}

void HostMem::sync_from_device() {
  if (!device_exists_.load(std::memory_order_acquire)) return;  // the device never wrote through its own view
  std::copy(device_.begin(), device_.end(), cpu_view().begin());
}

std::shared_ptr<HostMem> live_mem(const std::weak_ptr<HostMem>& mem, std::string_view role) {
  auto live = mem.lock();
  if (!live) fail(RKNN_ERR_PARAM_INVALID, "the memory bound to {} was destroyed; bind live memory again", role);
  return live;
}

}  // namespace rknnxx::host
