// Device buffers as runtime memory (include/rknnxx/device/runtime_memory.hpp, issue 17): a memfd and a
// dma-buf imported with rknn_create_mem_from_fd, bound through IoBinding for every shape of the dynamic-shape
// model, on the host runtime. This machine has no dma-heap, so the "dma-buf" is a memfd behind a syscall seam
// that passes every call to the kernel but records DMA_BUF_IOCTL_SYNC instead of issuing it: what is checked
// is that each access window brackets the runtime's sync with START and END in the window's direction.
#include "example_image.hpp"
#include "test_models.hpp"

#include <rknnxx/device/runtime_memory.hpp>
#include <rknnxx/runtime/io_binding.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace rknnxx;
namespace dev = rknnxx::device;

namespace {

class RecordingSyncs final : public dev::Syscalls {
public:
  std::vector<std::uint64_t> syncs;  // the flags of each DMA_BUF_IOCTL_SYNC, in order

  int open(const char* path, int flags) noexcept override { return real().open(path, flags); }
  int close(int fd) noexcept override { return real().close(fd); }
  int dup(int fd) noexcept override { return real().dup(fd); }
  int ioctl(int fd, std::uint32_t request, void* arg) noexcept override {
    if (request != dev::requests::dma_buf_sync.number) return real().ioctl(fd, request, arg);
    syncs.push_back(static_cast<const dev::abi::DmaBufSync*>(arg)->flags);
    return 0;
  }
  int mmap(std::size_t length, int prot, int flags, int fd, std::uint64_t offset, void** address) noexcept override {
    return real().mmap(length, prot, flags, fd, offset, address);
  }
  int munmap(void* address, std::size_t length) noexcept override { return real().munmap(address, length); }
  int memfd_create(const char* name, unsigned flags) noexcept override { return real().memfd_create(name, flags); }
  int ftruncate(int fd, std::uint64_t length) noexcept override { return real().ftruncate(fd, length); }
  int size_of(int fd, std::uint64_t* size) noexcept override { return real().size_of(fd, size); }
  int list_directory(const char* path, std::vector<std::string>* names) noexcept override {
    return real().list_directory(path, names);
  }

private:
  static dev::Syscalls& real() { return dev::linux_syscalls(); }
};

constexpr std::uint64_t start = dev::abi::dma_buf_sync_start, end = dev::abi::dma_buf_sync_end;
constexpr std::uint64_t sync_read = dev::abi::dma_buf_sync_read, sync_write = dev::abi::dma_buf_sync_write;

// Runs every shape of the dynamic-shape model with input and output in the given buffers; returns the logits
// of each shape.
template <class Buffer> std::vector<std::vector<float>> run_every_shape(Context& ctx, Buffer& in, Buffer& out) {
  auto in_map = in.map();
  auto out_map = out.map();
  Mem in_mem = dev::import_buffer(ctx, in, in_map);
  Mem out_mem = dev::import_buffer(ctx, out, out_map);
  CHECK(in_mem.origin() == MemOrigin::from_fd);
  IoBinding io(ctx);
  io.bind_input("data", in_mem, BindAs::type(TensorType::uint8, TensorFormat::nhwc));
  io.bind_output("logits", out_mem, BindAs::type(TensorType::float32, TensorFormat::nchw));
  std::vector<std::vector<float>> logits;
  for (std::size_t s = 0; s < ctx.shape_set()->num_shapes(); ++s) {
    const Dims d = io.set_input_shapes(s).inputs[0].dims();
    const auto image = example::make_image(d[1], d[2]);
    io.write("data", nhwc_view(image.data(), {.n = 1, .c = 3, .h = d[1], .w = d[2]}));
    io.run();
    const auto got = io.output<float>("logits");
    logits.emplace_back(got.begin(), got.end());
  }
  return logits;
}

std::uint64_t input_bytes(Context& ctx) {
  return ctx.input_info("data").with(TensorType::uint8, TensorFormat::nhwc).alloc_size();
}
std::uint64_t output_bytes(Context& ctx) {
  return ctx.output_info("logits").with(TensorType::float32, TensorFormat::nchw).alloc_size();
}

}  // namespace

TEST_CASE("import_buffer: a dma-buf's access windows bracket the runtime's sync with DMA_BUF_IOCTL_SYNC") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  const auto shapes = ctx.shape_set()->num_shapes();
  REQUIRE(shapes > 1);

  // The reference: the same buffers as memfds (no sync at all).
  auto in_memfd = dev::MemfdBuffer::allocate(input_bytes(ctx));
  auto out_memfd = dev::MemfdBuffer::allocate(output_bytes(ctx));
  const auto want = run_every_shape(ctx, in_memfd, out_memfd);

  RecordingSyncs sys;
  auto in = dev::DmaBuf::adopt(dev::MemfdBuffer::allocate(input_bytes(ctx)).release(), sys);
  auto out = dev::DmaBuf::adopt(dev::MemfdBuffer::allocate(output_bytes(ctx)).release(), sys);
  const auto got = run_every_shape(ctx, in, out);
  CHECK(got == want);  // same logits, every shape: the imported memory is the tensors' memory

  // Per shape: the input written in one window, the output read in one window.
  std::vector<std::uint64_t> expected;
  for (std::size_t s = 0; s < shapes; ++s)
    expected.insert(expected.end(), {start | sync_write, end | sync_write, start | sync_read, end | sync_read});
  CHECK(sys.syncs == expected);
}

TEST_CASE("import_buffer refuses a mapping of another buffer, an offset outside it and an empty buffer") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  auto a = dev::MemfdBuffer::allocate(4096);
  auto b = dev::MemfdBuffer::allocate(4096);
  auto a_map = a.map();
  auto b_map = b.map();
  CHECK_THROWS_WITH_AS((void)dev::import_buffer(ctx, a, b_map), doctest::Contains("not made from this memfd"), Error);
  CHECK_THROWS_WITH_AS((void)dev::import_buffer(ctx, a, a_map, 16, 8192), doctest::Contains("outside the 4096 bytes"),
                       Error);
  CHECK_THROWS_WITH_AS((void)dev::import_buffer(ctx, a, a_map, 4096, 16), doctest::Contains("past the end"), Error);
  Mem part = dev::import_buffer(ctx, a, a_map, 1024, 2048);
  CHECK(part.size() == 1024);
  auto gone = std::move(a);
  CHECK_THROWS_WITH_AS((void)dev::import_buffer(ctx, a, a_map), doctest::Contains("owns no file descriptor"), Error);
}
