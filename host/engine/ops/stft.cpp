// STFT and MelWeightMatrix (opset 17), the spectrogram front end next to DFT (dft.cpp).
//
// STFT: frames of frame_length points every frame_step points of each signal ([batch, length,
// 1 or 2]), each multiplied by the window (when given) and transformed like DFT: a direct
// transform with a precomputed twiddle table, O(frame_length) per output value.
// Output [batch, frames, bins, 2], bins = frame_length / 2 + 1 when onesided (the default).
//
// MelWeightMatrix: the [dft_length / 2 + 1, num_mel_bins] matrix of triangular mel filters,
// computed while planning from its constant scalar inputs exactly as the ONNX reference does
// (docs/conformance.md): num_mel_bins + 2 mel points spaced (high - low) / (num_mel_bins + 2)
// apart from the lower edge, each point's frequency bin floor((dft_length + 1) * hertz /
// sample_rate), filters rising from the left point to the centre and falling to the right.

#include "../op_registry.hpp"
#include "constant_inputs.hpp"
#include "fourier.hpp"

#include <cmath>
#include <numbers>
#include <vector>

namespace rknnxx::host {
namespace {

// One scalar constant integer input, or a failure naming it.
int64_t scalar_int(const OpContext& ctx, std::size_t i, std::string_view what) {
  const auto v = constant_ints(ctx, i, what);
  if (v.size() != 1) {
    ctx.fail("input {} (the {}) must hold one value, given shape {}", i, what, shape_string(ctx.input(i).shape));
  }
  return v[0];
}

// The twiddle table and the O(n^2) work bound the frame length well below what a tensor may hold
// (the same bound as DFT's).
constexpr int64_t max_frame_length = int64_t{1} << 20;

PreparedOp prepare_stft(OpContext& ctx) {
  ctx.expect_inputs(2, 4);
  ctx.expect_dtype(0, {DataType::float32, DataType::float64});
  const TensorInfo in = ctx.input(0);
  if (in.shape.size() != 3 || (in.shape[2] != 1 && in.shape[2] != 2)) {
    ctx.fail("signal '{}' has shape {}, expected [batch, length, 1 or 2]", ctx.input_name(0), shape_string(in.shape));
  }
  const bool complex_input = in.shape[2] == 2;
  const bool onesided = ctx.attr_int("onesided", 1) != 0;
  if (onesided && complex_input) {
    ctx.fail("onesided=1 needs a real signal ([batch, length, 1])");
  }
  const int64_t step = scalar_int(ctx, 1, "frame_step");
  if (step < 1) {
    ctx.fail("frame_step is {}, expected a positive value", step);
  }
  int64_t length = -1;
  const bool has_window = ctx.has_input(2);
  if (has_window) {
    ctx.expect_dtype(2, {in.dtype});
    if (ctx.input(2).shape.size() != 1) {
      ctx.fail("window '{}' has shape {}, expected one axis", ctx.input_name(2), shape_string(ctx.input(2).shape));
    }
    length = ctx.input(2).shape[0];
  }
  if (ctx.has_input(3)) {
    const int64_t given = scalar_int(ctx, 3, "frame_length");
    if (has_window && given != length) {
      ctx.fail("frame_length {} differs from the window's {} points", given, length);
    }
    length = given;
  }
  if (length < 0) {
    ctx.fail("neither a window nor frame_length gives the frame length");
  }
  const int64_t signal = in.shape[1];
  if (length < 1 || length > signal || length > max_frame_length) {
    ctx.fail("frame length {} is outside 1 to the signal's {} points (at most {})", length, signal, max_frame_length);
  }
  const int64_t frames = (signal - length) / step + 1;
  const int64_t bins = onesided ? length / 2 + 1 : length;
  const int64_t batch = in.shape[0];
  std::vector<double> twiddle = twiddle_table(length, -1.0);
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, {batch, frames, bins, 2}}};
  (void)element_count(op.outputs[0].shape);  // counted without wrapping before the kernel sizes its work
  op.kernel = [=, twiddle = std::move(twiddle)](KernelContext& k) {
    auto run = [&]<class T>() {
      const T* x = k.input(0).data<T>();
      const T* window = has_window ? k.input(2).data<T>() : nullptr;
      T* y = k.output(0).data<T>();
      const int64_t parts = complex_input ? 2 : 1;
      k.pool.parallel_for(batch * frames * bins, std::max<int64_t>(1, 4096 / length), [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
          const int64_t f = task % bins;
          const int64_t frame = task / bins;  // batch * frames + frame index
          const int64_t b = frame / frames;
          const T* v = x + (b * signal + (frame % frames) * step) * parts;
          const auto [re, im] = frequency_sum(twiddle, length, f, length, [&](int64_t t) {
            const double w = window != nullptr ? static_cast<double>(window[t]) : 1.0;
            return std::pair{static_cast<double>(v[t * parts]) * w,
                             complex_input ? static_cast<double>(v[t * parts + 1]) * w : 0.0};
          });
          y[task * 2] = static_cast<T>(re);
          y[task * 2 + 1] = static_cast<T>(im);
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

PreparedOp prepare_mel_weight_matrix(OpContext& ctx) {
  ctx.expect_inputs(5, 5);
  const int64_t mel_bins = scalar_int(ctx, 0, "num_mel_bins");
  const int64_t dft_length = scalar_int(ctx, 1, "dft_length");
  const int64_t sample_rate = scalar_int(ctx, 2, "sample_rate");
  const auto lower = constant_floats(ctx, 3, "lower_edge_hertz");
  const auto upper = constant_floats(ctx, 4, "upper_edge_hertz");
  if (lower.size() != 1 || upper.size() != 1) {
    ctx.fail("lower_edge_hertz and upper_edge_hertz must hold one value each");
  }
  // A filter bank is a few hundred by a few thousand; the bound keeps a corrupt size from allocating gigabytes.
  constexpr int64_t max_size = int64_t{1} << 20;
  if (mel_bins < 1 || mel_bins > max_size || dft_length < 1 || dft_length > max_size || sample_rate < 1) {
    ctx.fail("num_mel_bins {}, dft_length {} and sample_rate {} must be positive (sizes at most {})", mel_bins,
             dft_length, sample_rate, max_size);
  }
  if (!(lower[0] >= 0.0f) || !(upper[0] > lower[0])) {
    ctx.fail("the edges {} Hz and {} Hz must satisfy 0 <= lower < upper", lower[0], upper[0]);
  }
  const auto dtype = static_cast<DataType>(ctx.attr_int("output_datatype", static_cast<int64_t>(DataType::float32)));
  if (dtype != DataType::float32 && dtype != DataType::float16 && dtype != DataType::float64) {
    ctx.fail("output_datatype {} is not supported: float32, float16 or float64", dtype_name(dtype));
  }
  const int64_t spectrum_bins = dft_length / 2 + 1;
  auto mel = [](double hertz) { return 2595.0 * std::log10(1.0 + hertz / 700.0); };
  const double low_mel = mel(lower[0]), high_mel = mel(upper[0]);
  const double mel_step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> points(static_cast<std::size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hertz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * mel_step + low_mel) / 2595.0) - 1.0);
    points[static_cast<std::size_t>(i)] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hertz / static_cast<double>(sample_rate)));
  }
  std::vector<double> matrix(static_cast<std::size_t>(spectrum_bins * mel_bins), 0.0);
  auto set = [&](int64_t bin, int64_t filter, double v) {
    if (bin >= 0 && bin < spectrum_bins) {  // points beyond the spectrum (upper edge above sample_rate / 2) drop out
      matrix[static_cast<std::size_t>(bin * mel_bins + filter)] = v;
    }
  };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = points[static_cast<std::size_t>(i)], centre = points[static_cast<std::size_t>(i + 1)],
                  right = points[static_cast<std::size_t>(i + 2)];
    if (centre == left) {
      set(centre, i, 1.0);
    } else {
      for (int64_t j = left; j <= centre; ++j) {
        set(j, i, static_cast<double>(j - left) / static_cast<double>(centre - left));
      }
    }
    for (int64_t j = centre; j < right; ++j) {
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - centre));
    }
  }
  Tensor out(dtype, {spectrum_bins, mel_bins});
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || is_float_bits_v<T>) {
      T* w = out.data<T>();
      for (std::size_t i = 0; i < matrix.size(); ++i) {
        if constexpr (is_float_bits_v<T>) {
          w[i] = narrow<T>(static_cast<float>(matrix[i]));
        } else {
          w[i] = static_cast<T>(matrix[i]);
        }
      }
    }
  });
  return constant_result(std::move(out));
}

const OpRegistrar stft_op{"STFT", prepare_stft};
const OpRegistrar mel_weight_matrix_op{"MelWeightMatrix", prepare_mel_weight_matrix};

}  // namespace
}  // namespace rknnxx::host
