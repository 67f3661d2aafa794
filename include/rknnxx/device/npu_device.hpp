#pragma once
// The NPU's device node and the buffers its driver allocates (docs/device.md#the-npu-node):
//   NpuDevice    finds and opens the node of the Rockchip rknpu driver (a DRM render node, or the older
//                /dev/rknpu misc node) or of the mainline rocket accel driver (/dev/accel/accel*), and asks it
//                what it tells: driver version, hardware version, whether the IOMMU is on, SRAM size;
//   RknpuBuffer  memory from rknpu's MEM_CREATE, freed with MEM_DESTROY; mapped, synced and exported as a
//                dma-buf;
//   RocketBuffer memory from rocket's CREATE_BO, freed with GEM_CLOSE; CPU access bracketed by PREP_BO and
//                FINI_BO; exported as a dma-buf.
// Buffers keep the node open: they may outlive the NpuDevice they came from.

#include <rknnxx/core/error.hpp>
#include <rknnxx/device/dma_buf.hpp>
#include <rknnxx/device/ioctl.hpp>
#include <rknnxx/device/syscalls.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rknnxx::device {

enum class NpuDriver : std::uint8_t {
  rknpu_drm,   // Rockchip BSP driver, DRM-GEM build: /dev/dri/renderD*, DRM name "rknpu"
  rknpu_misc,  // Rockchip BSP driver, DMA-heap build: /dev/rknpu
  rocket,      // mainline accel driver (Linux 6.18+): /dev/accel/accel*, DRM name "rocket"
};

[[nodiscard]] constexpr std::string_view driver_name(NpuDriver d) noexcept {
  switch (d) {
    case NpuDriver::rknpu_drm: return "rknpu (DRM)";
    case NpuDriver::rknpu_misc: return "rknpu (misc device)";
    case NpuDriver::rocket: return "rocket";
  }
  return "unknown";
}

struct NpuNode {
  std::string path;
  NpuDriver driver;
};

// What a search of /dev found: the NPU nodes, best first, and why other candidates were passed over.
struct NpuSearch {
  std::vector<NpuNode> nodes;
  std::vector<std::string> skipped;  // "path: reason"
};

// What the driver tells about itself and the NPU. Empty where this driver does not tell it.
struct NpuInfo {
  NpuDriver driver{};
  std::string node;
  std::string driver_version;                        // "0.9.8"
  std::optional<std::uint32_t> driver_version_code;  // major * 10000 + minor * 100 + patch
  std::optional<std::uint32_t> hw_version;
  std::optional<bool> iommu_enabled;
  std::optional<std::uint32_t> sram_bytes;
};

namespace detail {
// The open node shared by a device and the buffers it allocated (GEM handles live as long as the open file).
struct NpuNodeHandle {
  UniqueFd fd;
  std::string path;
  NpuDriver driver{};
  std::uint32_t version_code = 0;  // rknpu: from GET_DRV_VERSION; 0 when unknown

  [[nodiscard]] Syscalls& sys() const noexcept { return fd.syscalls(); }
  void ioctl(const Request& r, void* arg) const { checked_ioctl(sys(), fd.get(), r, arg, path); }
  [[nodiscard]] bool misc() const noexcept { return driver == NpuDriver::rknpu_misc; }
};

struct DrmIdentity {
  std::string name;
  int major = 0, minor = 0, patch = 0;
};

// DRM_IOCTL_VERSION: the driver's name and version. Names longer than the buffer are cut (the kernel reports the
// full length); the names we look for are short.
inline int query_drm_identity(Syscalls& sys, int fd, DrmIdentity* out) noexcept {
  std::array<char, 64> name{}, date{}, desc{};
  abi::DrmVersion v{};
  v.name_len = name.size() - 1;
  v.name = name.data();
  v.date_len = date.size() - 1;
  v.date = date.data();
  v.desc_len = desc.size() - 1;
  v.desc = desc.data();
  const int rc = retrying([&] { return sys.ioctl(fd, requests::drm_version.number, &v); });
  if (rc < 0) return rc;
  try {
    out->name.assign(name.data(), std::min(v.name_len, name.size() - 1));
  } catch (...) {
    return -ENOMEM;
  }
  out->major = v.version_major;
  out->minor = v.version_minor;
  out->patch = v.version_patchlevel;
  return 0;
}

// The number after a prefix ("renderD128" -> 128), or nullopt when the name is not prefix + digits.
inline std::optional<unsigned> node_number(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  unsigned n = 0;
  const auto digits = name.substr(prefix.size());
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return n;
}

// An rknpu action the driver may not know (older versions answer EINVAL): empty then; other failures throw.
inline std::optional<std::uint32_t> optional_action(const NpuNodeHandle& node, std::uint32_t code) {
  abi::RknpuAction a{code, 0};
  const Request& r = node.misc() ? requests::rknpu_misc_action : requests::rknpu_action;
  const int rc = retrying([&] { return node.sys().ioctl(node.fd.get(), r.number, &a); });
  if (rc == -EINVAL) return std::nullopt;
  if (rc < 0) throw device_error(-rc, rknnxx::detail::message("ioctl {}", r.name), node.path);
  return a.value;
}

inline std::string errno_text(int error) { return std::error_code(error, std::system_category()).message(); }

// Deadline for rocket's PREP_BO: an absolute CLOCK_MONOTONIC time (std::chrono::steady_clock on Linux).
inline std::int64_t monotonic_deadline_ns(std::chrono::nanoseconds timeout) {
  const auto now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return timeout.count() > INT64_MAX - now ? INT64_MAX : now + timeout.count();
}
// What the two driver buffers share: the node they keep open, and destroy() (the derived class's) as reset().
template <class Derived> class DriverBuffer {
public:
  [[nodiscard]] bool valid() const noexcept { return node_ != nullptr; }
  [[nodiscard]] explicit operator bool() const noexcept { return valid(); }
  void reset() noexcept {
    try {
      static_cast<Derived*>(this)->destroy();
    } catch (...) {  // reset() cannot report; destroy() does
    }
  }

protected:
  DriverBuffer() noexcept = default;
  ~DriverBuffer() = default;
  DriverBuffer(DriverBuffer&&) noexcept = default;
  DriverBuffer& operator=(DriverBuffer&&) noexcept = default;
  void require_valid(std::string_view call) const {
    if (!node_) rknnxx::detail::fail(call, "the buffer was moved from or destroyed");
  }

  std::shared_ptr<const NpuNodeHandle> node_;
};
}  // namespace detail

// Memory the rknpu driver allocated (MEM_CREATE), freed with MEM_DESTROY when destroyed.
class RknpuBuffer : public detail::DriverBuffer<RknpuBuffer> {
public:
  RknpuBuffer() noexcept = default;
  RknpuBuffer(RknpuBuffer&& o) noexcept { *this = std::move(o); }
  RknpuBuffer& operator=(RknpuBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      node_ = std::move(o.node_);
      created_ = std::exchange(o.created_, {});
      misc_fd_ = std::move(o.misc_fd_);
      map_offset_ = std::exchange(o.map_offset_, 0);
    }
    return *this;
  }
  RknpuBuffer(const RknpuBuffer&) = delete;
  RknpuBuffer& operator=(const RknpuBuffer&) = delete;
  ~RknpuBuffer() { reset(); }

  // DRM node: the GEM handle; misc node: the dma-buf fd the driver returned (owned by this buffer).
  [[nodiscard]] std::uint32_t handle() const noexcept { return created_.handle; }
  [[nodiscard]] std::uint64_t size() const noexcept { return created_.size; }  // page-aligned by the driver
  [[nodiscard]] std::uint32_t flags() const noexcept { return created_.flags; }
  [[nodiscard]] std::uint64_t dma_address() const noexcept { return created_.dma_addr; }     // what the NPU sees
  [[nodiscard]] std::uint64_t object_address() const noexcept { return created_.obj_addr; }  // driver's token

  // The buffer in this process. DRM: mmap of the node at the offset MEM_MAP gave; misc: the dma-buf itself.
  [[nodiscard]] Mapping map() const {
    require_valid("RknpuBuffer::map");
    if (node_->misc()) return Mapping::map(node_->sys(), misc_fd_.get(), created_.size, 0, node_->path);
    return Mapping::map(node_->sys(), node_->fd.get(), created_.size, map_offset_, node_->path);
  }

  // A window of CPU access. A cacheable buffer is synced with MEM_SYNC: from the device before reading, to the
  // device after writing. Uncached and write-combined buffers need no sync.
  template <CpuDirection Direction>
  [[nodiscard]] CpuAccess<typename Direction::byte> cpu_access(Mapping& mapping, Direction) const {
    require_valid("RknpuBuffer::cpu_access");
    const bool ours = node_->misc() ? mapping.maps(misc_fd_.get(), 0) : mapping.maps(node_->fd.get(), map_offset_);
    if (!ours)
      rknnxx::detail::fail("RknpuBuffer::cpu_access", "the mapping was not made from this buffer ({})", node_->path);
    const std::span<typename Direction::byte> bytes(static_cast<typename Direction::byte*>(mapping.address()),
                                                    mapping.size());
    const bool cacheable = (created_.flags & abi::rknpu_mem_cacheable) != 0;
    return {bytes, cacheable ? sync(Direction::rknpu_before) : detail::PendingIoctl{},
            cacheable ? sync(Direction::rknpu_after) : detail::PendingIoctl{}};
  }

  // A dma-buf of this memory (a new fd), for another device or for rknn_create_mem_from_fd.
  // DRM: PRIME_HANDLE_TO_FD; misc: a duplicate of the driver's fd.
  [[nodiscard]] DmaBuf export_dma_buf() const {
    require_valid("RknpuBuffer::export_dma_buf");
    Syscalls& sys = node_->sys();
    if (node_->misc()) {
      const int fd = sys.dup(misc_fd_.get());
      if (fd < 0) throw device_error(-fd, "dup", node_->path);
      return {UniqueFd(sys, fd), created_.size};
    }
    abi::DrmPrimeHandle p{};
    p.handle = created_.handle;
    p.flags = O_CLOEXEC | O_RDWR;
    node_->ioctl(requests::drm_prime_handle_to_fd, &p);
    return {UniqueFd(sys, p.fd), created_.size};
  }

  // Frees now (MEM_DESTROY), reporting a failure; the destructor does the same and swallows one.
  void destroy() {
    if (!node_) return;
    const auto node = std::move(node_);
    abi::RknpuMemDestroy d{};
    d.handle = created_.handle;
    d.obj_addr = created_.obj_addr;
    created_ = {};
    map_offset_ = 0;
    UniqueFd misc_fd = std::move(misc_fd_);
    node->ioctl(node->misc() ? requests::rknpu_misc_mem_destroy : requests::rknpu_mem_destroy, &d);
  }

private:
  friend class NpuDevice;

  [[nodiscard]] detail::PendingIoctl sync(std::uint32_t direction) const {
    if (direction == 0) return {};
    abi::RknpuMemSync s{};
    s.flags = direction;
    s.obj_addr = created_.obj_addr;
    s.offset = 0;
    s.size = created_.size;
    return detail::PendingIoctl::make(node_->sys(), node_->fd.get(),
                                      node_->misc() ? requests::rknpu_misc_mem_sync : requests::rknpu_mem_sync, s,
                                      node_->path);
  }

  abi::RknpuMemCreate created_{};
  UniqueFd misc_fd_;
  std::uint64_t map_offset_ = 0;  // DRM node: the object's mmap offset (MEM_MAP), fixed for its life
};

// Memory the rocket driver allocated (CREATE_BO), released with GEM_CLOSE when destroyed.
class RocketBuffer : public detail::DriverBuffer<RocketBuffer> {
public:
  RocketBuffer() noexcept = default;
  RocketBuffer(RocketBuffer&& o) noexcept { *this = std::move(o); }
  RocketBuffer& operator=(RocketBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      node_ = std::move(o.node_);
      created_ = std::exchange(o.created_, {});
    }
    return *this;
  }
  RocketBuffer(const RocketBuffer&) = delete;
  RocketBuffer& operator=(const RocketBuffer&) = delete;
  ~RocketBuffer() { reset(); }

  [[nodiscard]] std::uint32_t handle() const noexcept { return created_.handle; }
  [[nodiscard]] std::uint64_t size() const noexcept { return created_.size; }
  [[nodiscard]] std::uint64_t dma_address() const noexcept { return created_.dma_address; }  // private to the open node

  [[nodiscard]] Mapping map() const {
    require_valid("RocketBuffer::map");
    return Mapping::map(node_->sys(), node_->fd.get(), created_.size, created_.offset, node_->path);
  }

  // A window of CPU access: PREP_BO first (waits for the NPU's writes, up to timeout, then syncs for the CPU);
  // after a write, FINI_BO (syncs for the device). A PREP_BO that times out is an Error (ETIMEDOUT).
  template <CpuDirection Direction> [[nodiscard]] CpuAccess<typename Direction::byte>
  cpu_access(Mapping& mapping, Direction, std::chrono::nanoseconds timeout = std::chrono::seconds(10)) const {
    require_valid("RocketBuffer::cpu_access");
    if (!mapping.maps(node_->fd.get(), created_.offset))
      rknnxx::detail::fail("RocketBuffer::cpu_access", "the mapping was not made from this buffer ({})", node_->path);
    const std::span<typename Direction::byte> bytes(static_cast<typename Direction::byte*>(mapping.address()),
                                                    mapping.size());
    abi::RocketPrepBo prep{};
    prep.handle = created_.handle;
    prep.timeout_ns = detail::monotonic_deadline_ns(timeout);
    abi::RocketFiniBo fini{};
    fini.handle = created_.handle;
    const bool writes = Direction::rknpu_after != 0;
    return {
        bytes, detail::PendingIoctl::make(node_->sys(), node_->fd.get(), requests::rocket_prep_bo, prep, node_->path),
        writes ? detail::PendingIoctl::make(node_->sys(), node_->fd.get(), requests::rocket_fini_bo, fini, node_->path)
               : detail::PendingIoctl{}};
  }

  [[nodiscard]] DmaBuf export_dma_buf() const {
    require_valid("RocketBuffer::export_dma_buf");
    abi::DrmPrimeHandle p{};
    p.handle = created_.handle;
    p.flags = O_CLOEXEC | O_RDWR;
    node_->ioctl(requests::drm_prime_handle_to_fd, &p);
    return {UniqueFd(node_->sys(), p.fd), created_.size};
  }

  void destroy() {
    if (!node_) return;
    const auto node = std::move(node_);
    abi::DrmGemClose c{};
    c.handle = created_.handle;
    created_ = {};
    node->ioctl(requests::drm_gem_close, &c);
  }

private:
  friend class NpuDevice;

  abi::RocketCreateBo created_{};
};

class NpuDevice {
public:
  static constexpr std::string_view dri_directory = "/dev/dri", accel_directory = "/dev/accel",
                                    misc_node = "/dev/rknpu";

  // The NPU nodes of this machine, best first: rknpu render nodes, then /dev/rknpu, then rocket accel nodes.
  // A DRM node is recognised by the driver name DRM_IOCTL_VERSION reports, never by its number.
  [[nodiscard]] static NpuSearch find(Syscalls& sys = linux_syscalls()) {
    NpuSearch search;
    probe_directory(sys, dri_directory, "renderD", "rknpu", NpuDriver::rknpu_drm, search);
    const std::string misc(misc_node);
    const int fd = detail::retrying([&] { return sys.open(misc.c_str(), O_RDWR | O_CLOEXEC); });
    if (fd >= 0) {
      sys.close(fd);
      search.nodes.push_back({misc, NpuDriver::rknpu_misc});
    } else if (fd != -ENOENT) {
      search.skipped.push_back(rknnxx::detail::message("{}: {}", misc, detail::errno_text(-fd)));
    }
    probe_directory(sys, accel_directory, "accel", "rocket", NpuDriver::rocket, search);
    return search;
  }

  // The first NPU node found; an Error (device unavailable) listing what was searched and skipped otherwise.
  [[nodiscard]] static NpuDevice open(Syscalls& sys = linux_syscalls()) {
    auto search = find(sys);
    if (search.nodes.empty()) {
      std::string why = rknnxx::detail::message("no rknpu or rocket node among {}/renderD*, {}, {}/accel*",
                                                dri_directory, misc_node, accel_directory);
      for (const auto& s : search.skipped) why += rknnxx::detail::message("; {}", s);
      throw Error(Errc::device_unavailable, "NpuDevice::open", why);
    }
    return open(search.nodes.front(), sys);
  }

  [[nodiscard]] static NpuDevice open(const NpuNode& node, Syscalls& sys = linux_syscalls()) {
    auto handle = std::make_shared<detail::NpuNodeHandle>();
    handle->fd = open_node(sys, node.path, O_RDWR);
    handle->path = node.path;
    handle->driver = node.driver;
    if (node.driver != NpuDriver::rocket)
      handle->version_code = detail::optional_action(*handle, abi::rknpu_get_drv_version).value_or(0);
    return NpuDevice(std::move(handle));
  }

  [[nodiscard]] const std::string& path() const noexcept { return node_->path; }
  [[nodiscard]] NpuDriver driver() const noexcept { return node_->driver; }
  [[nodiscard]] int fd() const noexcept { return node_->fd.get(); }
  [[nodiscard]] bool is_rknpu() const noexcept { return node_->driver != NpuDriver::rocket; }

  // The rknpu action ioctl: value in, value out (docs/device.md#rknpu).
  std::uint32_t action(std::uint32_t code, std::uint32_t value = 0) const {
    require_rknpu("NpuDevice::action");
    abi::RknpuAction a{code, value};
    node_->ioctl(node_->misc() ? requests::rknpu_misc_action : requests::rknpu_action, &a);
    return a.value;
  }

  [[nodiscard]] NpuInfo info() const {
    NpuInfo info;
    info.driver = node_->driver;
    info.node = node_->path;
    if (node_->driver != NpuDriver::rknpu_misc) {
      detail::DrmIdentity id;
      const int rc = detail::query_drm_identity(node_->sys(), fd(), &id);
      if (rc < 0) throw device_error(-rc, rknnxx::detail::message("ioctl {}", requests::drm_version.name), node_->path);
      info.driver_version = rknnxx::detail::message("{}.{}.{}", id.major, id.minor, id.patch);
      if (node_->driver == NpuDriver::rocket) return info;
    }
    info.driver_version_code = optional_action(abi::rknpu_get_drv_version);
    if (info.driver_version_code) {
      const auto c = *info.driver_version_code;
      info.driver_version = rknnxx::detail::message("{}.{}.{}", c / 10000, c / 100 % 100, c % 100);
    }
    info.hw_version = optional_action(abi::rknpu_get_hw_version);
    if (const auto iommu = optional_action(abi::rknpu_get_iommu_en)) info.iommu_enabled = *iommu != 0;
    info.sram_bytes = optional_action(abi::rknpu_get_total_sram_size);
    return info;
  }

  // rknpu memory of at least bytes (the driver rounds up to pages), flags from abi::rknpu_mem_*.
  [[nodiscard]] RknpuBuffer allocate_rknpu(std::uint64_t bytes,
                                           std::uint32_t flags = abi::rknpu_mem_non_contiguous |
                                               abi::rknpu_mem_cacheable) const {
    require_rknpu("NpuDevice::allocate_rknpu");
    detail::mappable_size(bytes, "NpuDevice::allocate_rknpu");
    RknpuBuffer b;
    b.created_.flags = flags;
    b.created_.size = bytes;
    // Drivers up to 0.9.6 know the 40-byte struct: ask with that size so the misc node copies no more.
    const bool legacy = node_->version_code != 0 && node_->version_code < abi::rknpu_version_code(0, 9, 7);
    const Request& r = node_->misc()
        ? (legacy ? requests::rknpu_misc_mem_create_legacy : requests::rknpu_misc_mem_create)
        : (legacy ? requests::rknpu_mem_create_legacy : requests::rknpu_mem_create);
    node_->ioctl(r, &b.created_);
    if (node_->misc()) b.misc_fd_ = UniqueFd(node_->sys(), static_cast<int>(b.created_.handle));
    b.node_ = node_;  // from here on, b destroys the object if what follows fails
    if (!node_->misc()) {
      abi::RknpuMemMap m{};
      m.handle = b.created_.handle;
      node_->ioctl(requests::rknpu_mem_map, &m);
      b.map_offset_ = m.offset;
    }
    return b;
  }

  [[nodiscard]] RocketBuffer allocate_rocket(std::uint64_t bytes) const {
    if (node_->driver != NpuDriver::rocket)
      rknnxx::detail::fail("NpuDevice::allocate_rocket", "{} is an {} node, not rocket", node_->path,
                           driver_name(node_->driver));
    detail::mappable_size(bytes, "NpuDevice::allocate_rocket");
    if (bytes > UINT32_MAX)
      rknnxx::detail::fail("NpuDevice::allocate_rocket", "{} bytes exceed rocket's 32-bit buffer size", bytes);
    RocketBuffer b;
    b.created_.size = static_cast<std::uint32_t>(bytes);
    node_->ioctl(requests::rocket_create_bo, &b.created_);
    b.node_ = node_;
    return b;
  }

private:
  explicit NpuDevice(std::shared_ptr<const detail::NpuNodeHandle> node) noexcept : node_(std::move(node)) {}

  void require_rknpu(std::string_view call) const {
    if (!is_rknpu()) rknnxx::detail::fail(call, "{} is a rocket node: it has no rknpu ioctls", node_->path);
  }
  [[nodiscard]] std::optional<std::uint32_t> optional_action(std::uint32_t code) const {
    return detail::optional_action(*node_, code);
  }

  static void probe_directory(Syscalls& sys, std::string_view directory, std::string_view prefix,
                              std::string_view wanted, NpuDriver driver, NpuSearch& search) {
    std::vector<std::string> names;
    const std::string dir(directory);
    const int rc = sys.list_directory(dir.c_str(), &names);
    if (rc == -ENOENT) return;
    if (rc < 0) {
      search.skipped.push_back(rknnxx::detail::message("{}: {}", dir, detail::errno_text(-rc)));
      return;
    }
    std::vector<std::pair<unsigned, std::string>> numbered;
    for (auto& n : names)
      if (const auto k = detail::node_number(n, prefix)) numbered.emplace_back(*k, std::move(n));
    std::sort(numbered.begin(), numbered.end());
    for (const auto& [k, name] : numbered) {
      const std::string path = rknnxx::detail::message("{}/{}", dir, name);
      const int fd = detail::retrying([&] { return sys.open(path.c_str(), O_RDWR | O_CLOEXEC); });
      if (fd < 0) {
        search.skipped.push_back(rknnxx::detail::message("{}: {}", path, detail::errno_text(-fd)));
        continue;
      }
      detail::DrmIdentity id;
      const int q = detail::query_drm_identity(sys, fd, &id);
      sys.close(fd);
      if (q < 0)
        search.skipped.push_back(
            rknnxx::detail::message("{}: {} {}", path, requests::drm_version.name, detail::errno_text(-q)));
      else if (id.name == wanted) search.nodes.push_back({path, driver});
      else search.skipped.push_back(rknnxx::detail::message("{}: driver \"{}\"", path, id.name));
    }
  }

  std::shared_ptr<const detail::NpuNodeHandle> node_;
};

}  // namespace rknnxx::device
