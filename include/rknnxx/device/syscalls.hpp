#pragma once
// The one seam between the device layer and the kernel (docs/device.md#the-syscall-seam): every system call
// the types in include/rknnxx/device/ make goes through a Syscalls object, so tests can put a model of the
// drivers behind it. Calls report failure as a negative errno value, never through the global errno, so a
// model needs no thread-local state and a caller cannot read a stale errno.
//
// Linux only: the device nodes, ioctls and memfd exist nowhere else.

#if !defined(__linux__)
#error "rknnxx/device/ is Linux only: the NPU, dma-heap and dma-buf interfaces are Linux kernel interfaces"
#endif

#include <rknnxx/core/error.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rknnxx::device {

// An ioctl request: its number and the name the kernel headers give it (for error messages).
// The numbers are in rknnxx/device/ioctl.hpp.
struct Request {
  std::uint32_t number;
  std::string_view name;
};

// memfd_create's close-on-exec flag (MFD_CLOEXEC), spelt here because older C libraries do not define it.
inline constexpr unsigned memfd_cloexec = 1;

// The system calls the device layer makes. Each returns a non-negative result or -errno.
class Syscalls {
public:
  virtual ~Syscalls() = default;

  virtual int open(const char* path, int flags) noexcept = 0;
  virtual int close(int fd) noexcept = 0;
  virtual int dup(int fd) noexcept = 0;  // the copy has O_CLOEXEC set
  virtual int ioctl(int fd, std::uint32_t request, void* arg) noexcept = 0;
  // On success stores the address in *address and returns 0.
  virtual int mmap(std::size_t length, int prot, int flags, int fd, std::uint64_t offset, void** address) noexcept = 0;
  virtual int munmap(void* address, std::size_t length) noexcept = 0;
  virtual int memfd_create(const char* name, unsigned flags) noexcept = 0;
  virtual int ftruncate(int fd, std::uint64_t length) noexcept = 0;
  // The size of what fd refers to (lseek to the end: how a dma-buf tells its size). Stored in *size.
  virtual int size_of(int fd, std::uint64_t* size) noexcept = 0;
  // The names in a directory, without "." and "..". On failure returns -errno and leaves names empty.
  virtual int list_directory(const char* path, std::vector<std::string>* names) noexcept = 0;
};

// The real calls.
class LinuxSyscalls final : public Syscalls {
public:
  int open(const char* path, int flags) noexcept override { return result(::open(path, flags)); }
  int close(int fd) noexcept override { return result(::close(fd)); }
  int dup(int fd) noexcept override { return result(::fcntl(fd, F_DUPFD_CLOEXEC, 0)); }
  int ioctl(int fd, std::uint32_t request, void* arg) noexcept override {
    // glibc declares the request as unsigned long, musl and uclibc as int: the value is 32 bits either way.
    return result(::ioctl(fd, request, arg));
  }
  int mmap(std::size_t length, int prot, int flags, int fd, std::uint64_t offset, void** address) noexcept override {
    if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) return -EOVERFLOW;  // 32-bit off_t
    void* p = ::mmap(nullptr, length, prot, flags, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) return -errno;
    *address = p;
    return 0;
  }
  int munmap(void* address, std::size_t length) noexcept override { return result(::munmap(address, length)); }
  int memfd_create(const char* name, unsigned flags) noexcept override {
    // The raw system call: older C libraries (uclibc on RV1106) have no memfd_create() wrapper.
#ifdef SYS_memfd_create
    return result(static_cast<int>(::syscall(SYS_memfd_create, name, flags)));
#else
    (void)name;
    (void)flags;
    return -ENOSYS;
#endif
  }
  int ftruncate(int fd, std::uint64_t length) noexcept override {
    if (length > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) return -EFBIG;
    return result(::ftruncate(fd, static_cast<off_t>(length)));
  }
  int size_of(int fd, std::uint64_t* size) noexcept override {
    const off_t end = ::lseek(fd, 0, SEEK_END);
    if (end < 0) return -errno;
    *size = static_cast<std::uint64_t>(end);
    ::lseek(fd, 0, SEEK_SET);
    return 0;
  }
  int list_directory(const char* path, std::vector<std::string>* names) noexcept override {
    names->clear();
    DIR* dir = ::opendir(path);
    if (dir == nullptr) return -errno;
    try {
      while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") names->emplace_back(name);
      }
    } catch (...) {
      ::closedir(dir);
      return -ENOMEM;
    }
    ::closedir(dir);
    return 0;
  }

private:
  static int result(int rc) noexcept { return rc < 0 ? -errno : rc; }
};

// The real calls; the default of every device type.
[[nodiscard]] inline Syscalls& linux_syscalls() noexcept {
  static LinuxSyscalls instance;
  return instance;
}

// A failed system call as the library's exception: the call (with the request's name), the node or fd it was
// made on, and errno's text. The code is in std::system_category(): compare it with std::errc values.
//   what(): "ioctl DMA_HEAP_IOCTL_ALLOC: /dev/dma_heap/system: Cannot allocate memory"
[[nodiscard]] inline Error device_error(int error, std::string_view call, std::string_view node) {
  return Error(std::error_code(error, std::system_category()), std::string(call), std::string(node));
}

namespace detail {
// A call interrupted by a signal (EINTR) or refused for now (EAGAIN) is made again, a bounded number of times,
// so a driver that keeps answering EAGAIN is reported rather than spun on.
inline constexpr int max_retries = 16;

template <class Call> int retrying(Call&& call) noexcept(noexcept(call())) {
  int rc = call();
  for (int attempt = 1; attempt < max_retries && (rc == -EINTR || rc == -EAGAIN); ++attempt) rc = call();
  return rc;
}
}  // namespace detail

// An open file descriptor, closed when this is destroyed (or by reset()); release() gives it up.
class UniqueFd {
public:
  UniqueFd() noexcept = default;
  UniqueFd(Syscalls& sys, int fd) noexcept : sys_(&sys), fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : sys_(o.sys_), fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      sys_ = o.sys_;
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  [[nodiscard]] explicit operator bool() const noexcept { return valid(); }
  [[nodiscard]] Syscalls& syscalls() const noexcept { return *sys_; }

  // Gives up ownership: the caller closes the returned fd.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  // Closes now. close() is not retried on EINTR: on Linux the fd is gone whatever close() returns.
  void reset() noexcept {
    if (fd_ >= 0) sys_->close(fd_);
    fd_ = -1;
  }

private:
  Syscalls* sys_ = &linux_syscalls();
  int fd_ = -1;
};

// Issues an ioctl, retrying EINTR and EAGAIN; throws naming the request and the node (or fd).
inline void checked_ioctl(Syscalls& sys, int fd, const Request& request, void* arg, std::string_view node) {
  const int rc = detail::retrying([&] { return sys.ioctl(fd, request.number, arg); });
  if (rc < 0) throw device_error(-rc, rknnxx::detail::message("ioctl {}", request.name), node);
}

// Opens a node (O_CLOEXEC added), retrying EINTR; throws naming the node.
[[nodiscard]] inline UniqueFd open_node(Syscalls& sys, const std::string& path, int flags) {
  const int fd = detail::retrying([&] { return sys.open(path.c_str(), flags | O_CLOEXEC); });
  if (fd < 0) throw device_error(-fd, "open", path);
  return {sys, fd};
}

}  // namespace rknnxx::device
