// BatchNormalization in inference mode: y = (x - mean) / sqrt(var + epsilon) * scale + bias,
// per channel (axis 1). Usually folded into the preceding Conv by Graph::fuse_for_inference; else the one-input
// steps after it may be fused into it (a Relu: densenet's BatchNormalization + Relu after each Concat).

#include "../four_lanes.hpp"
#include "../op_registry.hpp"
#include "conv_epilogue.hpp"

#include <algorithm>
#include <cmath>

namespace rknnxx::host {
namespace {

PreparedOp prepare_batch_normalization(OpContext& ctx) {
  ctx.expect_inputs(5, 5);
  for (std::size_t i = 0; i < 5; ++i) {
    ctx.expect_dtype(i, {DataType::float32});
  }
  if (ctx.attr_int("training_mode", 0) != 0) {
    ctx.fail("training_mode is not supported by the host engine");
  }
  for (std::size_t o = 1; o < ctx.output_count(); ++o) {
    if (ctx.has_output(o)) {
      ctx.fail("output {} (training statistics) is not supported by the host engine", o);
    }
  }
  const auto& x = ctx.input(0).shape;
  if (x.size() < 2) {
    ctx.fail("input '{}' has shape {}, expected rank 2 or more", ctx.input_name(0), shape_string(x));
  }
  const int64_t channels = x[1];
  for (std::size_t i = 1; i < 5; ++i) {
    if (ctx.input(i).shape != std::vector<int64_t>{channels}) {
      ctx.fail("input '{}' has shape {}, expected [{}]", ctx.input_name(i), shape_string(ctx.input(i).shape), channels);
    }
  }
  const Epilogue epilogue = epilogue_attributes(ctx);
  if (epilogue.has_residual()) {
    ctx.fail("attribute '{}' has a residual Add, which BatchNormalization does not take", epilogue_kinds_attribute);
  }
  const float epsilon = ctx.attr_float("epsilon", 1e-5f);
  const int64_t batch = x[0];
  const int64_t plane = element_count(std::span(x).subspan(2));
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  for (std::size_t o = 1; o < ctx.output_count(); ++o) {
    op.outputs.push_back(ctx.input(1));
  }
  // In pieces of at most finish_piece values (whole planes, or parts of a large one), each rounded as stored
  // (KernelContext::finish_output) while in cache: densenet's BatchNormalizations read its Concats' growing
  // outputs, and the session's pass after them was a second trip through memory.
  op.finishes_output = true;
  op.kernel = [=](KernelContext& k) {
    const float* scale = k.input(1).data<float>();
    const float* bias = k.input(2).data<float>();
    const float* mean = k.input(3).data<float>();
    const float* var = k.input(4).data<float>();
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    k.pool.parallel_for(batch * channels * plane, finish_piece, [&](int64_t begin, int64_t end) {
      for (int64_t first = begin; first < end; first += finish_piece) {
        const int64_t last = std::min(end, first + finish_piece);
        for (int64_t at = first; at < last;) {  // the piece's part of each plane it touches
          const int64_t t = at / plane, c = t % channels, count = std::min(last, (t + 1) * plane) - at;
          const float a = scale[c] / std::sqrt(var[c] + epsilon);
          const float b = bias[c] - mean[c] * a;
          const float* src = in + at;
          float* dst = out + at;
          int64_t i = 0;  // four lanes at a time: g++ -O2 leaves this loop scalar
          for (; i + 4 <= count; i += 4) store4(dst + i, load4(src + i) * a + b);
          for (; i < count; ++i) dst[i] = src[i] * a + b;
          if (!epilogue.empty()) epilogue.apply(dst, count, 0.0f, false, nullptr);
          at += count;
        }
        if (k.finish_output) k.finish_output(out + first, static_cast<std::size_t>(last - first));
      }
    });
  };
  return op;
}

const OpRegistrar batch_normalization_op{"BatchNormalization", prepare_batch_normalization};

}  // namespace
}  // namespace rknnxx::host
