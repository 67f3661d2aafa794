#pragma once
// A device buffer as runtime memory: rknn_create_mem_from_fd over a mapped DmaBuf or MemfdBuffer, with the
// buffer's own cache maintenance added to every CPU-access window of the Mem, so that IoBinding's writes and
// reads through it bracket the runtime's sync with the kernel's
// (docs/device.md#a-camera-rga-or-mpp-buffer-reaching-the-npu):
//
//   auto buffer = device::MemfdBuffer::allocate(bytes);       // or DmaHeap::open("system").allocate(bytes)
//   auto mapping = buffer.map();
//   Mem mem = device::import_buffer(ctx, buffer, mapping);    // the whole buffer, or (size, offset) of it
//   io.bind_input("data", mem);                               // IoBinding writes through mem.write():
//                                                             // DMA_BUF_IOCTL_SYNC START, rknn_mem_sync, END
//
// The buffer and the mapping stay the application's: both must outlive the Mem (the runtime keeps the fd and
// the address, not a reference). A driver buffer (RknpuBuffer, RocketBuffer) imports through the dma-buf
// its export_dma_buf() gives.

#include <rknnxx/device/dma_buf.hpp>
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/runtime/mem.hpp>

#include <cstdint>
#include <string>

namespace rknnxx::device {

namespace detail {
// The runtime's access direction (rknnxx::CpuAccess, not this namespace's CpuAccess window) as dma-buf flags.
[[nodiscard]] constexpr std::uint64_t dma_buf_direction(rknnxx::CpuAccess access) noexcept {
  switch (access) {
    case rknnxx::CpuAccess::read: return abi::dma_buf_sync_read;
    case rknnxx::CpuAccess::write: return abi::dma_buf_sync_write;
    case rknnxx::CpuAccess::read_write: break;
  }
  return abi::dma_buf_sync_rw;
}

// DMA_BUF_IOCTL_SYNC around a runtime access window: START before the runtime's sync on opening, END after
// it on closing (CpuAccessHook's order).
[[nodiscard]] inline CpuAccessHook dma_buf_sync_hook(Syscalls& sys, int fd, std::string node) {
  auto sync = [&sys, fd, node = std::move(node)](std::uint64_t phase, rknnxx::CpuAccess access) {
    abi::DmaBufSync arg{phase | dma_buf_direction(access)};
    checked_ioctl(sys, fd, requests::dma_buf_sync, &arg, node);
  };
  return {[sync](rknnxx::CpuAccess a) { sync(abi::dma_buf_sync_start, a); },
          [sync](rknnxx::CpuAccess a) { sync(abi::dma_buf_sync_end, a); }};
}
}  // namespace detail

// `size` bytes of the buffer from `offset` (default: all of it) as a Mem of ctx. The mapping must be one of
// this buffer made by buffer.map(). A dma-buf gets the DMA_BUF_IOCTL_SYNC hook; a memfd needs none.
template <BufferKind Kind> [[nodiscard]] Mem import_buffer(Context& ctx, const FdBuffer<Kind>& buffer,
                                                           const Mapping& mapping, std::uint64_t size = 0,
                                                           std::int64_t offset = 0) {
  constexpr std::string_view call = "rknnxx::device::import_buffer";
  buffer.require_mapping(mapping, call);
  if (offset < 0 || static_cast<std::uint64_t>(offset) > buffer.size())
    rknnxx::detail::fail(call, "offset {} is outside the {} bytes of the {} (fd {})", offset, buffer.size(),
                         kind_name(Kind), buffer.fd());
  if (size == 0) size = buffer.size() - static_cast<std::uint64_t>(offset);
  Mem mem = ctx.wrap_fd(buffer.fd(), mapping.address(), size, offset);
  if constexpr (Kind == BufferKind::dma_buf)
    mem.set_cpu_access_hook(
        detail::dma_buf_sync_hook(buffer.syscalls(), buffer.fd(), FdBuffer<Kind>::describe(buffer.fd())));
  return mem;
}

}  // namespace rknnxx::device
