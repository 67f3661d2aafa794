#pragma once
// The kernel interfaces the device layer speaks, declared by us from the public facts in docs/device.md:
// the ioctl request encoding, the argument structs and the request numbers of dma-heap, dma-buf, DRM core,
// the Rockchip rknpu driver (DRM render node and the older /dev/rknpu misc node) and the mainline "rocket"
// accel driver. Every struct is pinned by size and field offsets and every request by its number, for LP64
// (x86-64, aarch64) and for 32-bit ARM: a wrong number would reach a different ioctl of the driver.

#if !defined(__linux__)
#error "rknnxx/device/ is Linux only: the NPU, dma-heap and dma-buf interfaces are Linux kernel interfaces"
#endif
// The generic ioctl encoding below (2 direction bits, 14 size bits) is that of x86, ARM, arm64 and RISC-V.
#if defined(__powerpc__) || defined(__mips__) || defined(__sparc__) || defined(__alpha__)
#error "rknnxx/device/ioctl.hpp encodes ioctl requests the generic way; this architecture uses another encoding"
#endif

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <rknnxx/device/syscalls.hpp>

namespace rknnxx::device {

namespace ioc {
// Direction bits, as seen from user space (docs/device.md#request-encoding).
inline constexpr std::uint32_t none = 0, write = 1, read = 2;
inline constexpr std::uint32_t max_size = (1u << 14) - 1;

// The generic encoding: direction in bits 30-31, argument size in 16-29, type (magic) in 8-15, number in 0-7.
// Not constexpr-callable with a size that does not fit: compilation stops at the request that is wrong.
[[nodiscard]] consteval std::uint32_t encode(std::uint32_t direction, char type, std::uint32_t nr, std::size_t size) {
  if (size > max_size || nr > 0xff || direction > 3) throw "ioctl argument size, number or direction out of range";
  return (direction << 30) | (static_cast<std::uint32_t>(size) << 16) |
      (static_cast<std::uint32_t>(static_cast<unsigned char>(type)) << 8) | nr;
}
template <class Arg> [[nodiscard]] consteval std::uint32_t iow(char type, std::uint32_t nr) {
  return encode(write, type, nr, sizeof(Arg));
}
template <class Arg> [[nodiscard]] consteval std::uint32_t iowr(char type, std::uint32_t nr) {
  return encode(read | write, type, nr, sizeof(Arg));
}
[[nodiscard]] constexpr std::uint32_t size_of(std::uint32_t request) { return (request >> 16) & max_size; }
}  // namespace ioc

namespace abi {

// ---- dma-heap (docs/device.md#dma-heap) ----
struct DmaHeapAllocationData {
  alignas(8) std::uint64_t len;         // in: bytes
  std::uint32_t fd;                     // out: the new dma-buf
  std::uint32_t fd_flags;               // in: O_CLOEXEC and the access mode only
  alignas(8) std::uint64_t heap_flags;  // in: none are defined, must be 0
};

// ---- dma-buf CPU access (docs/device.md#dma-buf-sync) ----
struct DmaBufSync {
  alignas(8) std::uint64_t flags;
};
inline constexpr std::uint64_t dma_buf_sync_read = 1, dma_buf_sync_write = 2, dma_buf_sync_rw = 3;
inline constexpr std::uint64_t dma_buf_sync_start = 0, dma_buf_sync_end = 4;

// ---- DRM core (docs/device.md#drm-core) ----
// The one struct here with pointers and size_t: its size differs between LP64 and ILP32 (the kernel
// converts a 32-bit caller's copy on a 64-bit kernel).
struct DrmVersion {
  int version_major;
  int version_minor;
  int version_patchlevel;
  std::size_t name_len;  // in: room at name; out: length of the driver's name
  char* name;
  std::size_t date_len;
  char* date;
  std::size_t desc_len;
  char* desc;
};
struct DrmGemClose {
  std::uint32_t handle;
  std::uint32_t pad;
};
struct DrmPrimeHandle {
  std::uint32_t handle;
  std::uint32_t flags;  // O_CLOEXEC | O_RDWR for the exported fd
  std::int32_t fd;
};

// ---- Rockchip rknpu (docs/device.md#rknpu) ----
struct RknpuAction {
  std::uint32_t flags;  // the action code
  std::uint32_t value;  // argument in, result out
};
struct RknpuMemCreate {
  std::uint32_t handle;                // DRM: GEM handle out; misc node: dma-buf fd out (in: an fd to import, or 0)
  std::uint32_t flags;                 // rknpu_mem_* flags
  alignas(8) std::uint64_t size;       // in: bytes; out: page-aligned
  alignas(8) std::uint64_t obj_addr;   // out: the driver's opaque object token
  alignas(8) std::uint64_t dma_addr;   // out: the address the NPU sees
  alignas(8) std::uint64_t sram_size;  // in: SRAM wanted; out: granted
  std::int32_t iommu_domain_id;        // 0.9.7 and later; drivers before read only the first 40 bytes
  std::uint32_t core_mask;
};
// Drivers up to 0.9.6 declare the struct without the last two fields.
inline constexpr std::size_t rknpu_mem_create_legacy_size = 40;
struct RknpuMemMap {
  std::uint32_t handle;
  std::uint32_t reserved;
  alignas(8) std::uint64_t offset;  // out: where mmap() on the device fd finds the buffer
};
struct RknpuMemDestroy {
  std::uint32_t handle;
  std::uint32_t reserved;
  alignas(8) std::uint64_t obj_addr;
};
struct RknpuMemSync {
  std::uint32_t flags;  // rknpu_mem_sync_*
  std::uint32_t reserved;
  alignas(8) std::uint64_t obj_addr;
  alignas(8) std::uint64_t offset;
  alignas(8) std::uint64_t size;
};
// Action codes (RknpuAction::flags).
inline constexpr std::uint32_t rknpu_get_hw_version = 0, rknpu_get_drv_version = 1, rknpu_get_freq = 2,
                               rknpu_get_iommu_en = 18, rknpu_get_total_sram_size = 22, rknpu_get_free_sram_size = 23;
// Memory flags (RknpuMemCreate::flags).
inline constexpr std::uint32_t rknpu_mem_contiguous = 0, rknpu_mem_non_contiguous = 1u << 0,
                               rknpu_mem_cacheable = 1u << 1, rknpu_mem_write_combine = 1u << 2,
                               rknpu_mem_kernel_mapping = 1u << 3, rknpu_mem_iommu = 1u << 4,
                               rknpu_mem_zeroing = 1u << 5, rknpu_mem_dma32 = 1u << 7,
                               rknpu_mem_try_alloc_sram = 1u << 8;
// Sync directions (RknpuMemSync::flags).
inline constexpr std::uint32_t rknpu_mem_sync_to_device = 1, rknpu_mem_sync_from_device = 2;
// The driver version as a number: major * 10000 + minor * 100 + patch (0.9.8 is 908).
[[nodiscard]] constexpr std::uint32_t rknpu_version_code(std::uint32_t major, std::uint32_t minor,
                                                         std::uint32_t patch) {
  return major * 10000 + minor * 100 + patch;
}

// ---- mainline rocket accel driver, Linux 6.18+ (docs/device.md#rocket) ----
struct RocketCreateBo {
  std::uint32_t size;                    // in: bytes (32 bits in this interface)
  std::uint32_t handle;                  // out: GEM handle
  alignas(8) std::uint64_t dma_address;  // out: the NPU's address, private to this open file
  alignas(8) std::uint64_t offset;       // out: where mmap() on the device fd finds the buffer
};
struct RocketPrepBo {
  std::uint32_t handle;
  std::uint32_t reserved;              // must be 0
  alignas(8) std::int64_t timeout_ns;  // absolute CLOCK_MONOTONIC deadline
};
struct RocketFiniBo {
  std::uint32_t handle;
  std::uint32_t reserved;  // must be 0
};

}  // namespace abi

namespace requests {
inline constexpr Request dma_heap_alloc{ioc::iowr<abi::DmaHeapAllocationData>('H', 0x00), "DMA_HEAP_IOCTL_ALLOC"};
inline constexpr Request dma_buf_sync{ioc::iow<abi::DmaBufSync>('b', 0x00), "DMA_BUF_IOCTL_SYNC"};

inline constexpr Request drm_version{ioc::iowr<abi::DrmVersion>('d', 0x00), "DRM_IOCTL_VERSION"};
inline constexpr Request drm_gem_close{ioc::iow<abi::DrmGemClose>('d', 0x09), "DRM_IOCTL_GEM_CLOSE"};
inline constexpr Request drm_prime_handle_to_fd{ioc::iowr<abi::DrmPrimeHandle>('d', 0x2d),
                                                "DRM_IOCTL_PRIME_HANDLE_TO_FD"};

// DRM driver ioctls start at DRM_COMMAND_BASE (0x40); the misc node numbers the same calls from 0 with 'r'.
inline constexpr std::uint32_t drm_command_base = 0x40;
inline constexpr Request rknpu_action{ioc::iowr<abi::RknpuAction>('d', drm_command_base + 0), "DRM_IOCTL_RKNPU_ACTION"};
inline constexpr Request rknpu_mem_create{ioc::iowr<abi::RknpuMemCreate>('d', drm_command_base + 2),
                                          "DRM_IOCTL_RKNPU_MEM_CREATE"};
inline constexpr Request rknpu_mem_create_legacy{
    ioc::encode(ioc::read | ioc::write, 'd', drm_command_base + 2, abi::rknpu_mem_create_legacy_size),
    "DRM_IOCTL_RKNPU_MEM_CREATE"};
inline constexpr Request rknpu_mem_map{ioc::iowr<abi::RknpuMemMap>('d', drm_command_base + 3),
                                       "DRM_IOCTL_RKNPU_MEM_MAP"};
inline constexpr Request rknpu_mem_destroy{ioc::iowr<abi::RknpuMemDestroy>('d', drm_command_base + 4),
                                           "DRM_IOCTL_RKNPU_MEM_DESTROY"};
inline constexpr Request rknpu_mem_sync{ioc::iowr<abi::RknpuMemSync>('d', drm_command_base + 5),
                                        "DRM_IOCTL_RKNPU_MEM_SYNC"};

inline constexpr Request rknpu_misc_action{ioc::iowr<abi::RknpuAction>('r', 0), "IOCTL_RKNPU_ACTION"};
inline constexpr Request rknpu_misc_mem_create{ioc::iowr<abi::RknpuMemCreate>('r', 2), "IOCTL_RKNPU_MEM_CREATE"};
inline constexpr Request rknpu_misc_mem_create_legacy{
    ioc::encode(ioc::read | ioc::write, 'r', 2, abi::rknpu_mem_create_legacy_size), "IOCTL_RKNPU_MEM_CREATE"};
inline constexpr Request rknpu_misc_mem_destroy{ioc::iowr<abi::RknpuMemDestroy>('r', 4), "IOCTL_RKNPU_MEM_DESTROY"};
inline constexpr Request rknpu_misc_mem_sync{ioc::iowr<abi::RknpuMemSync>('r', 5), "IOCTL_RKNPU_MEM_SYNC"};

inline constexpr Request rocket_create_bo{ioc::iowr<abi::RocketCreateBo>('d', drm_command_base + 0),
                                          "DRM_IOCTL_ROCKET_CREATE_BO"};
inline constexpr Request rocket_prep_bo{ioc::iow<abi::RocketPrepBo>('d', drm_command_base + 2),
                                        "DRM_IOCTL_ROCKET_PREP_BO"};
inline constexpr Request rocket_fini_bo{ioc::iow<abi::RocketFiniBo>('d', drm_command_base + 3),
                                        "DRM_IOCTL_ROCKET_FINI_BO"};
}  // namespace requests

// ---- pins (docs/device.md#requests): sizes, offsets and numbers ----
namespace detail::pins {
using namespace abi;
// Fixed-width fields with explicit 8-byte alignment of the 64-bit ones: identical layout on LP64 and on
// 32-bit ARM (and on i386, where a plain uint64_t would be 4-aligned), hence identical numbers.
static_assert(sizeof(DmaHeapAllocationData) == 24 && offsetof(DmaHeapAllocationData, fd) == 8 &&
              offsetof(DmaHeapAllocationData, fd_flags) == 12 && offsetof(DmaHeapAllocationData, heap_flags) == 16);
static_assert(sizeof(DmaBufSync) == 8);
static_assert(sizeof(DrmGemClose) == 8 && sizeof(DrmPrimeHandle) == 12 && offsetof(DrmPrimeHandle, fd) == 8);
static_assert(sizeof(RknpuAction) == 8 && offsetof(RknpuAction, value) == 4);
static_assert(sizeof(RknpuMemCreate) == 48 && offsetof(RknpuMemCreate, size) == 8 &&
              offsetof(RknpuMemCreate, obj_addr) == 16 && offsetof(RknpuMemCreate, dma_addr) == 24 &&
              offsetof(RknpuMemCreate, sram_size) == 32 && offsetof(RknpuMemCreate, iommu_domain_id) == 40 &&
              offsetof(RknpuMemCreate, core_mask) == 44);
static_assert(offsetof(RknpuMemCreate, iommu_domain_id) == rknpu_mem_create_legacy_size);
static_assert(sizeof(RknpuMemMap) == 16 && offsetof(RknpuMemMap, offset) == 8);
static_assert(sizeof(RknpuMemDestroy) == 16 && offsetof(RknpuMemDestroy, obj_addr) == 8);
static_assert(sizeof(RknpuMemSync) == 32 && offsetof(RknpuMemSync, obj_addr) == 8 &&
              offsetof(RknpuMemSync, offset) == 16 && offsetof(RknpuMemSync, size) == 24);
static_assert(sizeof(RocketCreateBo) == 24 && offsetof(RocketCreateBo, handle) == 4 &&
              offsetof(RocketCreateBo, dma_address) == 8 && offsetof(RocketCreateBo, offset) == 16);
static_assert(sizeof(RocketPrepBo) == 16 && offsetof(RocketPrepBo, timeout_ns) == 8);
static_assert(sizeof(RocketFiniBo) == 8);

// The same numbers on LP64 and ILP32 (fixed-width layouts).
static_assert(requests::dma_heap_alloc.number == 0xC0184800u);
static_assert(requests::dma_buf_sync.number == 0x40086200u);
static_assert(requests::drm_gem_close.number == 0x40086409u);
static_assert(requests::drm_prime_handle_to_fd.number == 0xC00C642Du);
static_assert(requests::rknpu_action.number == 0xC0086440u);
static_assert(requests::rknpu_mem_create.number == 0xC0306442u);
static_assert(requests::rknpu_mem_create_legacy.number == 0xC0286442u);
static_assert(requests::rknpu_mem_map.number == 0xC0106443u);
static_assert(requests::rknpu_mem_destroy.number == 0xC0106444u);
static_assert(requests::rknpu_mem_sync.number == 0xC0206445u);
static_assert(requests::rknpu_misc_action.number == 0xC0087200u);
static_assert(requests::rknpu_misc_mem_create.number == 0xC0307202u);
static_assert(requests::rknpu_misc_mem_create_legacy.number == 0xC0287202u);
static_assert(requests::rknpu_misc_mem_destroy.number == 0xC0107204u);
static_assert(requests::rknpu_misc_mem_sync.number == 0xC0207205u);
static_assert(requests::rocket_create_bo.number == 0xC0186440u);
static_assert(requests::rocket_prep_bo.number == 0x40106442u);
static_assert(requests::rocket_fini_bo.number == 0x40086443u);

// DRM_IOCTL_VERSION follows the ABI's pointer and size_t width.
#if UINTPTR_MAX == UINT64_MAX
static_assert(sizeof(DrmVersion) == 64 && offsetof(DrmVersion, name_len) == 16 && offsetof(DrmVersion, name) == 24 &&
              offsetof(DrmVersion, date_len) == 32 && offsetof(DrmVersion, desc) == 56);
static_assert(requests::drm_version.number == 0xC0406400u);
#elif UINTPTR_MAX == UINT32_MAX
static_assert(sizeof(DrmVersion) == 36 && offsetof(DrmVersion, name_len) == 12 && offsetof(DrmVersion, name) == 16 &&
              offsetof(DrmVersion, date_len) == 20 && offsetof(DrmVersion, desc) == 32);
static_assert(requests::drm_version.number == 0xC0246400u);
#else
#error "DRM_IOCTL_VERSION is pinned for 32- and 64-bit pointers only"
#endif
}  // namespace detail::pins

}  // namespace rknnxx::device
