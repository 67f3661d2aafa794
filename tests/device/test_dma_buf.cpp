// DmaHeap, DmaBuf, MemfdBuffer, Mapping and CpuAccess against the driver model (tests/device/driver_model.hpp)
// and through the real system calls where this machine has them.
#include "driver_model.hpp"

#include <rknnxx/device/dma_buf.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <system_error>

#if __has_include(<linux/dma-heap.h>) && __has_include(<linux/dma-buf.h>)
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#define RKNNXX_HAVE_KERNEL_UAPI 1
#endif

using namespace rknnxx::device;

namespace {
using model::contains;
using model::what_of;
}  // namespace

#ifdef RKNNXX_HAVE_KERNEL_UAPI
TEST_CASE("our request numbers equal this machine's kernel headers") {
  CHECK(requests::dma_heap_alloc.number == static_cast<std::uint32_t>(DMA_HEAP_IOCTL_ALLOC));
  CHECK(requests::dma_buf_sync.number == static_cast<std::uint32_t>(DMA_BUF_IOCTL_SYNC));
  CHECK(abi::dma_buf_sync_read == DMA_BUF_SYNC_READ);
  CHECK(abi::dma_buf_sync_write == DMA_BUF_SYNC_WRITE);
  CHECK(abi::dma_buf_sync_start == DMA_BUF_SYNC_START);
  CHECK(abi::dma_buf_sync_end == DMA_BUF_SYNC_END);
  CHECK(sizeof(abi::DmaHeapAllocationData) == sizeof(dma_heap_allocation_data));
  CHECK(memfd_cloexec == MFD_CLOEXEC);
}
#endif

TEST_CASE("ioctl encoding: the size is read back from a request") {
  CHECK(ioc::size_of(requests::rknpu_mem_create.number) == 48);
  CHECK(ioc::size_of(requests::rknpu_mem_create_legacy.number) == 40);
  CHECK(ioc::size_of(requests::drm_version.number) == sizeof(abi::DrmVersion));
}

TEST_CASE("DmaHeap::list: sorted names; no /dev/dma_heap is no heaps") {
  model::Kernel k;
  CHECK(DmaHeap::list(k).empty());
  k.add_heap("system");
  k.add_heap("cma");
  CHECK(DmaHeap::list(k) == std::vector<std::string>{"cma", "system"});
  k.fail("list", EACCES);
  CHECK(contains(what_of([&] { (void)DmaHeap::list(k); }), "/dev/dma_heap"));
}

TEST_CASE("DmaHeap::open refuses names that are not a file under /dev/dma_heap, before any call") {
  model::Kernel k;
  k.add_heap("system");
  for (const char* bad : {"", ".", "..", "../dri/renderD128", "a/b"}) {
    CAPTURE(bad);
    CHECK(contains(what_of([&] { (void)DmaHeap::open(bad, k); }), "is not a heap name"));
  }
  CHECK(k.calls() == 0);
  const auto missing = what_of([&] { (void)DmaHeap::open("cma", k); });
  CHECK(contains(missing, "open: /dev/dma_heap/cma: "));
  CHECK(contains(missing, std::error_code(ENOENT, std::system_category()).message()));
}

TEST_CASE("DmaHeap::allocate: a dma-buf of the size asked, read-write and close-on-exec") {
  model::Kernel k;
  k.add_heap("system");
  {
    const auto heap = DmaHeap::open("system", k);
    auto buf = heap.allocate(4096);
    CHECK(buf.valid());
    CHECK(buf.size() == 4096);
    CHECK(decltype(buf)::kind == BufferKind::dma_buf);
    CHECK(k.last_alloc_fd_flags == static_cast<std::uint32_t>(O_RDWR | O_CLOEXEC));
    CHECK(k.open_files() == 2);
  }
  CHECK(k.open_files() == 0);
  CHECK(k.violations.empty());
}

TEST_CASE("bad sizes are refused before any system call") {
  model::Kernel k;
  k.add_heap("system");
  const auto heap = DmaHeap::open("system", k);
  const auto before = k.calls();
  CHECK(contains(what_of([&] { (void)heap.allocate(0); }), "0 bytes"));
  CHECK(contains(what_of([&] { (void)heap.allocate(UINT64_MAX); }), "do not fit this process's address space"));
  CHECK(contains(what_of([&] { (void)heap.allocate(std::uint64_t{PTRDIFF_MAX} + 1); }), "address space"));
  CHECK(contains(what_of([&] { (void)MemfdBuffer::allocate(0, k); }), "0 bytes"));
  CHECK(contains(what_of([&] { (void)allocate_dma_or_memfd(UINT64_MAX, "system", k); }), "address space"));
  CHECK(k.calls() == before);
}

TEST_CASE("EINTR and EAGAIN are retried, a bounded number of times") {
  model::Kernel k;
  k.add_heap("system");
  const auto heap = DmaHeap::open("system", k);
  k.fail("DMA_HEAP_IOCTL_ALLOC", EINTR, 3);
  CHECK(heap.allocate(64).valid());
  k.fail("DMA_HEAP_IOCTL_ALLOC", EAGAIN, 2);
  CHECK(heap.allocate(64).valid());
  k.fail("DMA_HEAP_IOCTL_ALLOC", EAGAIN, 1000);
  const auto before = k.calls();
  try {
    (void)heap.allocate(64);
    FAIL("a driver that keeps answering EAGAIN must be reported");
  } catch (const rknnxx::Error& e) {
    CHECK(e.code().value() == EAGAIN);
    CHECK(e.code().category() == std::system_category());
  }
  CHECK(k.calls() - before == static_cast<std::size_t>(detail::max_retries));
  k.fail("open", EINTR, 2);
  CHECK(DmaHeap::open("system", k).fd() >= 0);
}

TEST_CASE("a failed ioctl names the request, the node and errno's text") {
  model::Kernel k;
  k.add_heap("system");
  const auto heap = DmaHeap::open("system", k);
  k.fail("DMA_HEAP_IOCTL_ALLOC", ENOMEM);
  try {
    (void)heap.allocate(1 << 20);
    FAIL("expected ENOMEM");
  } catch (const rknnxx::Error& e) {
    const std::string w = e.what();
    CHECK(contains(w, "ioctl DMA_HEAP_IOCTL_ALLOC"));
    CHECK(contains(w, "/dev/dma_heap/system"));
    CHECK(contains(w, std::error_code(ENOMEM, std::system_category()).message()));
    CHECK(e.code().value() == ENOMEM);
  }
}

TEST_CASE("cpu_access brackets the access with DMA_BUF_IOCTL_SYNC START and END of the same direction") {
  model::Kernel k;
  k.add_heap("system");
  auto buf = DmaHeap::open("system", k).allocate(256);
  auto map = buf.map();
  CHECK(map.size() == 256);
  {
    auto w = buf.cpu_access(map, cpu_write);
    CHECK(k.open_syncs() == 1);
    std::fill(w.bytes().begin(), w.bytes().end(), std::byte{0x5a});
  }
  CHECK(k.open_syncs() == 0);
  auto second = buf.map();  // another mapping of the same memory sees the bytes
  {
    const auto r = buf.cpu_access(second, cpu_read);
    static_assert(std::is_same_v<decltype(r.bytes()), std::span<const std::byte>>, "a read access is read-only");
    CHECK(r.bytes()[255] == std::byte{0x5a});
  }
  { auto rw = buf.cpu_access(map, cpu_read_write); }
  using namespace abi;
  CHECK(k.syncs ==
        std::vector<std::uint64_t>{dma_buf_sync_start | dma_buf_sync_write, dma_buf_sync_end | dma_buf_sync_write,
                                   dma_buf_sync_start | dma_buf_sync_read, dma_buf_sync_end | dma_buf_sync_read,
                                   dma_buf_sync_start | dma_buf_sync_rw, dma_buf_sync_end | dma_buf_sync_rw});
  CHECK(k.violations.empty());
}

TEST_CASE("cpu_access: a failed START is an error and no END follows; a failed END is reported by finish()") {
  model::Kernel k;
  k.add_heap("system");
  auto buf = DmaHeap::open("system", k).allocate(64);
  auto map = buf.map();
  k.fail("DMA_BUF_IOCTL_SYNC", EIO);
  CHECK(contains(what_of([&] { (void)buf.cpu_access(map, cpu_write); }), "ioctl DMA_BUF_IOCTL_SYNC: dma-buf fd"));
  CHECK(k.syncs.empty());
  auto w = buf.cpu_access(map, cpu_write);
  k.fail("DMA_BUF_IOCTL_SYNC", EIO);
  CHECK(contains(what_of([&] { w.finish(); }), "DMA_BUF_IOCTL_SYNC"));
  CHECK(w.bytes().empty());
  CHECK_NOTHROW(w.finish());  // the END was consumed: not issued twice
}

TEST_CASE("a moved CpuAccess ends the access once, from where it was moved to") {
  model::Kernel k;
  k.add_heap("system");
  auto buf = DmaHeap::open("system", k).allocate(64);
  auto map = buf.map();
  {
    auto first = buf.cpu_access(map, cpu_write);
    auto second = std::move(first);
    CHECK(first.bytes().empty());
    CHECK(second.size() == 64);
    first.finish();  // nothing left to end
    CHECK(k.open_syncs() == 1);
  }
  CHECK(k.open_syncs() == 0);
  CHECK(k.syncs.size() == 2);
  CHECK(k.violations.empty());
}

TEST_CASE("cpu_access refuses a mapping of another buffer") {
  model::Kernel k;
  k.add_heap("system");
  const auto heap = DmaHeap::open("system", k);
  auto a = heap.allocate(64);
  auto b = heap.allocate(64);
  auto map_b = b.map();
  CHECK(contains(what_of([&] { (void)a.cpu_access(map_b, cpu_write); }), "not made from this dma-buf"));
  Mapping empty;
  CHECK(contains(what_of([&] { (void)a.cpu_access(empty, cpu_read); }), "not made from this dma-buf"));
  CHECK(k.syncs.empty());
}

TEST_CASE("DmaBuf ownership: move, release and reset") {
  model::Kernel k;
  k.add_heap("system");
  const auto heap = DmaHeap::open("system", k);
  auto a = heap.allocate(64);
  const int fd = a.fd();
  DmaBuf b = std::move(a);
  CHECK_FALSE(a.valid());
  CHECK(b.fd() == fd);
  CHECK(contains(what_of([&] { (void)a.map(); }), "owns no file descriptor"));
  const auto files = k.open_files();
  b.reset();
  CHECK(k.open_files() == files - 1);
  auto c = heap.allocate(64);
  const int released = c.release();
  CHECK_FALSE(c.valid());
  CHECK(k.open_files() == files);  // still open: the caller owns it now
  auto adopted = DmaBuf::adopt(released, k);
  CHECK(adopted.size() == 64);
  CHECK(k.violations.empty());
}

TEST_CASE("a mapping is unmapped when destroyed, and a failed mmap names the buffer") {
  model::Kernel k;
  k.add_heap("system");
  auto buf = DmaHeap::open("system", k).allocate(64);
  {
    auto m = buf.map();
    CHECK(k.mappings() == 1);
    Mapping moved = std::move(m);
    CHECK(k.mappings() == 1);
  }
  CHECK(k.mappings() == 0);
  k.fail("mmap", ENODEV);
  CHECK(contains(what_of([&] { (void)buf.map(); }), "mmap: dma-buf fd"));
}

TEST_CASE("allocate_dma_or_memfd: a dma-buf where the heap exists, else a memfd, and the variant says which") {
  model::Kernel pc;
  auto fallback = allocate_dma_or_memfd(4096, "system", pc);
  REQUIRE(std::holds_alternative<MemfdBuffer>(fallback));
  auto& mem = std::get<MemfdBuffer>(fallback);
  CHECK(mem.size() == 4096);
  auto map = mem.map();
  {
    auto w = mem.cpu_access(map, cpu_write);
    w.bytes()[0] = std::byte{7};
  }
  CHECK(pc.syncs.empty());  // a memfd is not a dma-buf: nothing to sync
  CHECK(std::none_of(pc.log.begin(), pc.log.end(), [](const std::string& s) { return contains(s, "ioctl"); }));

  model::Kernel board;
  board.add_heap("system");
  CHECK(std::holds_alternative<DmaBuf>(allocate_dma_or_memfd(4096, "system", board)));
  board.fail("open", EACCES);
  CHECK(std::holds_alternative<MemfdBuffer>(allocate_dma_or_memfd(4096, "system", board)));
  board.fail("DMA_HEAP_IOCTL_ALLOC", ENOMEM);  // the heap is there but out of memory: reported, no fallback
  CHECK(contains(what_of([&] { (void)allocate_dma_or_memfd(4096, "system", board); }), "DMA_HEAP_IOCTL_ALLOC"));
  board.fail("open", EIO);
  CHECK(contains(what_of([&] { (void)allocate_dma_or_memfd(4096, "system", board); }), "open: /dev/dma_heap/system"));
}

TEST_CASE("MemfdBuffer: a failed memfd_create or ftruncate is reported and leaks nothing") {
  model::Kernel k;
  k.fail("memfd_create", EMFILE);
  CHECK(contains(what_of([&] { (void)MemfdBuffer::allocate(64, k); }), "memfd_create"));
  k.fail("ftruncate", ENOSPC);
  CHECK(contains(what_of([&] { (void)MemfdBuffer::allocate(64, k); }), "ftruncate: memfd fd"));
  CHECK(k.open_files() == 0);
}

// ---- through the real system calls ----

TEST_CASE("real: a memfd buffer maps, is written through one mapping and read through another") {
  auto buf = MemfdBuffer::allocate(1 << 16);
  auto a = buf.map();
  auto b = buf.map();
  {
    auto w = buf.cpu_access(a, cpu_write);
    for (std::size_t i = 0; i < w.size(); ++i) w.bytes()[i] = static_cast<std::byte>(i * 7);
  }
  const auto r = buf.cpu_access(b, cpu_read);
  CHECK(r.bytes()[1000] == static_cast<std::byte>(1000 * 7));
  const int copy = ::fcntl(buf.fd(), F_DUPFD_CLOEXEC, 0);
  REQUIRE(copy >= 0);
  CHECK(MemfdBuffer::adopt(copy).size() == (1u << 16));
}

TEST_CASE("real: a dma-heap allocation, mapped and synced") {
  const auto heaps = DmaHeap::list();
  if (heaps.empty()) {
    MESSAGE("skipped: this machine has no /dev/dma_heap (no dma-heaps enabled in its kernel)");
    return;
  }
  std::optional<DmaHeap> heap;
  for (const auto& name : heaps) {
    try {
      heap.emplace(DmaHeap::open(name));
      break;
    } catch (const rknnxx::Error& e) {
      MESSAGE("cannot open heap " << name << ": " << e.what());
    }
  }
  if (!heap) {
    MESSAGE("skipped: no heap under /dev/dma_heap could be opened (permissions)");
    return;
  }
  auto buf = heap->allocate(1 << 16);
  auto map = buf.map();
  {
    auto w = buf.cpu_access(map, cpu_write);
    std::fill(w.bytes().begin(), w.bytes().end(), std::byte{0x11});
    w.finish();
  }
  auto r = buf.cpu_access(map, cpu_read);
  CHECK(r.bytes()[12345] == std::byte{0x11});
  r.finish();
  CHECK(DmaBuf::adopt(buf.release()).size() >= (1u << 16));
}

#if __has_include(<linux/udmabuf.h>)
#include <linux/udmabuf.h>

TEST_CASE("real: a dma-buf made by /dev/udmabuf from a memfd, mapped and synced") {
  const int dev = ::open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
  if (dev < 0) {
    MESSAGE("skipped: /dev/udmabuf: " << std::error_code(errno, std::system_category()).message());
    return;
  }
  const UniqueFd device(linux_syscalls(), dev);
  // udmabuf wants a memfd that cannot shrink; MemfdBuffer's memfd is not sealable, so this one is made here.
  const int memfd = ::memfd_create("udmabuf-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(memfd >= 0);
  const UniqueFd backing(linux_syscalls(), memfd);
  constexpr std::size_t size = 1 << 16;
  REQUIRE(::ftruncate(memfd, size) == 0);
  REQUIRE(::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0);
  udmabuf_create create{};
  create.memfd = static_cast<std::uint32_t>(memfd);
  create.flags = UDMABUF_FLAGS_CLOEXEC;
  create.size = size;
  const int fd = ::ioctl(dev, UDMABUF_CREATE, &create);
  if (fd < 0) {
    MESSAGE("skipped: UDMABUF_CREATE: " << std::error_code(errno, std::system_category()).message());
    return;
  }
  auto buf = DmaBuf::adopt(fd);
  CHECK(buf.size() == size);
  auto map = buf.map();
  {
    auto w = buf.cpu_access(map, cpu_write);
    w.bytes()[size - 1] = std::byte{0x33};
    w.finish();
  }
  auto r = buf.cpu_access(map, cpu_read);
  CHECK(r.bytes()[size - 1] == std::byte{0x33});
  r.finish();
}
#endif
