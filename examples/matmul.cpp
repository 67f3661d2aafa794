// A linear layer on the NPU's matmul API with rknnxx::MatMul (docs/matmul.md): one constant
// weight B [K, N] in float16, activations A [M, K] for several token counts M through one
// dynamic-shape context, each result checked against the CPU.
//
//   RKNNXX_RUNTIME=host ./matmul        # on a PC; on a board the vendor runtime is found first

#include <rknnxx/rknn.hpp>
#include <rknnxx/runtime/matmul.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

using namespace rknnxx;

int main() try {
  constexpr std::uint32_t K = 64, N = 32;
  const MatmulShape shapes[] = {{1, K, N}, {4, K, N}, {16, K, N}};
  auto layer = MatMul<Float16, Float16, float>::create(shapes);

  Mem a = layer.create_mem(Operand::a), b = layer.create_mem(Operand::b), c = layer.create_mem(Operand::c);
  std::vector<float> weights(K * N), activations(16 * K);
  for (std::size_t i = 0; i < weights.size(); ++i)
    weights[i] = static_cast<float>(Float16(std::sin(0.1f * static_cast<float>(i))));
  for (std::size_t i = 0; i < activations.size(); ++i)
    activations[i] = static_cast<float>(Float16(std::cos(0.07f * static_cast<float>(i))));
  {
    auto w = b.write();  // B normal: [K, N] row-major
    auto out = w.as<Float16>();
    for (std::size_t i = 0; i < weights.size(); ++i) out[i] = Float16(weights[i]);
  }

  double worst = 0;
  for (const MatmulShape& shape : shapes) {
    layer.set_shape(shape);
    {
      auto w = a.write();  // A normal: [M, K] row-major
      auto out = w.as<Float16>();
      for (std::size_t i = 0; i < std::size_t{shape.m} * K; ++i) out[i] = Float16(activations[i]);
    }
    layer.bind(a, b, c);
    layer.run();
    auto r = c.read();
    const auto result = r.as<float>();
    for (std::uint32_t m = 0; m < shape.m; ++m)
      for (std::uint32_t n = 0; n < N; ++n) {
        double want = 0;
        for (std::uint32_t k = 0; k < K; ++k) want += double{activations[m * K + k]} * weights[k * N + n];
        worst = std::fmax(worst, std::fabs(result[m * N + n] - want));
      }
    std::printf("M=%u K=%u N=%u: C[0][0] = %.5f\n", shape.m, K, N, static_cast<double>(result[0]));
  }
  std::printf("largest difference from the CPU: %.2g\n", worst);
  return worst < 1e-3 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
