// NpuDevice, RknpuBuffer and RocketBuffer against the driver model (tests/device/driver_model.hpp), and the
// search through the real /dev where this machine has an NPU.
#include "driver_model.hpp"

#include <rknnxx/device/npu_device.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <system_error>

using namespace rknnxx::device;

namespace {
using model::contains;
using model::what_of;

// A board with a GPU render node first and the NPU after it, as on an RK3588.
void rk3588(model::Kernel& k) {
  k.add_drm("/dev/dri/renderD128", "panthor", 1, 2, 0);
  k.add_drm("/dev/dri/renderD129", "rknpu", 0, 9, 8);
  k.add_drm("/dev/dri/card0", "rockchip");
}
}  // namespace

TEST_CASE("find: render nodes by driver name, numerically ordered; other drivers are skipped with their name") {
  model::Kernel k;
  k.add_drm("/dev/dri/renderD10", "rknpu");
  k.add_drm("/dev/dri/renderD9", "rknpu");
  k.add_drm("/dev/dri/renderD128", "panfrost");
  k.add_drm("/dev/accel/accel0", "rocket", 0, 0, 1);
  k.add_drm("/dev/accel/accel1", "ivpu");
  const auto search = NpuDevice::find(k);
  REQUIRE(search.nodes.size() == 3);
  CHECK(search.nodes[0].path == "/dev/dri/renderD9");
  CHECK(search.nodes[1].path == "/dev/dri/renderD10");
  CHECK(search.nodes[2].path == "/dev/accel/accel0");
  CHECK(search.nodes[2].driver == NpuDriver::rocket);
  CHECK(std::count_if(search.skipped.begin(), search.skipped.end(),
                      [](const std::string& s) { return contains(s, "driver \"panfrost\""); }) == 1);
  CHECK(std::count_if(search.skipped.begin(), search.skipped.end(),
                      [](const std::string& s) { return contains(s, "driver \"ivpu\""); }) == 1);
  CHECK(k.open_files() == 0);  // probing closes what it opened
  CHECK(k.violations.empty());
}

TEST_CASE("find: the older /dev/rknpu misc node; nodes that cannot be opened are listed with the reason") {
  model::Kernel k;
  k.add_node("/dev/rknpu", {model::Node::Kind::misc, "rknpu"});
  k.add_drm("/dev/dri/renderD128", "rknpu");
  k.fail("open", EACCES);  // the render node: no permission
  const auto search = NpuDevice::find(k);
  REQUIRE(search.nodes.size() == 1);
  CHECK(search.nodes[0].driver == NpuDriver::rknpu_misc);
  REQUIRE(search.skipped.size() == 1);
  CHECK(contains(search.skipped[0], "/dev/dri/renderD128: "));
  CHECK(contains(search.skipped[0], std::error_code(EACCES, std::system_category()).message()));
}

TEST_CASE("open: no NPU is device_unavailable, naming what was searched and skipped") {
  model::Kernel k;
  k.add_drm("/dev/dri/renderD128", "i915");
  try {
    (void)NpuDevice::open(k);
    FAIL("expected no NPU");
  } catch (const rknnxx::Error& e) {
    CHECK(e.errc() == rknnxx::Errc::device_unavailable);
    const std::string w = e.what();
    CHECK(contains(w, "/dev/dri/renderD*"));
    CHECK(contains(w, "/dev/rknpu"));
    CHECK(contains(w, "/dev/accel/accel*"));
    CHECK(contains(w, "renderD128: driver \"i915\""));
  }
}

TEST_CASE("info: what the rknpu driver tells through the action ioctl") {
  model::Kernel k;
  rk3588(k);
  const auto npu = NpuDevice::open(k);
  CHECK(npu.path() == "/dev/dri/renderD129");
  const auto info = npu.info();
  CHECK(info.driver == NpuDriver::rknpu_drm);
  CHECK(info.driver_version == "0.9.8");
  CHECK(info.driver_version_code == 908u);
  CHECK(info.hw_version == 0x46495245u);
  CHECK(info.iommu_enabled == true);
  CHECK(info.sram_bytes == 956u * 1024);
  k.node("/dev/dri/renderD129").knows_sram = false;  // an older driver: EINVAL is "not told", not an error
  CHECK_FALSE(npu.info().sram_bytes.has_value());
  k.fail("DRM_IOCTL_RKNPU_ACTION", ENOTTY);
  const auto w = what_of([&] { (void)npu.info(); });
  CHECK(contains(w, "ioctl DRM_IOCTL_RKNPU_ACTION: /dev/dri/renderD129: "));
  CHECK(contains(w, std::error_code(ENOTTY, std::system_category()).message()));
  k.fail("DRM_IOCTL_RKNPU_ACTION", EINTR, 3);
  CHECK(npu.action(abi::rknpu_get_drv_version) == 908u);
}

TEST_CASE("rknpu buffers: create, map through MEM_MAP, sync a cacheable buffer, export, destroy") {
  model::Kernel k;
  rk3588(k);
  {
    const auto npu = NpuDevice::open(k);
    auto buf = npu.allocate_rknpu(5000);
    CHECK(k.last_mem_create_size == 48);
    CHECK(buf.size() == 8192);  // page-aligned by the driver
    CHECK(buf.dma_address() != 0);
    CHECK(buf.object_address() != 0);
    auto map = buf.map();
    {
      auto w = buf.cpu_access(map, cpu_write);
      std::fill(w.bytes().begin(), w.bytes().end(), std::byte{0x42});
    }
    { const auto r = buf.cpu_access(map, cpu_read); }
    CHECK(k.rknpu_syncs == std::vector<std::uint32_t>{abi::rknpu_mem_sync_to_device, abi::rknpu_mem_sync_from_device});

    auto dmabuf = buf.export_dma_buf();  // PRIME: the same memory as a dma-buf
    CHECK(dmabuf.size() == 8192);
    auto view = dmabuf.map();
    CHECK(dmabuf.cpu_access(view, cpu_read).bytes()[8191] == std::byte{0x42});

    auto uncached = npu.allocate_rknpu(4096, abi::rknpu_mem_non_contiguous);
    auto um = uncached.map();
    { auto w = uncached.cpu_access(um, cpu_write); }
    CHECK(k.rknpu_syncs.size() == 2);  // an uncached buffer needs no MEM_SYNC
    CHECK(contains(what_of([&] { (void)uncached.cpu_access(map, cpu_write); }), "not made from this buffer"));
    CHECK(k.live_gems() == 2);
  }
  CHECK(k.live_gems() == 0);  // MEM_DESTROY with the right handle and obj_addr
  CHECK(k.open_files() == 0);
  CHECK(k.mappings() == 0);
  CHECK(k.violations.empty());
}

TEST_CASE("rknpu buffers outlive the device; destroy() reports a failure") {
  model::Kernel k;
  rk3588(k);
  RknpuBuffer buf;
  {
    const auto npu = NpuDevice::open(k);
    buf = npu.allocate_rknpu(4096);
  }
  CHECK(k.open_files() == 1);  // the node stays open for the buffer
  k.fail("DRM_IOCTL_RKNPU_MEM_DESTROY", EFAULT);
  CHECK(contains(what_of([&] { buf.destroy(); }), "ioctl DRM_IOCTL_RKNPU_MEM_DESTROY: /dev/dri/renderD129"));
  CHECK_FALSE(buf.valid());
  CHECK(k.open_files() == 0);
}

TEST_CASE("rknpu before 0.9.7: MEM_CREATE with the 40-byte struct's request") {
  model::Kernel k;
  rk3588(k);
  k.node("/dev/dri/renderD129").rknpu_version = 906;
  const auto npu = NpuDevice::open(k);
  auto buf = npu.allocate_rknpu(4096);
  CHECK(k.last_mem_create_size == 40);
}

TEST_CASE("rknpu misc node: 'r' requests, the driver's dma-buf fd mapped directly") {
  model::Kernel k;
  k.add_node("/dev/rknpu", {model::Node::Kind::misc, "rknpu"});
  {
    const auto npu = NpuDevice::open(k);
    CHECK(npu.driver() == NpuDriver::rknpu_misc);
    const auto info = npu.info();
    CHECK(info.driver_version == "0.9.8");
    CHECK(info.iommu_enabled == true);
    auto buf = npu.allocate_rknpu(4096);
    auto map = buf.map();
    {
      auto w = buf.cpu_access(map, cpu_write);
      w.bytes()[0] = std::byte{9};
    }
    CHECK(k.rknpu_syncs == std::vector<std::uint32_t>{abi::rknpu_mem_sync_to_device});
    auto exported = buf.export_dma_buf();
    auto m2 = exported.map();
    CHECK(exported.cpu_access(m2, cpu_read).bytes()[0] == std::byte{9});
  }
  CHECK(k.live_gems() == 0);
  CHECK(k.open_files() == 0);
  CHECK(k.violations.empty());
}

TEST_CASE("rocket: create, PREP_BO before and FINI_BO after a write, export, GEM_CLOSE") {
  model::Kernel k;
  k.add_drm("/dev/accel/accel0", "rocket", 0, 0, 1);
  {
    const auto npu = NpuDevice::open(k);
    CHECK(npu.driver() == NpuDriver::rocket);
    const auto info = npu.info();
    CHECK(info.driver_version == "0.0.1");
    CHECK_FALSE(info.driver_version_code.has_value());  // rocket has no action ioctl
    CHECK(contains(what_of([&] { (void)npu.action(abi::rknpu_get_drv_version); }), "rocket node"));
    CHECK(contains(what_of([&] { (void)npu.allocate_rknpu(4096); }), "rocket node"));
    const auto calls = k.calls();
    CHECK(contains(what_of([&] { (void)npu.allocate_rocket(std::uint64_t{UINT32_MAX} + 1); }), "32-bit"));
    CHECK(contains(what_of([&] { (void)npu.allocate_rocket(0); }), "0 bytes"));
    CHECK(k.calls() == calls);

    auto buf = npu.allocate_rocket(100);
    auto map = buf.map();
    {
      auto other = npu.allocate_rocket(100);
      auto other_map = other.map();
      CHECK(contains(what_of([&] { (void)buf.cpu_access(other_map, cpu_write); }), "not made from this buffer"));
    }
    { auto w = buf.cpu_access(map, cpu_write); }
    { auto r = buf.cpu_access(map, cpu_read); }
    auto exported = buf.export_dma_buf();
    CHECK(exported.valid());
    k.fail("DRM_IOCTL_ROCKET_PREP_BO", ETIMEDOUT);
    CHECK(contains(what_of([&] { (void)buf.cpu_access(map, cpu_read); }), "ioctl DRM_IOCTL_ROCKET_PREP_BO"));
  }
  CHECK(k.rocket_calls == std::vector<std::string>{"create", "create", "close", "prep", "fini", "prep", "close"});
  CHECK(k.live_gems() == 0);
  CHECK(k.open_files() == 0);
  CHECK(k.violations.empty());
}

TEST_CASE("rknpu allocation failure: ENOMEM named, nothing leaked") {
  model::Kernel k;
  rk3588(k);
  const auto npu = NpuDevice::open(k);
  k.fail("DRM_IOCTL_RKNPU_MEM_CREATE", ENOMEM);
  const auto w = what_of([&] { (void)npu.allocate_rknpu(1 << 20); });
  CHECK(contains(w, "ioctl DRM_IOCTL_RKNPU_MEM_CREATE: /dev/dri/renderD129: "));
  CHECK(k.live_gems() == 0);
  k.fail("DRM_IOCTL_RKNPU_MEM_MAP", EINVAL);  // created, then MEM_MAP fails: the object is destroyed again
  CHECK(contains(what_of([&] { (void)npu.allocate_rknpu(4096); }), "ioctl DRM_IOCTL_RKNPU_MEM_MAP"));
  CHECK(k.live_gems() == 0);
  const auto calls = k.calls();
  CHECK(contains(what_of([&] { (void)npu.allocate_rknpu(0); }), "0 bytes"));
  CHECK(k.calls() == calls);
}

// ---- through the real /dev ----
TEST_CASE("real: the NPU of this machine, if it has one") {
  const auto search = NpuDevice::find();
  for (const auto& s : search.skipped) MESSAGE("passed over " << s);
  if (search.nodes.empty()) {
    MESSAGE("skipped: no rknpu or rocket node on this machine (a PC, or a board without the driver)");
    return;
  }
  const auto npu = NpuDevice::open(search.nodes.front());
  const auto info = npu.info();
  MESSAGE("NPU " << npu.path() << ": " << driver_name(info.driver) << " " << info.driver_version);
  CHECK_FALSE(info.driver_version.empty());
}
