#pragma once
// Buffers shared between the CPU and devices by file descriptor (docs/device.md#buffers):
//   DmaBuf       a dma-buf (from a dma-heap, a camera, RGA, MPP, or exported by the NPU driver);
//   MemfdBuffer  the fallback on a machine without dma-heaps (a PC): anonymous shared memory from memfd;
//   DmaHeap      a /dev/dma_heap/<name> node that allocates DmaBufs;
//   Mapping      a buffer mapped into this process, unmapped when destroyed;
//   CpuAccess    a scoped window of CPU reads or writes on a Mapping. For a dma-buf it brackets the access
//                with DMA_BUF_IOCTL_SYNC START and END, so caches are right for the CPU and then the device.
//                It is the only way to get a span over a mapping's bytes: the sync cannot be forgotten.

#include <rknnxx/core/error.hpp>
#include <rknnxx/device/ioctl.hpp>
#include <rknnxx/device/syscalls.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rknnxx::device {

// What an fd-backed buffer is: the kernel accepts a dma-buf where a device imports memory (the NPU runtime's
// rknn_create_mem_from_fd, V4L2, RGA); a memfd is ordinary shared memory that only the CPU sees.
enum class BufferKind : std::uint8_t { dma_buf, memfd };

[[nodiscard]] constexpr std::string_view kind_name(BufferKind k) noexcept {
  return k == BufferKind::dma_buf ? "dma-buf" : "memfd";
}

// Which way the CPU touches a mapping; the tag decides whether the span is writable.
struct CpuRead {
  static constexpr std::uint64_t dma_buf_direction = abi::dma_buf_sync_read;
  static constexpr std::uint32_t rknpu_before = abi::rknpu_mem_sync_from_device, rknpu_after = 0;
  using byte = const std::byte;
};
struct CpuWrite {
  static constexpr std::uint64_t dma_buf_direction = abi::dma_buf_sync_write;
  static constexpr std::uint32_t rknpu_before = 0, rknpu_after = abi::rknpu_mem_sync_to_device;
  using byte = std::byte;
};
struct CpuReadWrite {
  static constexpr std::uint64_t dma_buf_direction = abi::dma_buf_sync_rw;
  static constexpr std::uint32_t rknpu_before = abi::rknpu_mem_sync_from_device,
                                 rknpu_after = abi::rknpu_mem_sync_to_device;
  using byte = std::byte;
};
inline constexpr CpuRead cpu_read{};
inline constexpr CpuWrite cpu_write{};
inline constexpr CpuReadWrite cpu_read_write{};

template <class T>
concept CpuDirection = std::is_same_v<T, CpuRead> || std::is_same_v<T, CpuWrite> || std::is_same_v<T, CpuReadWrite>;

namespace detail {
// A size this process can allocate and map: not zero and within ptrdiff_t (32 bits on 32-bit ARM).
inline std::size_t mappable_size(std::uint64_t bytes, std::string_view call) {
  if (bytes == 0) rknnxx::detail::fail(call, "a buffer of 0 bytes cannot be allocated or mapped");
  if (bytes > static_cast<std::uint64_t>(PTRDIFF_MAX))
    rknnxx::detail::fail(call, "{} bytes do not fit this process's address space (at most {})", bytes, PTRDIFF_MAX);
  return static_cast<std::size_t>(bytes);
}

// One ioctl held back until later: the END half of a CPU access.
struct PendingIoctl {
  Syscalls* sys = nullptr;
  int fd = -1;
  Request request{};
  std::array<std::byte, 32> arg{};
  std::string node;

  template <class Arg>
  static PendingIoctl make(Syscalls& sys, int fd, const Request& r, const Arg& a, std::string node) {
    static_assert(sizeof(Arg) <= sizeof(arg) && std::is_trivially_copyable_v<Arg>);
    PendingIoctl p{&sys, fd, r, {}, std::move(node)};
    std::memcpy(p.arg.data(), &a, sizeof(Arg));
    return p;
  }
  [[nodiscard]] bool armed() const noexcept { return sys != nullptr; }
  void issue() {
    if (!armed()) return;
    Syscalls& s = *std::exchange(sys, nullptr);
    checked_ioctl(s, fd, request, arg.data(), node);
  }
};
}  // namespace detail

// A buffer mapped into this process (MAP_SHARED, read and write); munmap when destroyed. It gives out only its
// address, for handing to a runtime (rknn_create_mem_from_fd takes the fd and this address); the CPU reads and
// writes its bytes through the owner's cpu_access(), which does the cache maintenance.
// A Mapping must not outlive the buffer it was made from.
class Mapping {
public:
  Mapping() noexcept = default;
  Mapping(Syscalls& sys, void* address, std::size_t size, int source_fd, std::uint64_t source_offset) noexcept
      : sys_(&sys), address_(address), size_(size), source_fd_(source_fd), source_offset_(source_offset) {}
  Mapping(Mapping&& o) noexcept
      : sys_(o.sys_), address_(std::exchange(o.address_, nullptr)), size_(std::exchange(o.size_, 0)),
        source_fd_(std::exchange(o.source_fd_, -1)), source_offset_(std::exchange(o.source_offset_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept {
    if (this != &o) {
      reset();
      sys_ = o.sys_;
      address_ = std::exchange(o.address_, nullptr);
      size_ = std::exchange(o.size_, 0);
      source_fd_ = std::exchange(o.source_fd_, -1);
      source_offset_ = std::exchange(o.source_offset_, 0);
    }
    return *this;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() { reset(); }

  [[nodiscard]] void* address() const noexcept { return address_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Which fd, at which offset, this maps: a DRM node maps many buffers at different offsets of one fd.
  [[nodiscard]] int source_fd() const noexcept { return source_fd_; }
  [[nodiscard]] std::uint64_t source_offset() const noexcept { return source_offset_; }
  [[nodiscard]] bool maps(int fd, std::uint64_t offset) const noexcept {
    return address_ != nullptr && source_fd_ == fd && source_offset_ == offset;
  }
  [[nodiscard]] explicit operator bool() const noexcept { return address_ != nullptr; }

  void reset() noexcept {
    if (address_ != nullptr) sys_->munmap(address_, size_);
    address_ = nullptr;
    size_ = 0;
    source_fd_ = -1;
    source_offset_ = 0;
  }

  // Maps size bytes of fd at offset, read and write, shared.
  [[nodiscard]] static Mapping map(Syscalls& sys, int fd, std::uint64_t size, std::uint64_t offset,
                                   std::string_view node) {
    const std::size_t length = detail::mappable_size(size, "mmap");
    void* address = nullptr;
    const int rc =
        detail::retrying([&] { return sys.mmap(length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset, &address); });
    if (rc < 0) throw device_error(-rc, "mmap", node);
    return {sys, address, length, fd, offset};
  }

private:
  Syscalls* sys_ = nullptr;
  void* address_ = nullptr;
  std::size_t size_ = 0;
  int source_fd_ = -1;
  std::uint64_t source_offset_ = 0;
};

// A scoped CPU access to a mapping. Construction has done the "before" sync (if the buffer needs one); the
// destructor does the "after" sync. finish() ends the access early and reports a failed sync as an Error
// (the destructor cannot throw, so it swallows one: call finish() where that matters).
template <class Byte> class CpuAccess {
public:
  CpuAccess(std::span<Byte> bytes, detail::PendingIoctl start, detail::PendingIoctl end)
      : bytes_(bytes), end_(std::move(end)) {
    start.issue();
  }
  CpuAccess(CpuAccess&& o) noexcept : bytes_(std::exchange(o.bytes_, {})), end_(std::exchange(o.end_, {})) {}
  CpuAccess& operator=(CpuAccess&&) = delete;
  CpuAccess(const CpuAccess&) = delete;
  CpuAccess& operator=(const CpuAccess&) = delete;
  ~CpuAccess() {
    try {
      finish();
    } catch (...) {  // a destructor must not throw; finish() is the reporting way to end the access
    }
  }

  [[nodiscard]] std::span<Byte> bytes() const noexcept { return bytes_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }

  void finish() {
    bytes_ = {};
    end_.issue();
  }

private:
  std::span<Byte> bytes_;
  detail::PendingIoctl end_;
};

// A buffer owned by file descriptor: a dma-buf or a memfd, as the type says. Move-only; release() gives up the
// fd, reset() closes it now. fd(), size() and map() are what wiring it to a runtime (rknn_create_mem_from_fd)
// needs.
template <BufferKind Kind> class FdBuffer {
public:
  static constexpr BufferKind kind = Kind;

  FdBuffer() noexcept = default;
  FdBuffer(UniqueFd fd, std::uint64_t size) noexcept : fd_(std::move(fd)), size_(size) {}

  // Takes ownership of an fd received from elsewhere (a camera's V4L2 export, RGA, MPP); its size is what
  // the kernel reports for it.
  [[nodiscard]] static FdBuffer adopt(int fd, Syscalls& sys = linux_syscalls()) {
    UniqueFd owned(sys, fd);
    if (fd < 0) fail_negative_fd(fd);
    std::uint64_t size = 0;
    const int rc = sys.size_of(fd, &size);
    if (rc < 0) throw device_error(-rc, "lseek", describe(fd));
    return {std::move(owned), size};
  }

  // Anonymous shared memory of the given size: the stand-in for a dma-buf where there is no dma-heap.
  [[nodiscard]] static FdBuffer allocate(std::uint64_t bytes, Syscalls& sys = linux_syscalls())
    requires(Kind == BufferKind::memfd)
  {
    detail::mappable_size(bytes, "MemfdBuffer::allocate");
    const int fd = detail::retrying([&] { return sys.memfd_create("rknnxx", memfd_cloexec); });
    if (fd < 0) throw device_error(-fd, "memfd_create", "rknnxx");
    UniqueFd owned(sys, fd);
    const int rc = detail::retrying([&] { return sys.ftruncate(fd, bytes); });
    if (rc < 0) throw device_error(-rc, "ftruncate", describe(fd));
    return {std::move(owned), bytes};
  }

  [[nodiscard]] int fd() const noexcept { return fd_.get(); }
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] bool valid() const noexcept { return fd_.valid(); }
  [[nodiscard]] explicit operator bool() const noexcept { return valid(); }
  [[nodiscard]] Syscalls& syscalls() const noexcept { return fd_.syscalls(); }

  [[nodiscard]] int release() noexcept {
    size_ = 0;
    return fd_.release();
  }
  void reset() noexcept {
    size_ = 0;
    fd_.reset();
  }

  [[nodiscard]] Mapping map() const {
    require_valid("map");
    return Mapping::map(syscalls(), fd(), size_, 0, describe(fd()));
  }

  // A window of CPU access on a mapping of this buffer. For a dma-buf: DMA_BUF_IOCTL_SYNC START now, END
  // when the window closes. A memfd is not a dma-buf and has no device caches to maintain: no sync.
  template <CpuDirection Direction>
  [[nodiscard]] CpuAccess<typename Direction::byte> cpu_access(Mapping& mapping, Direction) const {
    require_mapping(mapping, "cpu_access");
    const std::span<typename Direction::byte> bytes(static_cast<typename Direction::byte*>(mapping.address()),
                                                    mapping.size());
    if constexpr (Kind == BufferKind::dma_buf) {
      const std::string node = describe(fd());
      return {bytes,
              detail::PendingIoctl::make(syscalls(), fd(), requests::dma_buf_sync,
                                         abi::DmaBufSync{abi::dma_buf_sync_start | Direction::dma_buf_direction}, node),
              detail::PendingIoctl::make(syscalls(), fd(), requests::dma_buf_sync,
                                         abi::DmaBufSync{abi::dma_buf_sync_end | Direction::dma_buf_direction}, node)};
    } else {
      return {bytes, {}, {}};
    }
  }

  // Refuses (naming `call`) a buffer that owns no fd, or a mapping not made from this buffer by map().
  void require_mapping(const Mapping& mapping, std::string_view call) const {
    require_valid(call);
    if (!mapping.maps(fd(), 0)) fail(call, "the mapping was not made from this {} (fd {})", kind_name(Kind), fd());
  }

  [[nodiscard]] static std::string describe(int fd) { return rknnxx::detail::message("{} fd {}", kind_name(Kind), fd); }

private:
  [[noreturn]] static void fail_negative_fd(int fd) { fail("adopt", "{} is not a file descriptor", fd); }
  void require_valid(std::string_view call) const {
    if (!valid()) fail(call, "the {} owns no file descriptor (moved from, released or reset)", kind_name(Kind));
  }
  template <class... Args>
  [[noreturn]] static void fail(std::string_view call,
                                std::type_identity_t<rknnxx::detail::MessageFormat<sizeof...(Args)>> message,
                                const Args&... args) {
    rknnxx::detail::fail(call, message, args...);
  }

  UniqueFd fd_;
  std::uint64_t size_ = 0;
};

using DmaBuf = FdBuffer<BufferKind::dma_buf>;
using MemfdBuffer = FdBuffer<BufferKind::memfd>;

// A dma-heap: /dev/dma_heap/<name> (docs/device.md#dma-heap). Common names: "system", "cma" and, on Rockchip
// kernels, "system-uncached", "system-dma32", "cma-uncached".
class DmaHeap {
public:
  static constexpr std::string_view directory = "/dev/dma_heap";

  // The heaps this machine has; empty where there is no /dev/dma_heap (a PC without the heaps enabled).
  [[nodiscard]] static std::vector<std::string> list(Syscalls& sys = linux_syscalls()) {
    std::vector<std::string> names;
    const std::string dir(directory);
    const int rc = sys.list_directory(dir.c_str(), &names);
    if (rc == -ENOENT || rc == -ENOTDIR) return {};
    if (rc < 0) throw device_error(-rc, "opendir", dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  [[nodiscard]] static DmaHeap open(std::string_view name, Syscalls& sys = linux_syscalls()) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
        name.find('\0') != std::string_view::npos)
      rknnxx::detail::fail("DmaHeap::open", "\"{}\" is not a heap name (a file name under {})", name, directory);
    DmaHeap heap;
    heap.path_ = rknnxx::detail::message("{}/{}", directory, name);
    heap.fd_ = open_node(sys, heap.path_, O_RDONLY);
    return heap;
  }

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] int fd() const noexcept { return fd_.get(); }

  // A new dma-buf of the given size (read-write, close-on-exec).
  [[nodiscard]] DmaBuf allocate(std::uint64_t bytes) const {
    detail::mappable_size(bytes, "DmaHeap::allocate");
    if (!fd_) rknnxx::detail::fail("DmaHeap::allocate", "the heap is not open (moved from)");
    abi::DmaHeapAllocationData data{};
    data.len = bytes;
    data.fd_flags = O_RDWR | O_CLOEXEC;
    checked_ioctl(fd_.syscalls(), fd_.get(), requests::dma_heap_alloc, &data, path_);
    return {UniqueFd(fd_.syscalls(), static_cast<int>(data.fd)), bytes};
  }

private:
  UniqueFd fd_;
  std::string path_;
};

// A dma-buf from the named heap where the machine has it, else (no such heap node, or no permission to open it)
// a memfd: what code that runs on a board and on a PC allocates. The variant says which it got.
[[nodiscard]] inline std::variant<DmaBuf, MemfdBuffer>
allocate_dma_or_memfd(std::uint64_t bytes, std::string_view heap = "system", Syscalls& sys = linux_syscalls()) {
  detail::mappable_size(bytes, "allocate_dma_or_memfd");
  std::optional<DmaHeap> opened;
  try {
    opened.emplace(DmaHeap::open(heap, sys));
  } catch (const Error& e) {
    const bool absent = e.code() == std::errc::no_such_file_or_directory || e.code() == std::errc::permission_denied ||
        e.code() == std::errc::operation_not_permitted;
    if (!absent) throw;
  }
  if (opened) return opened->allocate(bytes);
  return MemfdBuffer::allocate(bytes, sys);
}

}  // namespace rknnxx::device
