#pragma once
// Whether a file descriptor can back a buffer of `size` bytes starting `offset` bytes into it, as
// rknn_create_mem_from_fd needs (a dma-buf, a memfd, the fd of memory rknn_create_mem made). One
// rule for Context::wrap_fd and the host runtime's rknn_create_mem_from_fd, which refuse the same
// descriptors with the same words. Internal to rknnxx (namespace detail).

#include <rknnxx/core/message.hpp>

#include <cstdint>
#include <string>

#include <sys/stat.h>

namespace rknnxx::detail {

// Empty when the fd is open, can be mapped, and holds [offset, offset + size); else why not, in
// one line. The end is checked where the kernel knows the size (regular files and memfds, and
// dma-bufs, whose size fstat reports); other mappable files (character devices) report none.
inline std::string fd_range_problem(int fd, std::int64_t offset, std::uint64_t size) {
  if (fd < 0) return detail::message("fd {} is not a file descriptor", fd);
  if (offset < 0) return detail::message("offset {} is negative", offset);
  if (size == 0) return "size is 0";
  struct stat st {};
  if (::fstat(fd, &st) != 0) return detail::message("fd {} is not an open file descriptor: closed or never opened", fd);
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISDIR(st.st_mode))
    return detail::message("fd {} is a {}, which cannot be mapped (a dma-buf, a memfd or a regular file can)", fd,
                           S_ISFIFO(st.st_mode)       ? "pipe"
                               : S_ISSOCK(st.st_mode) ? "socket"
                                                      : "directory");
  const auto start = static_cast<std::uint64_t>(offset);
  if (size > UINT64_MAX - start) return detail::message("offset {} plus {} bytes overflows", offset, size);
  const auto file_size = static_cast<std::uint64_t>(st.st_size < 0 ? 0 : st.st_size);
  if ((S_ISREG(st.st_mode) || file_size > 0) && start + size > file_size)
    return detail::message("{} bytes at offset {} end at byte {}, past the end of fd {} ({} bytes)", size, offset,
                           start + size, fd, file_size);
  return {};
}

}  // namespace rknnxx::detail
