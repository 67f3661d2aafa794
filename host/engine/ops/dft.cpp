// DFT (opsets 17 and 20): the discrete Fourier transform of real ([..., 1]) or complex ([..., 2])
// signals along an axis, forward or inverse (scaled by 1/n), optionally onesided (the first n/2 + 1
// frequencies) and at dft_length points (zero-padded or truncated; a constant). The result is
// complex, [..., 2]. DFT-17 takes the axis as an attribute (default 1), DFT-20 as a third input,
// a constant scalar (default -2, the last signal axis).
//
// A direct transform, O(n^2) per signal with a precomputed twiddle table (n entries): the signals
// of the models that use DFT (spectrogram front ends) are a few hundred points, where this costs
// about what the model's other layers do; an FFT (radix-2 with Bluestein for other lengths)
// would be the next step for long signals.

#include "../op_registry.hpp"
#include "constant_inputs.hpp"
#include "fourier.hpp"

#include <utility>
#include <vector>

namespace rknnxx::host {
namespace {

PreparedOp prepare_dft(OpContext& ctx) {
  const bool axis_input = ctx.opset() >= 20;
  ctx.expect_inputs(1, axis_input ? 3 : 2);
  ctx.expect_dtype(0, {DataType::float32, DataType::float64});
  const TensorInfo in = ctx.input(0);
  const auto rank = static_cast<int64_t>(in.shape.size());
  if (rank < 3 || (in.shape.back() != 1 && in.shape.back() != 2)) {
    ctx.fail("input '{}' has shape {}, expected [batch, signal..., 1 or 2]", ctx.input_name(0), shape_string(in.shape));
  }
  const bool complex_input = in.shape.back() == 2;
  int64_t given_axis = 1;
  if (axis_input) {
    if (ctx.attribute("axis") != nullptr) {
      ctx.fail("DFT-20 (opset {}) takes the axis as input 2, not as an attribute", ctx.opset());
    }
    given_axis = -2;
    if (ctx.has_input(2)) {
      const auto axes = constant_ints(ctx, 2, "axis");
      if (axes.size() != 1) {
        ctx.fail("input 2 (the axis) has {} values, expected one", axes.size());
      }
      given_axis = axes[0];
    }
  } else {
    given_axis = ctx.attr_int("axis", 1);
  }
  const int64_t axis = ctx.normalize_axis(given_axis, rank);
  if (axis == 0 || axis == rank - 1) {
    ctx.fail("axis {} is the batch or the real/imaginary axis; expected a signal axis", axis);
  }
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  if (onesided && complex_input) {
    ctx.fail("onesided=1 needs a real input ([..., 1])");
  }
  const int64_t signal = in.shape[static_cast<std::size_t>(axis)];
  int64_t length = signal;
  if (ctx.has_input(1)) {
    const auto given = constant_ints(ctx, 1, "dft_length");
    if (given.size() != 1 || given[0] < 1) {
      ctx.fail("dft_length must be one positive value");
    }
    length = given[0];
  }
  // The twiddle table and the O(n^2) work bound the length well below what a tensor may hold.
  constexpr int64_t max_length = int64_t{1} << 20;
  if (length > max_length) {
    ctx.fail("dft_length {} is beyond the {} points the direct transform takes", length, max_length);
  }
  const int64_t frequencies = onesided ? length / 2 + 1 : length;
  std::vector<int64_t> shape = in.shape;
  shape[static_cast<std::size_t>(axis)] = frequencies;
  shape.back() = 2;
  const int64_t outer = element_count(std::span(in.shape).first(static_cast<std::size_t>(axis)));
  const int64_t inner = element_count(std::span(in.shape).subspan(static_cast<std::size_t>(axis) + 1)) /
      std::max<int64_t>(1, in.shape.back());      // complex elements per signal step
  const int64_t used = std::min(signal, length);  // input points that enter the sum
  std::vector<double> twiddle = twiddle_table(length, inverse ? 1.0 : -1.0);
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.kernel = [=, twiddle = std::move(twiddle)](KernelContext& k) {
    auto run = [&]<class T>() {
      const T* x = k.input(0).data<T>();
      T* y = k.output(0).data<T>();
      const int64_t parts = complex_input ? 2 : 1;
      const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
      k.pool.parallel_for(
          outer * inner * frequencies, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, used)),
          [&](int64_t begin, int64_t end) {
            for (int64_t task = begin; task < end; ++task) {
              const int64_t f = task % frequencies;
              const int64_t line = task / frequencies;
              const int64_t o = line / inner;
              const int64_t i = line % inner;
              const auto [re, im] = frequency_sum(twiddle, length, f, used, [&](int64_t t) {
                const T* v = x + ((o * signal + t) * inner + i) * parts;
                return std::pair{static_cast<double>(v[0]), complex_input ? static_cast<double>(v[1]) : 0.0};
              });
              T* out = y + ((o * frequencies + f) * inner + i) * 2;
              out[0] = static_cast<T>(re * scale);
              out[1] = static_cast<T>(im * scale);
            }
          });
    };
    if (in.dtype == DataType::float64) {
      run.template operator()<double>();
    } else {
      run.template operator()<float>();
    }
  };
  return op;
}

const OpRegistrar dft_op{"DFT", prepare_dft};

}  // namespace
}  // namespace rknnxx::host
