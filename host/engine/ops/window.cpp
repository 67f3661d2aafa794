// HannWindow, HammingWindow and BlackmanWindow (opset 17): a cosine-sum window of `size`
// points, w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), with N = size when periodic
// (the default) and size - 1 when symmetric. The size decides the output shape, so it must be
// a constant; the window is then computed while planning, in double, and stored in
// output_datatype (float32 by default; float16 and float64 too).

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <cmath>
#include <numbers>

namespace rknnxx::host {
namespace {

struct CosineSum {
  double a0, a1, a2;
};

template <const CosineSum& window> PreparedOp prepare_window(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::int32, DataType::int64});
  const auto size_values = constant_ints(ctx, 0, "window size");
  if (size_values.size() != 1) {
    ctx.fail("size must hold one value, given shape {}", shape_string(ctx.input(0).shape));
  }
  const int64_t size = size_values[0];
  // A window is a few thousand points; the bound keeps a corrupt size from allocating gigabytes.
  constexpr int64_t max_size = int64_t{1} << 24;
  if (size < 0 || size > max_size) {
    ctx.fail("size {} is outside 0 to {}", size, max_size);
  }
  const auto dtype = static_cast<DataType>(ctx.attr_int("output_datatype", static_cast<int64_t>(DataType::float32)));
  if (dtype != DataType::float32 && dtype != DataType::float16 && dtype != DataType::float64) {
    ctx.fail("output_datatype {} is not supported: float32, float16 or float64", dtype_name(dtype));
  }
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  const double period = static_cast<double>(periodic ? size : size - 1);
  Tensor out(dtype, {size});
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || is_float_bits_v<T>) {
      T* w = out.data<T>();
      for (int64_t n = 0; n < size; ++n) {
        // A one-point symmetric window has period 0: its single point is the peak (x = pi), 1, as numpy gives.
        const double x = period > 0 ? 2.0 * std::numbers::pi * static_cast<double>(n) / period : std::numbers::pi;
        const double v = window.a0 - window.a1 * std::cos(x) + window.a2 * std::cos(2.0 * x);
        if constexpr (is_float_bits_v<T>) {
          w[n] = narrow<T>(static_cast<float>(v));
        } else {
          w[n] = static_cast<T>(v);
        }
      }
    }
  });
  return constant_result(std::move(out));
}

constexpr CosineSum hann{0.5, 0.5, 0.0};
constexpr CosineSum hamming{25.0 / 46.0, 21.0 / 46.0, 0.0};
constexpr CosineSum blackman{0.42, 0.5, 0.08};

const OpRegistrar hann_window_op{"HannWindow", prepare_window<hann>};
const OpRegistrar hamming_window_op{"HammingWindow", prepare_window<hamming>};
const OpRegistrar blackman_window_op{"BlackmanWindow", prepare_window<blackman>};

}  // namespace
}  // namespace rknnxx::host
