// A custom operator written in C++ (docs/custom-operators.md): the model holds an operator the runtime
// lacks (rknnxx.test.ScaleShift, y = alpha * x + beta[c]; kept at conversion because the config lists it
// in "custom_ops"), and the application gives its computation as a lambda.
//
//   custom_op MODEL.hrknn          (tests/host_c/make_custom_op_model.py and custom_op.json make one)
#include <rknnxx/rknn.hpp>
#include <rknnxx/runtime/custom_op.hpp>

#include <cstdio>
#include <exception>
#include <vector>

using namespace rknnxx;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL\n", argv[0]);
    return 2;
  }
  try {
    Context ctx = Context::from_file(argv[1]);

    // Every ScaleShift node of the model runs this, on the thread that calls run().
    ctx.register_custom_op(CustomOp{
        "ScaleShift", [](std::span<const CustomTensor> in, std::span<CustomTensor> out, const CustomOpAttrs& attrs) {
          const float alpha = attrs.value<float>("alpha").value_or(1.0f);
          const std::vector<float> beta = attrs.values<float>("beta");
          const auto dims = in[0].dims();  // [N, C, H, W], dense
          const std::size_t plane = std::size_t{dims[2]} * dims[3];
          const auto x = in[0].data<float>();
          auto y = out[0].data<float>();
          for (std::size_t i = 0; i < x.size(); ++i)
            y[i] = alpha * x[i] + (beta.empty() ? 0.0f : beta[i / plane % beta.size()]);
        }});

    const TensorInfo input = ctx.input_info(0);  // NHWC as the runtime reports 4-D inputs
    std::vector<float> x(input.n_elems());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
    const std::uint32_t n = input.dims()[0], h = input.dims()[1], w = input.dims()[2], c = input.dims()[3];
    ctx.set_inputs(nchw_view(x.data(), {n, c, h, w}));
    ctx.run();

    auto out = ctx.outputs();
    const auto z = out[0].as<float>();
    std::printf("custom operator ScaleShift ran: z[0..3] = %g %g %g %g (of %zu values)\n", z[0], z[1], z[2], z[3],
                z.size());
    // Relu(2x + 1) on channel 0: x = -2, -1, 0, 1 give 0, 0, 1, 3.
    const bool right = z[0] == 0.0f && z[1] == 0.0f && z[2] == 1.0f && z[3] == 3.0f;
    if (!right) std::fprintf(stderr, "unexpected values\n");
    return right ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom_op: %s\n", e.what());
    return 1;
  }
}
