#pragma once
// A model of the kernel behind rknnxx::device::Syscalls (docs/device.md#testing-without-an-npu): dma-heap nodes
// whose allocations are real memfds, DRM nodes (rknpu, rocket, or another driver) with GEM handles and mmap
// offsets, the /dev/rknpu misc node, DMA_BUF_IOCTL_SYNC START/END pairing checked per buffer, and errors
// injected per call. Buffers are real memfds, so mmap gives real shared memory.

#include <rknnxx/device/ioctl.hpp>
#include <rknnxx/device/syscalls.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace model {

using namespace rknnxx::device;

struct Gem {
  int memfd = -1;
  std::uint64_t size = 0;
  std::uint32_t flags = 0;
  std::uint64_t mmap_offset = 0;
  std::uint64_t obj_addr = 0;
};

struct Node {
  enum class Kind { heap, drm, misc } kind = Kind::heap;
  std::string driver;  // DRM name: "rknpu", "rocket", "i915"
  int major = 0, minor = 0, patch = 0;
  std::uint32_t rknpu_version = 908;  // GET_DRV_VERSION
  bool knows_sram = true;             // an old driver answers EINVAL to the SRAM action
};

class Kernel final : public Syscalls {
public:
  Kernel() = default;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel() override {
    for (auto& [fd, f] : files_)
      if (f.real) linux_syscalls().close(fd);
    for (auto& [h, g] : gems_) linux_syscalls().close(g.memfd);
  }

  // ---- the machine ----
  void add_node(const std::string& path, Node n) {
    nodes_[path] = n;
    const auto slash = path.rfind('/');
    directories_[path.substr(0, slash)].push_back(path.substr(slash + 1));
  }
  void add_heap(const std::string& name) { add_node("/dev/dma_heap/" + name, {}); }
  void add_drm(const std::string& path, const std::string& driver, int major = 0, int minor = 9, int patch = 8) {
    add_node(path, {Node::Kind::drm, driver, major, minor, patch});
  }
  void add_directory(const std::string& path) { directories_[path]; }
  Node& node(const std::string& path) { return nodes_.at(path); }

  // ---- injected failures: the next `times` calls of `call` ("open", "mmap", or a request name) fail ----
  void fail(const std::string& call, int error, int times = 1) { failures_[call] = {error, times}; }

  // ---- what happened ----
  std::vector<std::string> log;      // every call, in order ("open /dev/..", "ioctl DMA_BUF_IOCTL_SYNC ..")
  std::vector<std::uint64_t> syncs;  // DMA_BUF_IOCTL_SYNC flags, in order
  std::vector<std::uint32_t> rknpu_syncs;
  std::vector<std::string> rocket_calls;
  std::vector<std::string> violations;  // pairing errors and other misuse the model saw
  std::uint32_t last_mem_create_size = 0;
  std::uint32_t last_alloc_fd_flags = 0;

  [[nodiscard]] std::size_t open_files() const { return files_.size(); }
  [[nodiscard]] std::size_t live_gems() const { return gems_.size(); }
  [[nodiscard]] std::size_t open_syncs() const { return syncing_.size(); }
  [[nodiscard]] std::size_t mappings() const { return mappings_.size(); }
  [[nodiscard]] std::size_t calls() const { return log.size(); }

  // ---- Syscalls ----
  int open(const char* path, int flags) noexcept override {
    log.push_back(std::string("open ") + path);
    if (int e = injected("open")) return e;
    const auto it = nodes_.find(path);
    if (it == nodes_.end()) return -ENOENT;
    if ((flags & O_CLOEXEC) == 0) violations.push_back(std::string("open without O_CLOEXEC: ") + path);
    const int fd = next_fake_fd_++;
    files_[fd] = {path, false, {}};
    return fd;
  }
  int close(int fd) noexcept override {
    log.push_back("close " + std::to_string(fd));
    const auto it = files_.find(fd);
    if (it == files_.end()) {
      violations.push_back("close of an fd that is not open: " + std::to_string(fd));
      return -EBADF;
    }
    if (syncing_.count(fd) != 0) violations.push_back("dma-buf closed during a CPU access: " + std::to_string(fd));
    syncing_.erase(fd);
    if (it->second.real) linux_syscalls().close(fd);
    files_.erase(it);
    return 0;
  }
  int dup(int fd) noexcept override {
    log.push_back("dup " + std::to_string(fd));
    const auto it = files_.find(fd);
    if (it == files_.end() || !it->second.real) return -EBADF;
    const int copy = linux_syscalls().dup(fd);
    if (copy >= 0) files_[copy] = {it->second.path, true, {}};
    return copy;
  }
  int mmap(std::size_t length, int prot, int flags, int fd, std::uint64_t offset, void** address) noexcept override {
    log.push_back("mmap " + std::to_string(fd));
    if (int e = injected("mmap")) return e;
    const auto it = files_.find(fd);
    if (it == files_.end()) return -EBADF;
    int backing = fd;
    std::uint64_t backing_offset = offset;
    if (!it->second.real) {  // a DRM node: the offset names a GEM object
      const Gem* g = gem_at_offset(offset);
      if (g == nullptr || length > g->size) return -EINVAL;
      backing = g->memfd;
      backing_offset = 0;
    }
    const int rc = linux_syscalls().mmap(length, prot, flags, backing, backing_offset, address);
    if (rc == 0) mappings_[*address] = length;
    return rc;
  }
  int munmap(void* address, std::size_t length) noexcept override {
    log.push_back("munmap");
    const auto it = mappings_.find(address);
    if (it == mappings_.end() || it->second != length) violations.push_back("munmap of an unknown mapping");
    else mappings_.erase(it);
    return linux_syscalls().munmap(address, length);
  }
  int memfd_create(const char* name, unsigned flags) noexcept override {
    log.push_back("memfd_create");
    if (int e = injected("memfd_create")) return e;
    const int fd = linux_syscalls().memfd_create(name, flags);
    if (fd >= 0) files_[fd] = {"memfd", true, {}};
    return fd;
  }
  int ftruncate(int fd, std::uint64_t length) noexcept override {
    log.push_back("ftruncate");
    if (int e = injected("ftruncate")) return e;
    return linux_syscalls().ftruncate(fd, length);
  }
  int size_of(int fd, std::uint64_t* size) noexcept override {
    log.push_back("size_of");
    return linux_syscalls().size_of(fd, size);
  }
  int list_directory(const char* path, std::vector<std::string>* names) noexcept override {
    log.push_back(std::string("list ") + path);
    if (int e = injected("list")) return e;
    const auto it = directories_.find(path);
    if (it == directories_.end()) return -ENOENT;
    *names = it->second;
    return 0;
  }

  int ioctl(int fd, std::uint32_t request, void* arg) noexcept override {
    const std::string name = request_name(request);
    log.push_back("ioctl " + name);
    if (int e = injected(name)) return e;
    const auto it = files_.find(fd);
    if (it == files_.end()) return -EBADF;
    File& f = it->second;
    if (f.real) return dma_buf_ioctl(fd, request, arg);
    const Node& n = nodes_.at(f.path);
    switch (n.kind) {
      case Node::Kind::heap: return heap_ioctl(request, arg);
      case Node::Kind::drm: return drm_ioctl(n, request, arg);
      case Node::Kind::misc: return misc_ioctl(n, request, arg);
    }
    return -ENOTTY;
  }

private:
  struct File {
    std::string path;
    bool real = false;  // a real memfd standing for a dma-buf
    std::set<std::uint32_t> handles;
  };
  struct Failure {
    int error = 0;
    int times = 0;
  };

  static std::string request_name(std::uint32_t r) {
    for (const Request* q :
         {&requests::dma_heap_alloc, &requests::dma_buf_sync, &requests::drm_version, &requests::drm_gem_close,
          &requests::drm_prime_handle_to_fd, &requests::rknpu_action, &requests::rknpu_mem_create,
          &requests::rknpu_mem_create_legacy, &requests::rknpu_mem_map, &requests::rknpu_mem_destroy,
          &requests::rknpu_mem_sync, &requests::rknpu_misc_action, &requests::rknpu_misc_mem_create,
          &requests::rknpu_misc_mem_create_legacy, &requests::rknpu_misc_mem_destroy, &requests::rknpu_misc_mem_sync,
          &requests::rocket_create_bo, &requests::rocket_prep_bo, &requests::rocket_fini_bo})
      if (q->number == r) return std::string(q->name);
    return "unknown";
  }

  int injected(const std::string& call) {
    const auto it = failures_.find(call);
    if (it == failures_.end() || it->second.times == 0) return 0;
    --it->second.times;
    return -it->second.error;
  }

  int new_memfd(std::uint64_t size) {
    const int fd = linux_syscalls().memfd_create("model", memfd_cloexec);
    if (fd < 0) return fd;
    if (const int rc = linux_syscalls().ftruncate(fd, size); rc < 0) {
      linux_syscalls().close(fd);
      return rc;
    }
    return fd;
  }

  const Gem* gem_at_offset(std::uint64_t offset) const {
    for (const auto& [h, g] : gems_)
      if (g.mmap_offset == offset) return &g;
    return nullptr;
  }

  int heap_ioctl(std::uint32_t request, void* arg) {
    if (request != requests::dma_heap_alloc.number) return -ENOTTY;
    auto* a = static_cast<abi::DmaHeapAllocationData*>(arg);
    if (a->len == 0 || a->heap_flags != 0) return -EINVAL;
    last_alloc_fd_flags = a->fd_flags;
    const int fd = new_memfd(a->len);
    if (fd < 0) return fd;
    files_[fd] = {"dma-buf", true, {}};
    a->fd = static_cast<std::uint32_t>(fd);
    return 0;
  }

  int dma_buf_ioctl(int fd, std::uint32_t request, void* arg) {
    if (request != requests::dma_buf_sync.number) return -ENOTTY;
    const auto flags = static_cast<abi::DmaBufSync*>(arg)->flags;
    if ((flags & ~std::uint64_t{abi::dma_buf_sync_rw | abi::dma_buf_sync_end}) != 0 || (flags & 3) == 0) return -EINVAL;
    syncs.push_back(flags);
    const bool end = (flags & abi::dma_buf_sync_end) != 0;
    const auto open = syncing_.find(fd);
    if (!end) {
      if (open != syncing_.end()) violations.push_back("START while a CPU access is open");
      syncing_[fd] = flags & 3;
    } else {
      if (open == syncing_.end()) violations.push_back("END without START");
      else if (open->second != (flags & 3)) violations.push_back("END with another direction than START");
      if (open != syncing_.end()) syncing_.erase(open);
    }
    return 0;
  }

  int drm_ioctl(const Node& n, std::uint32_t request, void* arg) {
    if (request == requests::drm_version.number) {
      auto* v = static_cast<abi::DrmVersion*>(arg);
      v->version_major = n.major;
      v->version_minor = n.minor;
      v->version_patchlevel = n.patch;
      std::memcpy(v->name, n.driver.data(), std::min(v->name_len, n.driver.size()));
      v->name_len = n.driver.size();
      v->date_len = 0;
      v->desc_len = 0;
      return 0;
    }
    if (n.driver == "rknpu") return rknpu_ioctl(n, request, arg, false);
    if (n.driver == "rocket") return rocket_ioctl(request, arg);
    if (request == requests::drm_gem_close.number || request == requests::drm_prime_handle_to_fd.number) return -EINVAL;
    return -ENOTTY;  // another driver's node
  }

  int misc_ioctl(const Node& n, std::uint32_t request, void* arg) {
    // The misc node dispatches on the number alone; the model insists on the 'r' requests the library should use.
    if (((request >> 8) & 0xff) != 'r') return -ENOTTY;
    return rknpu_ioctl(n, request, arg, true);
  }

  int rknpu_ioctl(const Node& n, std::uint32_t request, void* arg, bool misc) {
    const std::uint32_t nr = request & 0xff;
    const std::uint32_t base = misc ? 0 : requests::drm_command_base;
    if (nr == base + 0) {
      auto* a = static_cast<abi::RknpuAction*>(arg);
      switch (a->flags) {
        case abi::rknpu_get_hw_version: a->value = 0x46495245; return 0;
        case abi::rknpu_get_drv_version: a->value = n.rknpu_version; return 0;
        case abi::rknpu_get_iommu_en: a->value = 1; return 0;
        case abi::rknpu_get_total_sram_size:
          if (!n.knows_sram) return -EINVAL;
          a->value = 956 * 1024;
          return 0;
        default: return -EINVAL;
      }
    }
    if (nr == base + 2) {
      auto* c = static_cast<abi::RknpuMemCreate*>(arg);
      last_mem_create_size = ioc::size_of(request);
      if (c->size == 0) return -EINVAL;
      Gem g;
      g.size = (c->size + 4095) / 4096 * 4096;
      g.flags = c->flags;
      g.memfd = new_memfd(g.size);
      if (g.memfd < 0) return g.memfd;
      const std::uint32_t handle = misc ? static_cast<std::uint32_t>(linux_syscalls().dup(g.memfd)) : next_handle_++;
      if (misc) files_[static_cast<int>(handle)] = {"dma-buf", true, {}};
      g.mmap_offset = std::uint64_t{handle} << 16;
      g.obj_addr = 0xffffff8000000000ull + handle * 0x1000ull;
      gems_[handle] = g;
      c->handle = handle;
      c->size = g.size;
      c->obj_addr = g.obj_addr;
      c->dma_addr = 0x10000000ull + handle * 0x100000ull;
      return 0;
    }
    if (nr == base + 3) {
      if (misc) return -EINVAL;  // MEM_MAP is not implemented by the misc build
      auto* m = static_cast<abi::RknpuMemMap*>(arg);
      const auto it = gems_.find(m->handle);
      if (it == gems_.end()) return -EINVAL;
      m->offset = it->second.mmap_offset;
      return 0;
    }
    if (nr == base + 4) {
      auto* d = static_cast<abi::RknpuMemDestroy*>(arg);
      for (auto it = gems_.begin(); it != gems_.end(); ++it) {
        const bool match = misc ? it->second.obj_addr == d->obj_addr : it->first == d->handle;
        if (match) {
          if (it->second.obj_addr != d->obj_addr) violations.push_back("MEM_DESTROY with a wrong obj_addr");
          linux_syscalls().close(it->second.memfd);
          gems_.erase(it);
          return 0;
        }
      }
      return -EINVAL;
    }
    if (nr == base + 5) {
      auto* s = static_cast<abi::RknpuMemSync*>(arg);
      for (const auto& [h, g] : gems_)
        if (g.obj_addr == s->obj_addr) {
          if ((g.flags & abi::rknpu_mem_cacheable) == 0) return -EINVAL;
          if (s->offset + s->size > g.size) return -EINVAL;
          rknpu_syncs.push_back(s->flags);
          return 0;
        }
      return -EINVAL;
    }
    if (!misc && request == requests::drm_prime_handle_to_fd.number) return prime_export(arg);
    return -ENOTTY;
  }

  int rocket_ioctl(std::uint32_t request, void* arg) {
    if (request == requests::rocket_create_bo.number) {
      auto* c = static_cast<abi::RocketCreateBo*>(arg);
      if (c->size == 0) return -EINVAL;
      Gem g;
      g.size = (std::uint64_t{c->size} + 4095) / 4096 * 4096;
      g.memfd = new_memfd(g.size);
      if (g.memfd < 0) return g.memfd;
      const std::uint32_t handle = next_handle_++;
      g.mmap_offset = std::uint64_t{handle} << 16;
      gems_[handle] = g;
      c->handle = handle;
      c->dma_address = 0x20000000ull + handle * 0x100000ull;
      c->offset = g.mmap_offset;
      rocket_calls.push_back("create");
      return 0;
    }
    if (request == requests::rocket_prep_bo.number) {
      const auto* p = static_cast<const abi::RocketPrepBo*>(arg);
      if (p->reserved != 0 || gems_.count(p->handle) == 0) return -EINVAL;
      if (p->timeout_ns == 0) return -EBUSY;
      rocket_calls.push_back("prep");
      return 0;
    }
    if (request == requests::rocket_fini_bo.number) {
      const auto* f = static_cast<const abi::RocketFiniBo*>(arg);
      if (f->reserved != 0 || gems_.count(f->handle) == 0) return -EINVAL;
      rocket_calls.push_back("fini");
      return 0;
    }
    if (request == requests::drm_gem_close.number) {
      const auto* c = static_cast<const abi::DrmGemClose*>(arg);
      const auto it = gems_.find(c->handle);
      if (it == gems_.end()) return -EINVAL;
      linux_syscalls().close(it->second.memfd);
      gems_.erase(it);
      rocket_calls.push_back("close");
      return 0;
    }
    if (request == requests::drm_prime_handle_to_fd.number) return prime_export(arg);
    return -ENOTTY;
  }

  int prime_export(void* arg) {
    auto* p = static_cast<abi::DrmPrimeHandle*>(arg);
    const auto it = gems_.find(p->handle);
    if (it == gems_.end()) return -ENOENT;
    if ((p->flags & O_CLOEXEC) == 0) violations.push_back("PRIME export without O_CLOEXEC");
    const int fd = linux_syscalls().dup(it->second.memfd);
    if (fd < 0) return fd;
    files_[fd] = {"dma-buf", true, {}};
    p->fd = fd;
    return 0;
  }

  std::map<std::string, Node> nodes_;
  std::map<std::string, std::vector<std::string>> directories_;
  std::map<int, File> files_;
  std::map<std::uint32_t, Gem> gems_;
  std::map<int, std::uint64_t> syncing_;
  std::map<void*, std::size_t> mappings_;
  std::map<std::string, Failure> failures_;
  int next_fake_fd_ = 100000;
  std::uint32_t next_handle_ = 1;
};

// The what() of the rknnxx::Error f throws, or "no error".
inline std::string what_of(auto&& f) {
  try {
    f();
  } catch (const rknnxx::Error& e) {
    return e.what();
  }
  return "no error";
}
inline bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace model
