// Zero-copy I/O in memory the application owns (docs/device.md#a-camera-rga-or-mpp-buffer-reaching-the-npu):
// the input and output buffers come from a dma-heap where the machine has one (a board) and from memfd
// where it does not (a PC), are imported into the runtime with rknn_create_mem_from_fd, and are bound with
// IoBinding for every shape of a dynamic-shape model. Each write and read goes through an access window that does the kernel's
// dma-buf sync and the runtime's cache sync. A camera, RGA or decoder buffer (a dma-buf fd) takes the place
// of the allocation: DmaBuf::adopt(fd).
//
//   dmabuf_zero_copy MODEL      (RKNNXX_RUNTIME=host runs it on the CPU)
#include <rknnxx/device/runtime_memory.hpp>
#include <rknnxx/core/format.hpp>  // fmt::print of attributes (not in the umbrella: it costs <fmt/format.h>)
#include <rknnxx/rknn.hpp>

#include "example_image.hpp"

#include <variant>

namespace {

// A dma-buf from the "system" heap, or a memfd; mapped; imported as runtime memory. The buffer and the
// mapping must outlive the Mem: the struct keeps the three together, in that order.
struct SharedBuffer {
  std::variant<rknnxx::device::DmaBuf, rknnxx::device::MemfdBuffer> buffer;
  rknnxx::device::Mapping mapping;
  rknnxx::Mem mem;

  SharedBuffer(rknnxx::Context& ctx, std::uint64_t bytes) : buffer(rknnxx::device::allocate_dma_or_memfd(bytes)) {
    std::visit(
        [&](auto& b) {
          mapping = b.map();
          mem = rknnxx::device::import_buffer(ctx, b, mapping);
          fmt::print("{} bytes from {} (fd {})\n", bytes, rknnxx::device::kind_name(b.kind), b.fd());
        },
        buffer);
  }
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} MODEL\n", argv[0]);
    return 2;
  }
  using rknnxx::BindAs, rknnxx::TensorType, rknnxx::TensorFormat;
  auto ctx = rknnxx::Context::from_file(argv[1]);
  const auto as_input = BindAs::type(TensorType::uint8, TensorFormat::nhwc);
  const auto as_output = BindAs::type(TensorType::float32, TensorFormat::nchw);
  // Before any shape switch the attributes describe the largest shape of the set: the size to allocate.
  SharedBuffer input(ctx, ctx.input_info("data").with(TensorType::uint8, TensorFormat::nhwc).alloc_size());
  SharedBuffer output(ctx, ctx.output_info("logits").with(TensorType::float32, TensorFormat::nchw).alloc_size());

  rknnxx::IoBinding io(ctx);
  io.bind_input("data", input.mem, as_input);
  io.bind_output("logits", output.mem, as_output);
  for (std::size_t s = 0; s < ctx.shape_set()->num_shapes(); ++s) {
    const auto shape = io.set_input_shapes(s);      // switch shapes; the same buffers are rebound
    const rknnxx::Dims d = shape.inputs[0].dims();  // [1, H, W, 3]
    fmt::print("shape {}: input {}\n", s, io.bound_input(0).abi());
    const auto image = example::make_image(d[1], d[2]);
    io.write("data", rknnxx::nhwc_view(image.data(), {.n = 1, .c = 3, .h = d[1], .w = d[2]}));
    io.run();
    example::print_top5(io.output<float>("logits").span());
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "error: {}\n", e.what());
  return 1;
}
