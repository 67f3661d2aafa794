// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is seen as a 2-D matrix
// [prod(shape[:axis]), prod(shape[axis:])] (axis default 1); from opset 13 the operation runs
// along one axis (default -1).

#include "../op_registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rknnxx::host {
namespace {

template <bool log_softmax> void softmax_line(const float* in, float* out, int64_t length, int64_t stride) {
  float max = std::numeric_limits<float>::lowest();
  for (int64_t i = 0; i < length; ++i) {
    max = std::max(max, in[i * stride]);
  }
  // The sum in double: in float, thousands of small terms added to the maximum's 1 are each
  // rounded to the float spacing near 1, and the errors add up one way. Over the 6625 classes of
  // the PaddleOCR recogniser that made every probability 6e-5 too small or large (half of the
  // 1e-4 budget against ONNX Runtime); in double it is exact to float precision.
  double sum = 0.0;
  for (int64_t i = 0; i < length; ++i) {
    const float e = std::exp(in[i * stride] - max);
    sum += e;
    if constexpr (!log_softmax) {
      out[i * stride] = e;
    }
  }
  if constexpr (log_softmax) {
    const auto log_sum = static_cast<float>(std::log(sum));
    for (int64_t i = 0; i < length; ++i) {
      out[i * stride] = in[i * stride] - max - log_sum;
    }
  } else {
    const auto inverse = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < length; ++i) {
      out[i * stride] *= inverse;
    }
  }
}

// How Softmax-like operators see their input: `outer * inner` lines of `length` values, `inner`
// apart.
struct SoftmaxLines {
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;

  // Calls f(first element, line length, stride) for every line, split over the pool.
  template <class F> void parallel_lines(ThreadPool& pool, F&& f) const {
    pool.parallel_for(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, length)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t line = begin; line < end; ++line) {
                          const int64_t o = line / inner;
                          const int64_t i = line - o * inner;
                          f(o * length * inner + i, length, inner);
                        }
                      });
  }
};

SoftmaxLines softmax_lines(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  const bool legacy = ctx.opset() < 13;
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", legacy ? 1 : -1), rank);
  const auto split = static_cast<std::size_t>(std::min(axis, rank));
  SoftmaxLines lines;
  lines.outer = element_count(std::span(shape).first(split));
  if (legacy) {
    lines.length = element_count(std::span(shape).subspan(split));
  } else if (rank > 0) {
    lines.length = shape[split];
    lines.inner = element_count(std::span(shape).subspan(split + 1));
  }
  return lines;
}

// Softmax, LogSoftmax and Hardmax: one float32 output shaped as the input, computed line by line
// along the axis. line(in, out, length, stride) fills one line.
template <auto line> PreparedOp prepare_per_line(OpContext& ctx) {
  const SoftmaxLines lines = softmax_lines(ctx);
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [lines](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    lines.parallel_lines(
        k.pool, [&](int64_t start, int64_t length, int64_t stride) { line(in + start, out + start, length, stride); });
  };
  return op;
}

// 1 at the first maximum of each line, 0 elsewhere.
void hardmax_line(const float* in, float* out, int64_t length, int64_t stride) {
  int64_t best = 0;
  for (int64_t i = 0; i < length; ++i) {
    out[i * stride] = 0.0f;
    if (in[i * stride] > in[best * stride]) {
      best = i;
    }
  }
  if (length > 0) {
    out[best * stride] = 1.0f;
  }
}

const OpRegistrar softmax_op{"Softmax", prepare_per_line<softmax_line<false>>};
const OpRegistrar log_softmax_op{"LogSoftmax", prepare_per_line<softmax_line<true>>};
const OpRegistrar hardmax_op{"Hardmax", prepare_per_line<hardmax_line>};

}  // namespace
}  // namespace rknnxx::host
