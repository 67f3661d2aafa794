// The dynamic-shape flow (docs/c-interface.md#dynamic-shapes) with zero-copy memory: buffers allocated once at the largest
// shape, rebound on every shape switch, the image copied row by row into the w_stride-padded
// input and the float outputs read in place, cache syncs included.
//
//   dynamic_shape_zero_copy MODEL      (RKNNXX_RUNTIME=host runs it on the CPU)
#include <rknnxx/core/format.hpp>  // fmt::print of attributes (not in the umbrella: it costs <fmt/format.h>)
#include <rknnxx/rknn.hpp>

#include "example_image.hpp"

int main(int argc, char** argv) try {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} MODEL\n", argv[0]);
    return 2;
  }
  using rknnxx::BindAs, rknnxx::TensorType, rknnxx::TensorFormat;
  auto ctx = rknnxx::Context::from_file(argv[1]);
  fmt::print("runtime {}: sdk {}, driver {}\n", ctx.runtime().path(), ctx.sdk_version().api, ctx.sdk_version().driver);
  rknnxx::IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc),  // inputs: NHWC uint8
                       BindAs::type(TensorType::float32, TensorFormat::nchw));    // outputs: float32
  for (std::size_t s = 0; s < ctx.shape_set()->num_shapes(); ++s) {
    const auto shape = io.set_input_shapes(s);  // switch shapes and rebind
    for (const auto& t : shape.inputs) fmt::print("input  {}\n", io.bound_input(t.index()).abi());
    for (const auto& t : shape.outputs) fmt::print("output {}\n", io.bound_output(t.index()).abi());
    const rknnxx::Dims d = shape.inputs[0].dims();  // [1, H, W, 3]
    const auto image = example::make_image(d[1], d[2]);
    io.write("data", rknnxx::nhwc_view(image.data(), {.n = 1, .c = 3, .h = d[1], .w = d[2]}));  // w_stride rows
    io.run();
    const auto logits = io.output<float>("logits");  // synced from the device
    example::print_top5(logits.span());
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "error: {}\n", e.what());
  return 1;
}
