// MaxPool, AveragePool (count_include_pad, ceil_mode), GlobalAveragePool and GlobalMaxPool, float32.

#include "../op_registry.hpp"
#include "spatial.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace rknnxx::host {
namespace {

struct PoolPlan {
  WindowGeometry g;
  bool count_include_pad = false;
};

// indices (optional): the flat index of each maximum in the whole input, row-major
// (storage_order 0) or with h and w swapped (storage_order 1); the first maximum wins.
template <class T> void max_pool_plane(const WindowGeometry& g, const T* x, T* y, int64_t* indices,
                                       int64_t plane_offset, bool column_major) {
  if (indices == nullptr) {
    // The common case (no indices): the window clipped to the input once per row and column,
    // no bounds test per element and no index bookkeeping. Same result: the first element of
    // the clipped window starts the maximum, a later one replaces it only when greater.
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const int64_t h0 = oh * g.stride_h - g.pad_top;
      const int64_t ki_begin = h0 >= 0 ? 0 : (-h0 + g.dilation_h - 1) / g.dilation_h;
      const int64_t ki_end = g.in_h - 1 - h0 < 0 ? 0 : std::min(g.kernel_h, (g.in_h - 1 - h0) / g.dilation_h + 1);
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t w0 = ow * g.stride_w - g.pad_left;
        const int64_t kj_begin = w0 >= 0 ? 0 : (-w0 + g.dilation_w - 1) / g.dilation_w;
        const int64_t kj_end = g.in_w - 1 - w0 < 0 ? 0 : std::min(g.kernel_w, (g.in_w - 1 - w0) / g.dilation_w + 1);
        T best = std::numeric_limits<T>::lowest();
        bool first = true;
        for (int64_t ki = ki_begin; ki < ki_end; ++ki) {
          const T* row = x + (h0 + ki * g.dilation_h) * g.in_w + w0;
          for (int64_t kj = kj_begin; kj < kj_end; ++kj) {
            const T v = row[kj * g.dilation_w];
            if (first || v > best) best = v;
            first = false;
          }
        }
        y[oh * g.out_w + ow] = best;
      }
    }
    return;
  }
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const int64_t h0 = oh * g.stride_h - g.pad_top;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const int64_t w0 = ow * g.stride_w - g.pad_left;
      T best = std::numeric_limits<T>::lowest();
      int64_t best_h = -1, best_w = -1;
      for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
        const int64_t ih = h0 + ki * g.dilation_h;
        if (ih < 0 || ih >= g.in_h) {
          continue;
        }
        const T* row = x + ih * g.in_w;
        for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
          const int64_t iw = w0 + kj * g.dilation_w;
          if (iw >= 0 && iw < g.in_w && (best_h < 0 || row[iw] > best)) {
            best = row[iw];
            best_h = ih;
            best_w = iw;
          }
        }
      }
      y[oh * g.out_w + ow] = best;
      if (indices != nullptr) {
        indices[oh * g.out_w + ow] =
            plane_offset + (column_major ? best_w * g.in_h + best_h : best_h * g.in_w + best_w);
      }
    }
  }
}

void average_pool_plane(const PoolPlan& p, const float* x, float* y) {
  const WindowGeometry& g = p.g;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    const int64_t h0 = oh * g.stride_h - g.pad_top;
    // As ONNX Runtime and PyTorch: the padded window ends at the end padding, not beyond it.
    const int64_t h1 = std::min(h0 + g.kernel_h, g.in_h + g.pad_bottom);
    const int64_t hs = std::max<int64_t>(h0, 0);
    const int64_t he = std::min(h1, g.in_h);
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const int64_t w0 = ow * g.stride_w - g.pad_left;
      const int64_t w1 = std::min(w0 + g.kernel_w, g.in_w + g.pad_right);
      const int64_t ws = std::max<int64_t>(w0, 0);
      const int64_t we = std::min(w1, g.in_w);
      float sum = 0.0f;
      for (int64_t ih = hs; ih < he; ++ih) {
        for (int64_t iw = ws; iw < we; ++iw) {
          sum += x[ih * g.in_w + iw];
        }
      }
      const int64_t count = p.count_include_pad ? (h1 - h0) * (w1 - w0) : (he - hs) * (we - ws);
      y[oh * g.out_w + ow] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
    }
  }
}

template <bool is_max> PreparedOp prepare_pool(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (is_max) {
    ctx.expect_dtype(0, {DataType::float32, DataType::int8, DataType::uint8});
  } else {
    ctx.expect_dtype(0, {DataType::float32});
  }
  const DataType dtype = ctx.input(0).dtype;
  if (!is_max && ctx.attribute("dilations") != nullptr) {
    for (int64_t d : ctx.attr_ints("dilations")) {
      if (d != 1) {
        ctx.fail("dilations are not supported for AveragePool");
      }
    }
  }
  const std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) {
    ctx.fail("attribute 'kernel_shape' is required");
  }
  PoolPlan p;
  p.g = forward_window(ctx, kernel, ctx.attr_int("ceil_mode", 0) != 0);
  p.count_include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, p.g.output_shape(p.g.channels)}};
  if (is_max && ctx.output_count() > 1) {
    op.outputs.push_back(TensorInfo{DataType::int64, p.g.output_shape(p.g.channels)});
  }
  op.kernel = [=](KernelContext& k) {
    const WindowGeometry& g = p.g;
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, float> || (is_max && (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>))) {
        const T* x = k.input(0).data<T>();
        T* y = k.output(0).data<T>();
        int64_t* indices = k.outputs.size() > 1 && k.outputs[1] != nullptr ? k.output(1).data<int64_t>() : nullptr;
        k.pool.parallel_for(g.batch * g.channels, 1, [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            if constexpr (is_max) {
              max_pool_plane<T>(g, x + c * g.in_size(), y + c * g.out_size(),
                                indices != nullptr ? indices + c * g.out_size() : nullptr, c * g.in_size(),
                                column_major);
            } else {
              average_pool_plane(p, x + c * g.in_size(), y + c * g.out_size());
            }
          }
        });
      }
    });
  };
  return op;
}

template <bool is_max> PreparedOp prepare_global_pool(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  if (shape.size() < 3) {
    ctx.fail("input '{}' has shape {}, expected rank 3 or more", ctx.input_name(0), shape_string(shape));
  }
  std::vector<int64_t> out_shape(shape.size(), 1);
  out_shape[0] = shape[0];
  out_shape[1] = shape[1];
  const int64_t planes = shape[0] * shape[1];
  const int64_t plane = element_count(std::span(shape).subspan(2));
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, out_shape}};
  op.kernel = [planes, plane](KernelContext& k) {
    const float* x = k.input(0).data<float>();
    float* y = k.output(0).data<float>();
    k.pool.parallel_for(planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plane)), [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        const float* src = x + c * plane;
        if constexpr (is_max) {
          float best = std::numeric_limits<float>::lowest();
          for (int64_t i = 0; i < plane; ++i) {
            best = std::max(best, src[i]);
          }
          y[c] = best;
        } else {
          // A double sum: a float one drifts by ~1e-5 over the 160x160 planes of the OCR detector.
          double sum = 0.0;
          for (int64_t i = 0; i < plane; ++i) {
            sum += src[i];
          }
          y[c] = plane > 0 ? static_cast<float>(sum / static_cast<double>(plane)) : 0.0f;
        }
      }
    });
  };
  return op;
}

const OpRegistrar max_pool_op{"MaxPool", prepare_pool<true>};
const OpRegistrar average_pool_op{"AveragePool", prepare_pool<false>};
const OpRegistrar global_average_pool_op{"GlobalAveragePool", prepare_global_pool<false>};
const OpRegistrar global_max_pool_op{"GlobalMaxPool", prepare_global_pool<true>};

}  // namespace
}  // namespace rknnxx::host
