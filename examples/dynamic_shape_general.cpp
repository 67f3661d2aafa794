// The dynamic-shape flow (docs/c-interface.md#dynamic-shapes) with the general API: for every shape of the model's set, switch
// the input shape, give an image of that size, run, and print the shapes and the top-5 classes.
//
//   dynamic_shape_general MODEL        (RKNNXX_RUNTIME=host runs it on the CPU)
#include <rknnxx/core/format.hpp>  // fmt::print of attributes (not in the umbrella: it costs <fmt/format.h>)
#include <rknnxx/rknn.hpp>

#include "example_image.hpp"

int main(int argc, char** argv) try {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} MODEL\n", argv[0]);
    return 2;
  }
  auto ctx = rknnxx::Context::from_file(argv[1]);
  fmt::print("runtime {}: sdk {}, driver {}\n", ctx.runtime().path(), ctx.sdk_version().api, ctx.sdk_version().driver);
  for (std::size_t s = 0; s < ctx.shape_set()->num_shapes(); ++s) {
    const auto shape = ctx.set_input_shapes(s);  // validated, current attrs returned
    for (const auto& t : shape.inputs) fmt::print("input  {}\n", t.abi());
    for (const auto& t : shape.outputs) fmt::print("output {}\n", t.abi());
    const rknnxx::Dims d = shape.inputs[0].dims();  // [1, H, W, 3]
    const auto image = example::make_image(d[1], d[2]);
    ctx.set_inputs(rknnxx::nhwc_view(image.data(), {.n = 1, .c = 3, .h = d[1], .w = d[2]}));
    ctx.run();
    const auto outputs = ctx.outputs();  // float32; released at scope end
    example::print_top5(outputs["logits"].as<float>());
  }
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "error: {}\n", e.what());
  return 1;
}
