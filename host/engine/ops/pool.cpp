// MaxPool, AveragePool (count_include_pad, ceil_mode; dilations from opset 19), LpPool (ceil_mode
// and dilations: LpPool-18), GlobalAveragePool, GlobalMaxPool and GlobalLpPool over any number of
// spatial axes, float32 (MaxPool also int8 and uint8).
// The windowed pools walk each output row (all spatial axes but the last fixed): the input rows
// the windows of that row cover, clipped to the input once, then for each output column the
// clipped columns of each of those rows. No bounds test per element.

#include "../blocked_layout.hpp"
#include "../four_lanes.hpp"
#include "../op_registry.hpp"
#include "spatial.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>

namespace rknnxx::host {
namespace {

enum class PoolKind { max, average, lp };

struct PoolPlan {
  WindowND g;
  PoolKind kind = PoolKind::max;
  bool count_include_pad = false;
  bool column_major = false;  // MaxPool storage_order 1: indices with the axes reversed
  float p = 2.0f;             // LpPool's exponent
};

// The input rows covered by the windows of one output row: offsets (row-major, and column-major
// for MaxPool's storage_order 1) of each row's column 0, in kernel order (first row first).
// Reused from row to row, so that walking a plane allocates nothing after its first row.
struct RowTaps {
  std::vector<int64_t> offset, column_major_offset;
  std::vector<int64_t> next_offset, next_column;  // the product being built
  int64_t padded_rows = 1;                        // AveragePool count_include_pad: rows of the window, padding included
};

// The valid kernel indices [begin, end) of a window starting at `start` along an axis of `size`.
struct TapRange {
  int64_t begin = 0, end = 0;
};
inline TapRange valid_taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  const int64_t begin = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const int64_t end = size - 1 - start < 0 ? 0 : std::min(kernel, (size - 1 - start) / dilation + 1);
  return {std::min(begin, kernel), std::max(std::min(begin, kernel), end)};
}

// AveragePool count_include_pad: the taps of a window starting at `start` that fall before
// `padded_end` (the input's end plus its end padding), padding included. As ONNX Runtime and
// PyTorch, the window stops at the end padding, not beyond it; with dilations (AveragePool-19)
// only the taps the dilation reaches count.
inline int64_t padded_taps(int64_t start, int64_t kernel, int64_t dilation, int64_t padded_end) {
  return padded_end <= start ? 0 : std::min(kernel, (padded_end - start + dilation - 1) / dilation);
}

// Fills `taps` for the output row at outer output coordinates `o` (all axes but the last).
// row_stride[d] is the row-major stride of input axis d, column_stride[d] the column-major one.
void row_taps(const WindowND& g, const std::vector<int64_t>& row_stride, const std::vector<int64_t>& column_stride,
              const std::vector<int64_t>& o, RowTaps& taps) {
  taps.offset.assign(1, 0);
  taps.column_major_offset.assign(1, 0);
  taps.padded_rows = 1;
  for (std::size_t d = 0; d + 1 < g.spatial(); ++d) {
    const int64_t start = o[d] * g.stride[d] - g.pad_begin[d];
    const TapRange r = valid_taps(start, g.kernel[d], g.dilation[d], g.in[d]);
    taps.padded_rows *= padded_taps(start, g.kernel[d], g.dilation[d], g.in[d] + g.pad_end[d]);
    // The product with the rows so far, in kernel order (axis d varies slower than later axes).
    taps.next_offset.clear();
    taps.next_column.clear();
    for (std::size_t i = 0; i < taps.offset.size(); ++i) {
      for (int64_t k = r.begin; k < r.end; ++k) {
        const int64_t at = start + k * g.dilation[d];
        taps.next_offset.push_back(taps.offset[i] + at * row_stride[d]);
        taps.next_column.push_back(taps.column_major_offset[i] + at * column_stride[d]);
      }
    }
    std::swap(taps.offset, taps.next_offset);
    std::swap(taps.column_major_offset, taps.next_column);
  }
}

// One plane (one image and channel): input x, output y, optional MaxPool indices with the
// plane's offset in the whole input.
// The kind is a template parameter so that each pool's inner loop is compiled on its own.
template <PoolKind kind, class T>
void pool_plane(const PoolPlan& p, const T* x, T* y, int64_t* indices, int64_t plane_offset, RowTaps& taps) {
  const WindowND& g = p.g;
  const std::size_t last = g.spatial() - 1;
  const int64_t in_w = g.in[last], out_w = g.out[last], kernel_w = g.kernel[last];
  const int64_t stride_w = g.stride[last], dilation_w = g.dilation[last], pad_w = g.pad_begin[last];
  std::vector<int64_t> row_stride(g.spatial(), 1), column_stride(g.spatial(), 1);
  for (std::size_t d = last; d-- > 0;) row_stride[d] = row_stride[d + 1] * g.in[d + 1];
  for (std::size_t d = 1; d <= last; ++d) column_stride[d] = column_stride[d - 1] * g.in[d - 1];
  const int64_t column_stride_w = column_stride[last];
  const int64_t rows = g.out_size() / std::max<int64_t>(1, out_w);
  std::vector<int64_t> o(last, 0);  // outer output coordinates of the current row
  for (int64_t row = 0; row < rows; ++row) {
    row_taps(g, row_stride, column_stride, o, taps);
    const auto n_rows = static_cast<int64_t>(taps.offset.size());
    T* out = y + row * out_w;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t w0 = ow * stride_w - pad_w;
      const TapRange c = valid_taps(w0, kernel_w, dilation_w, in_w);
      if constexpr (kind == PoolKind::max && std::is_same_v<T, float>) {
        // Four outputs at once where their windows lie inside the row: lane i is output ow + i, with the
        // same taps in the same order and the same compare as the loop below, so the same value.
        const int64_t last_w0 = (ow + 3) * stride_w - pad_w;
        if (indices == nullptr && n_rows > 0 && ow + 4 <= out_w && w0 >= 0 &&
            last_w0 + (kernel_w - 1) * dilation_w < in_w) {
          f32x4 best{};
          bool first = true;
          for (int64_t r = 0; r < n_rows; ++r) {
            const float* src = x + taps.offset[static_cast<std::size_t>(r)] + w0;
            for (int64_t kj = 0; kj < kernel_w; ++kj) {
              const float* s = src + kj * dilation_w;
              const f32x4 v = {s[0], s[stride_w], s[2 * stride_w], s[3 * stride_w]};
              const i32x4 greater = v > best;
              best = first ? v : (greater ? v : best);
              first = false;
            }
          }
          for (int i = 0; i < 4; ++i) out[ow + i] = best[i];
          ow += 3;
          continue;
        }
      }
      if constexpr (std::is_same_v<T, float>) {
        if constexpr (kind != PoolKind::max) {
          float sum = 0.0f;
          for (int64_t r = 0; r < n_rows; ++r) {
            const float* src = x + taps.offset[static_cast<std::size_t>(r)];
            const int64_t begin = w0 + c.begin * dilation_w, end = w0 + c.end * dilation_w;
            if constexpr (kind == PoolKind::average) {
              if (dilation_w == 1) {
                for (int64_t iw = begin; iw < end; ++iw) sum += src[iw];
              } else {  // AveragePool-19
                for (int64_t iw = begin; iw < end; iw += dilation_w) sum += src[iw];
              }
            } else if (p.p == 2.0f) {
              for (int64_t iw = begin; iw < end; iw += dilation_w) sum += src[iw] * src[iw];
            } else if (p.p == 1.0f) {
              for (int64_t iw = begin; iw < end; iw += dilation_w) sum += std::fabs(src[iw]);
            } else {
              for (int64_t iw = begin; iw < end; iw += dilation_w) sum += std::pow(std::fabs(src[iw]), p.p);
            }
          }
          if constexpr (kind == PoolKind::lp) {
            out[ow] = p.p == 2.0f ? std::sqrt(sum) : p.p == 1.0f ? sum : std::pow(sum, 1.0f / p.p);
            continue;
          }
          // As ONNX Runtime and PyTorch: the padded window ends at the end padding, not beyond it.
          const int64_t count = p.count_include_pad
              ? taps.padded_rows * padded_taps(w0, kernel_w, dilation_w, in_w + g.pad_end[last])
              : n_rows * (c.end - c.begin);
          out[ow] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
          continue;
        }
      }
      if constexpr (kind == PoolKind::max) {
        // MaxPool: the first maximum in kernel order wins (a later element replaces it only when greater).
        if (indices == nullptr) {
          // Only the value: no position to keep, so the compare compiles to a select (a max), not a branch.
          T best = std::numeric_limits<T>::lowest();
          bool first = true;
          for (int64_t r = 0; r < n_rows; ++r) {
            const T* src = x + taps.offset[static_cast<std::size_t>(r)];
            for (int64_t iw = w0 + c.begin * dilation_w, end = w0 + c.end * dilation_w; iw < end; iw += dilation_w) {
              const T v = src[iw];
              if (first || v > best) best = v;
              first = false;
            }
          }
          out[ow] = best;
          continue;
        }
        T best = std::numeric_limits<T>::lowest();
        int64_t best_row = -1, best_w = -1;
        for (int64_t r = 0; r < n_rows; ++r) {
          const T* src = x + taps.offset[static_cast<std::size_t>(r)];
          for (int64_t kj = c.begin; kj < c.end; ++kj) {
            const int64_t iw = w0 + kj * dilation_w;
            if (best_row < 0 || src[iw] > best) {
              best = src[iw];
              best_row = r;
              best_w = iw;
            }
          }
        }
        out[ow] = best;
        if (indices != nullptr) {
          const auto r = static_cast<std::size_t>(std::max<int64_t>(best_row, 0));
          indices[row * out_w + ow] = best_row < 0 ? -1
                                                   : plane_offset +
                  (p.column_major ? taps.column_major_offset[r] + best_w * column_stride_w : taps.offset[r] + best_w);
        }
      }
    }
    for (std::size_t d = last; d-- > 0;) {  // the next output row
      if (++o[d] < g.out[d]) break;
      o[d] = 0;
    }
  }
}

// MaxPool of float32 over two spatial axes without Indices, a row of outputs at a time: first the maximum of
// the window's input rows, column by column (contiguous, four columns at a time), into a line padded with
// -inf; then the maximum of each window's columns of that line (in L1). The walk in kernel order above gives
// the same values except where its rule depends on the order: a NaN (the result only when first in the
// window) and ties of 0 and -0 (the first one wins). The rows are checked for both as they are read, and a
// plane holding either is walked in kernel order instead (docs/conformance.md, "Windows over any number of axes").
struct RowMaxPlan {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0, dilation_h = 0, dilation_w = 0;
  int64_t pad_h = 0, pad_w = 0;
  int64_t line = 0;  // columns of the padded line the windows reach: pad_w, the input's columns, the end padding
};

// The plan when the pool fits: two spatial axes, and every window holds at least one input element (so the
// -inf padding never is a result of its own).
std::optional<RowMaxPlan> row_max_plan(const WindowND& g) {
  if (g.spatial() != 2) return std::nullopt;
  RowMaxPlan m{g.in[0],     g.in[1],     g.out[0],      g.out[1],      g.kernel[0],    g.kernel[1],
               g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], g.pad_begin[0], g.pad_begin[1]};
  if (m.out_h <= 0 || m.out_w <= 0 || m.in_w > (int64_t{1} << 24) || m.pad_w > m.in_w) return std::nullopt;
  for (int64_t o = 0; o < m.out_h; ++o) {
    const TapRange r = valid_taps(o * m.stride_h - m.pad_h, m.kernel_h, m.dilation_h, m.in_h);
    if (r.begin >= r.end) return std::nullopt;
  }
  for (int64_t o = 0; o < m.out_w; ++o) {
    const TapRange c = valid_taps(o * m.stride_w - m.pad_w, m.kernel_w, m.dilation_w, m.in_w);
    if (c.begin >= c.end) return std::nullopt;
  }
  // The last window's last column, as the line's index (the line starts at input column -pad_w).
  m.line = (m.out_w - 1) * m.stride_w + (m.kernel_w - 1) * m.dilation_w + 1;
  if (m.line > 4 * m.in_w + 64) return std::nullopt;  // windows mostly padding: not worth a line
  return m;
}

// Lanes p[0], p[S], p[2S], p[3S]; S = 0 is "any stride", given as `stride`.
template <int S> inline f32x4 load4_strided(const float* p, int64_t stride) {
  if constexpr (S == 1) {
    return load4(p);
  } else if constexpr (S == 2) {
    return __builtin_shufflevector(load4(p), load4(p + 4), 0, 2, 4, 6);
  } else {
    return f32x4{p[0], p[stride], p[2 * stride], p[3 * stride]};
  }
}
inline f32x4 max4(f32x4 a, f32x4 b) { return b > a ? b : a; }

// The maxima of one line's windows into out[0, out_w); the line has 8 readable columns past m.line.
template <int S> void window_maxima(const RowMaxPlan& m, const float* line, float* out) {
  const int64_t stride = S == 0 ? m.stride_w : S;
  int64_t ow = 0;
  for (; ow + 4 <= m.out_w; ow += 4) {
    const float* at = line + ow * stride;
    f32x4 best = load4_strided<S>(at, stride);
    for (int64_t kj = 1; kj < m.kernel_w; ++kj) best = max4(best, load4_strided<S>(at + kj * m.dilation_w, stride));
    store4(out + ow, best);
  }
  for (; ow < m.out_w; ++ow) {
    const float* at = line + ow * stride;
    float best = at[0];
    for (int64_t kj = 1; kj < m.kernel_w; ++kj) best = std::max(best, at[kj * m.dilation_w]);
    out[ow] = best;
  }
}

// Pools plane x into y; false (y partly written) when the plane holds a NaN or -0 inside some window.
bool row_max_plane(const RowMaxPlan& m, const float* x, float* y, std::vector<float>& line) {
  constexpr float low = -std::numeric_limits<float>::infinity();
  line.assign(static_cast<std::size_t>(m.line + 8), low);
  float* row = line.data() + m.pad_w;                          // input column 0
  const int64_t columns = std::min(m.in_w, m.line - m.pad_w);  // the input columns some window reaches
  i32x4 odd{};  // lanes with a NaN (unequal to itself) or -0 (the sign bit alone) seen
  const auto check = [&odd](f32x4 v) {
    i32x4 bits;
    std::memcpy(&bits, &v, sizeof bits);
    odd |= (v != v) | (bits == std::numeric_limits<int32_t>::min());
  };
  for (int64_t oh = 0; oh < m.out_h; ++oh) {
    const int64_t start = oh * m.stride_h - m.pad_h;
    const TapRange r = valid_taps(start, m.kernel_h, m.dilation_h, m.in_h);
    for (int64_t k = r.begin; k < r.end; ++k) {
      const float* src = x + (start + k * m.dilation_h) * m.in_w;
      const bool first = k == r.begin;
      int64_t c = 0;
      for (; c + 4 <= columns; c += 4) {
        const f32x4 v = load4(src + c);
        check(v);
        const f32x4 best = first ? v : max4(load4(row + c), v);
        store4(row + c, best);
      }
      for (; c < columns; ++c) {
        const float v = src[c];
        if (std::isnan(v) || (v == 0.0f && std::signbit(v))) odd[0] = 1;
        row[c] = first ? v : std::max(row[c], v);
      }
    }
    float* out = y + oh * m.out_w;
    if (m.stride_w == 1) {
      window_maxima<1>(m, line.data(), out);
    } else if (m.stride_w == 2) {
      window_maxima<2>(m, line.data(), out);
    } else {
      window_maxima<0>(m, line.data(), out);
    }
  }
  return (odd[0] | odd[1] | odd[2] | odd[3]) == 0;
}

// MaxPool as above on an input kept in NHWC (blocked_layout.hpp), writing NHWC or NCHW: all channels of an output
// pixel at once, four lanes at a time, over the window's taps in kernel order with pool_plane's compare, so the
// same values as the NCHW paths, NaN and -0 included. Rows [begin, end) of all images' output rows; `pixel` holds
// the channels of one output pixel when the output is NCHW.
void max_pool_nhwc_rows(const RowMaxPlan& m, int64_t channels, const float* x, float* y, bool nhwc_out, int64_t begin,
                        int64_t end, float* pixel) {
  const int64_t in_image = m.in_h * m.in_w * channels, out_plane = m.out_h * m.out_w;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t n = row / m.out_h, oh = row % m.out_h, h0 = oh * m.stride_h - m.pad_h;
    const TapRange r = valid_taps(h0, m.kernel_h, m.dilation_h, m.in_h);
    for (int64_t ow = 0; ow < m.out_w; ++ow) {
      const int64_t w0 = ow * m.stride_w - m.pad_w;
      const TapRange c = valid_taps(w0, m.kernel_w, m.dilation_w, m.in_w);
      float* best = nhwc_out ? y + (row * m.out_w + ow) * channels : pixel;
      bool first = true;
      for (int64_t kh = r.begin; kh < r.end; ++kh) {
        const float* in_row = x + n * in_image + (h0 + kh * m.dilation_h) * m.in_w * channels;
        for (int64_t kw = c.begin; kw < c.end; ++kw) {
          const float* v = in_row + (w0 + kw * m.dilation_w) * channels;
          if (first) {
            std::memcpy(best, v, static_cast<std::size_t>(channels) * sizeof(float));
            first = false;
            continue;
          }
          int64_t k = 0;
          for (; k + 4 <= channels; k += 4) {
            store4(best + k, max4(load4(best + k), load4(v + k)));
          }
          for (; k < channels; ++k) best[k] = v[k] > best[k] ? v[k] : best[k];
        }
      }
      if (!nhwc_out) {
        float* out = y + n * channels * out_plane + oh * m.out_w + ow;
        for (int64_t k = 0; k < channels; ++k) out[k * out_plane] = pixel[k];
      }
    }
  }
}

// Where MaxPool reads and writes NHWC, decided by blocked_layout.hpp while planning.
struct KeptNhwc {
  bool input = false, output = false;
};

// The exponent of LpPool and GlobalLpPool: an int from opset 2 on; their opset 1 forms had a float.
float lp_exponent(const OpContext& ctx) {
  const onnx::AttributeProto* given = ctx.attribute("p");
  const bool as_float = given != nullptr && given->type == onnx::AttributeProto::Type::float_;
  const float p = as_float ? given->f : static_cast<float>(ctx.attr_int("p", 2));
  if (!(p > 0.0f) || p > 1e6f) {
    ctx.fail("attribute 'p' is {}, expected a positive exponent", p);
  }
  return p;
}

template <PoolKind kind> PreparedOp prepare_pool(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  if (kind == PoolKind::max) {
    ctx.expect_dtype(0, {DataType::float32, DataType::int8, DataType::uint8});
  } else {
    ctx.expect_dtype(0, {DataType::float32});
  }
  const DataType dtype = ctx.input(0).dtype;
  if (kind == PoolKind::average && ctx.opset() < 19 && ctx.attribute("dilations") != nullptr) {
    for (int64_t d : ctx.attr_ints("dilations")) {
      if (d != 1) {
        ctx.fail("dilations need AveragePool-19 (opset 19 or later; the model's opset is {})", ctx.opset());
      }
    }
  }
  const std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) {
    ctx.fail("attribute 'kernel_shape' is required");
  }
  PoolPlan p;
  p.kind = kind;
  p.g = forward_window_nd(ctx, kernel, ctx.attr_int("ceil_mode", 0) != 0);
  p.count_include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  p.column_major = ctx.attr_int("storage_order", 0) != 0;
  if (kind == PoolKind::lp) {
    p.p = lp_exponent(ctx);
  }
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, p.g.output_shape(p.g.channels)}};
  if (kind == PoolKind::max && ctx.output_count() > 1) {
    op.outputs.push_back(TensorInfo{DataType::int64, p.g.output_shape(p.g.channels)});
  }
  const bool values_only = kind == PoolKind::max && dtype == DataType::float32 && op.outputs.size() == 1;
  if (const std::optional<RowMaxPlan> m = values_only ? row_max_plan(p.g) : std::nullopt) {
    auto kept = std::make_shared<KeptNhwc>();
    op.blocked = nhwc_following_ports(  // input 0 in NHWC, and the output when the input is
        op.outputs[0].bytes(), 0, [kept](std::size_t) { kept->input = true; }, [kept] { kept->output = true; });
    op.kernel = [p, m = *m, kept](KernelContext& k) {
      const int64_t in_size = p.g.in_size(), out_size = p.g.out_size();
      const float* x = k.input(0).data<float>();
      float* y = k.output(0).data<float>();
      if (kept->input) {
        k.pool.parallel_for(p.g.batch * m.out_h, 1, [&](int64_t begin, int64_t end) {
          std::vector<float> pixel(kept->output ? 0 : static_cast<std::size_t>(p.g.channels));
          max_pool_nhwc_rows(m, p.g.channels, x, y, kept->output, begin, end, pixel.data());
        });
        return;
      }
      k.pool.parallel_for(p.g.batch * p.g.channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> line;
        RowTaps taps;
        for (int64_t c = begin; c < end; ++c) {
          if (!row_max_plane(m, x + c * in_size, y + c * out_size, line)) {
            pool_plane<PoolKind::max, float>(p, x + c * in_size, y + c * out_size, nullptr, c * in_size, taps);
          }
        }
      });
    };
    return op;
  }
  op.kernel = [p, dtype](KernelContext& k) {
    const WindowND& g = p.g;
    const int64_t in_size = g.in_size(), out_size = g.out_size();
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
        const T* x = k.input(0).data<T>();
        T* y = k.output(0).data<T>();
        int64_t* indices = k.outputs.size() > 1 && k.outputs[1] != nullptr ? k.output(1).data<int64_t>() : nullptr;
        k.pool.parallel_for(g.batch * g.channels, 1, [&](int64_t begin, int64_t end) {
          RowTaps taps;
          for (int64_t c = begin; c < end; ++c) {
            pool_plane<kind, T>(p, x + c * in_size, y + c * out_size,
                                indices != nullptr ? indices + c * out_size : nullptr, c * in_size, taps);
          }
        });
      }
    });
  };
  return op;
}

// GlobalAveragePool's sum, in one order whether the plane is read from NCHW or from NHWC, so that both give the same
// bits: the plane in blocks of 64 positions; in each block, position i adds into float lane i % 8; each block's
// lanes add into double lanes, summed at the end as ((0+4) + (1+5)) + ((2+6) + (3+7)). Float chains of 8 values
// and vector adds where one chain of double adds over the whole plane was 90 % of the pool's time; a float sum of
// the whole plane would drift by ~1e-5 over the OCR detector's 160x160 planes.
constexpr int64_t sum_block = 64, sum_lanes = 8;

double combine_lanes(const double (&lane)[sum_lanes]) {
  return ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
}

// The sum of an NCHW plane.
double plane_sum(const float* src, int64_t count) {
  double total[sum_lanes] = {};
  for (int64_t b = 0; b < count; b += sum_block) {
    const int64_t n = std::min(sum_block, count - b);
    f32x4 low{}, high{};  // lanes 0-3 and 4-7
    int64_t i = 0;
    for (; i + sum_lanes <= n; i += sum_lanes) {
      low += load4(src + b + i);
      high += load4(src + b + i + 4);
    }
    if (const int64_t rest = n - i; rest > 0) {  // the last 1 to 7 values; padded lanes add zero
      low += load4_partial(src + b + i, static_cast<std::size_t>(std::min<int64_t>(4, rest)));
      if (rest > 4) high += load4_partial(src + b + i + 4, static_cast<std::size_t>(rest - 4));
    }
    for (int l = 0; l < 4; ++l) {
      total[l] += low[l];
      total[l + 4] += high[l];
    }
  }
  return combine_lanes(total);
}

// One value per image and channel over all spatial positions: the maximum, the mean, or GlobalLpPool's p-norm
// (sum of |x|^p)^(1/p), summed in double.
struct GlobalPool {
  PoolKind kind = PoolKind::average;
  float p = 2.0f;
  int64_t batch = 0, channels = 0, plane = 0;  // plane: the values of each image's channel
  bool nhwc = false;  // the input is kept in NHWC by blocked_layout.hpp (rank 4; max and average)

  float mean(double sum) const { return plane > 0 ? static_cast<float>(sum / static_cast<double>(plane)) : 0.0f; }

  void nchw_planes(const float* x, float* y, int64_t begin, int64_t end) const {
    for (int64_t c = begin; c < end; ++c) {
      const float* src = x + c * plane;
      if (kind == PoolKind::max) {
        float best = std::numeric_limits<float>::lowest();
        for (int64_t i = 0; i < plane; ++i) best = std::max(best, src[i]);
        y[c] = best;
      } else if (kind == PoolKind::average) {
        y[c] = mean(plane_sum(src, plane));
      } else {
        double sum = 0.0;
        if (p == 2.0f) {
          for (int64_t i = 0; i < plane; ++i) sum += static_cast<double>(src[i]) * src[i];
          y[c] = static_cast<float>(std::sqrt(sum));
        } else if (p == 1.0f) {
          for (int64_t i = 0; i < plane; ++i) sum += std::fabs(src[i]);
          y[c] = static_cast<float>(sum);
        } else {
          for (int64_t i = 0; i < plane; ++i) sum += std::pow(std::fabs(static_cast<double>(src[i])), p);
          y[c] = static_cast<float>(std::pow(sum, 1.0 / p));
        }
      }
    }
  }

  // GlobalMaxPool from NHWC: channels [c0, c1) of image n, each pixel's in turn.
  void nhwc_max(const float* x, float* y, int64_t n, int64_t c0, int64_t c1) const {
    const float* image = x + n * plane * channels;
    float* out = y + n * channels;
    std::fill(out + c0, out + c1, std::numeric_limits<float>::lowest());
    for (int64_t i = 0; i < plane; ++i) {
      const float* row = image + i * channels;
      for (int64_t c = c0; c < c1; ++c) out[c] = std::max(out[c], row[c]);
    }
  }

  // GlobalAveragePool from NHWC in two loops, each channel's sum in plane_sum's order. First each block of 64
  // pixels of an image adds its pixels' channels [c0, c1) into the float lane of their position, reading the
  // pixels in memory order: a thread reads the rows it wrote as its band of the Conv before (docs/
  // runtime-extensions.md, "Threads"), where walking the channels' columns read every row on every thread.
  // `lanes`: the block's sum_lanes x channels floats.
  int64_t blocks() const noexcept { return (plane + sum_block - 1) / sum_block; }
  void block_lanes(const float* x, int64_t n, int64_t b, int64_t c0, int64_t c1, float* lanes) const {
    for (int64_t l = 0; l < sum_lanes; ++l) std::fill(lanes + l * channels + c0, lanes + l * channels + c1, 0.0f);
    const float* image = x + n * plane * channels;
    for (int64_t i = b * sum_block; i < std::min(plane, (b + 1) * sum_block); ++i) {
      const float* row = image + i * channels;
      float* lane = lanes + i % sum_lanes * channels;  // a block starts at a multiple of sum_lanes
      int64_t c = c0;
      for (; c + 4 <= c1; c += 4) store4(lane + c, load4(lane + c) + load4(row + c));
      for (; c < c1; ++c) lane[c] += row[c];
    }
  }
  // Then channels [c0, c1) of image n add their blocks' lanes into double lanes, block after block, and take the
  // mean. `lanes`: image n's blocks' lanes; `totals`: sum_lanes x (c1 - c0) doubles.
  void mean_of_lanes(const float* lanes, float* y, int64_t n, int64_t c0, int64_t c1, double* totals) const {
    const int64_t width = c1 - c0;
    std::fill(totals, totals + sum_lanes * width, 0.0);
    for (int64_t b = 0; b < blocks(); ++b)
      for (int64_t l = 0; l < sum_lanes; ++l) {
        const float* lane = lanes + (b * sum_lanes + l) * channels + c0;
        double* total = totals + l * width;
        for (int64_t c = 0; c < width; ++c) total[c] += lane[c];
      }
    for (int64_t c = 0; c < width; ++c) {
      double lane[sum_lanes];
      for (int64_t l = 0; l < sum_lanes; ++l) lane[l] = totals[l * width + c];
      y[n * channels + c0 + c] = mean(combine_lanes(lane));
    }
  }

  // Channels per piece of a loop over channels: a share per thread in whole cache lines, at most 256 (the double
  // lanes of a piece then fill 16 KiB).
  static constexpr int64_t max_piece = 256;
  static int64_t piece_channels(int64_t channels, int64_t pieces) {
    const int64_t share = (channels + pieces - 1) / std::max<int64_t>(1, pieces);
    return std::clamp<int64_t>((share + 15) / 16 * 16, 16, max_piece);
  }
  static constexpr std::size_t totals_bytes = sum_lanes * max_piece * sizeof(double);  // per worker
  std::size_t lanes_floats() const noexcept {                                          // every image's blocks' lanes
    return static_cast<std::size_t>(batch * blocks() * sum_lanes * channels);
  }
};

// A rank-4 input of GlobalAveragePool or GlobalMaxPool may be read in NHWC, where a squeeze-excitation block's pool
// reads the depthwise Conv's output (efficientnet, mobilenet_v3): the output, one value per channel, has the same
// bytes in either layout.
template <PoolKind kind> PreparedOp prepare_global_pool(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  if (shape.size() < 3) {
    ctx.fail("input '{}' has shape {}, expected rank 3 or more", ctx.input_name(0), shape_string(shape));
  }
  auto pool = std::make_shared<GlobalPool>();
  pool->kind = kind;
  pool->p = kind == PoolKind::lp ? lp_exponent(ctx) : 0.0f;
  std::vector<int64_t> out_shape(shape.size(), 1);
  out_shape[0] = shape[0];
  out_shape[1] = shape[1];
  pool->batch = shape[0];
  pool->channels = shape[1];
  pool->plane = element_count(std::span(shape).subspan(2));
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, out_shape}};
  if (shape.size() == 4 && kind != PoolKind::lp) {
    auto ports = std::make_shared<BlockedPorts>();
    ports->input_layout = nhwc_layout;
    ports->keep_input = [pool](std::size_t) { pool->nhwc = true; };
    op.blocked = std::move(ports);
    if (kind == PoolKind::average) {
      const int64_t lanes = checked_mul(
          checked_mul(checked_mul(pool->batch, pool->blocks(), "the scratch size"), sum_lanes, "the scratch size"),
          pool->channels, "the scratch size");
      op.scratch_bytes = static_cast<std::size_t>(
          checked_add(checked_mul(lanes, static_cast<int64_t>(sizeof(float)), "the scratch size"),
                      static_cast<int64_t>(ctx.threads() * GlobalPool::totals_bytes), "the scratch size"));
    }
  }
  // Below 2^16 values (a squeeze-excitation's pools, the classifier's) on one thread: split, each of its loops cost a
  // hand-off for a few microseconds of work, and a w8a8 MobileNetV3-small on two threads ran 5 % slower.
  const bool one_thread = element_count(shape) < (int64_t{1} << 16);
  op.kernel = [pool, one_thread](KernelContext& k) {
    const GlobalPool& g = *pool;
    const float* x = k.input(0).data<float>();
    float* y = k.output(0).data<float>();
    ThreadPool serial(1);
    ThreadPool& loops = one_thread ? serial : k.pool;
    const auto threads = static_cast<int64_t>(loops.size());
    if (g.nhwc && g.kind == PoolKind::max) {
      const int64_t width = GlobalPool::piece_channels(g.channels, threads), pieces = (g.channels + width - 1) / width;
      loops.parallel_for(g.batch * pieces, 1, [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u)
          g.nhwc_max(x, y, u / pieces, u % pieces * width, std::min(g.channels, (u % pieces + 1) * width));
      });
      return;
    }
    if (g.nhwc) {
      auto* lanes = reinterpret_cast<float*>(k.scratch);
      const int64_t blocks = g.blocks(), image_lanes = blocks * sum_lanes * g.channels;
      // Too few blocks for the threads (a 7x7 plane is one): their channels split too.
      const int64_t split = g.batch * blocks >= threads ? 1 : threads;
      const int64_t width = GlobalPool::piece_channels(g.channels, split), pieces = (g.channels + width - 1) / width;
      loops.parallel_for(g.batch * blocks * pieces, 1, [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
          const int64_t nb = u / pieces, n = nb / blocks, c0 = u % pieces * width;
          g.block_lanes(x, n, nb % blocks, c0, std::min(g.channels, c0 + width),
                        lanes + nb * sum_lanes * g.channels);  // image n's lanes, then its block's
        }
      });
      std::byte* totals = k.scratch + g.lanes_floats() * sizeof(float);
      const int64_t mean_width = GlobalPool::piece_channels(g.channels, threads);
      const int64_t mean_pieces = (g.channels + mean_width - 1) / mean_width;
      loops.parallel_for(g.batch * mean_pieces, 1, [&](int64_t b, int64_t e, std::size_t worker) {
        auto* t = reinterpret_cast<double*>(totals + worker * GlobalPool::totals_bytes);
        for (int64_t u = b; u < e; ++u) {
          const int64_t n = u / mean_pieces, c0 = u % mean_pieces * mean_width;
          g.mean_of_lanes(lanes + n * image_lanes, y, n, c0, std::min(g.channels, c0 + mean_width), t);
        }
      });
      return;
    }
    loops.parallel_for(g.batch * g.channels, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.plane)),
                       [&](int64_t b, int64_t e) { g.nchw_planes(x, y, b, e); });
  };
  return op;
}

const OpRegistrar max_pool_op{"MaxPool", prepare_pool<PoolKind::max>};
const OpRegistrar average_pool_op{"AveragePool", prepare_pool<PoolKind::average>};
const OpRegistrar lp_pool_op{"LpPool", prepare_pool<PoolKind::lp>};
const OpRegistrar global_average_pool_op{"GlobalAveragePool", prepare_global_pool<PoolKind::average>};
const OpRegistrar global_max_pool_op{"GlobalMaxPool", prepare_global_pool<PoolKind::max>};
const OpRegistrar global_lp_pool_op{"GlobalLpPool", prepare_global_pool<PoolKind::lp>};

}  // namespace
}  // namespace rknnxx::host
