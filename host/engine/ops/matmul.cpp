// MatMul (numpy semantics: 1-D promotion, broadcast batch dimensions) and Gemm
// (alpha, beta, transA, transB, C broadcast to [M, N]), float32, on Eigen's GEMM; in a quantized model, with a
// constant B and both operands on int8 grids, on integers where it pays (conv_int8.hpp). bfloat16
// inputs are widened to float32 in the operator's scratch memory, multiplied in float32 and the
// result rounded to bfloat16 to nearest even, as ONNX Runtime does (docs/conformance.md "bfloat16").

#include "../broadcast.hpp"
#include "../gemm.hpp"
#include "../op_registry.hpp"
#include "conv_int8.hpp"
#include "matmul_plan.hpp"

#include <algorithm>
#include <initializer_list>
#include <optional>

namespace rknnxx::host {
namespace {

void widen_into(ThreadPool& pool, const bfloat16* src, float* dst, int64_t n) {
  pool.parallel_for(n, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = widen(src[i]);
  });
}
void narrow_into(ThreadPool& pool, const float* src, bfloat16* dst, int64_t n) {
  pool.parallel_for(n, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = narrow<bfloat16>(src[i]);
  });
}

// Float32 views of a bfloat16 operator's inputs and output, in its scratch memory: inputs
// widened on construction, finish() rounds the output into the output tensor.
struct Bfloat16Operands {
  std::vector<const float*> inputs;
  float* output = nullptr;
  // Scratch floats for inputs of `counts` elements and an output of `output_count`.
  static std::size_t scratch_bytes(std::initializer_list<int64_t> counts, int64_t output_count) {
    int64_t total = output_count;
    for (int64_t c : counts) total = checked_add(total, c, "the bfloat16 scratch size");
    return static_cast<std::size_t>(checked_mul(total, sizeof(float), "the bfloat16 scratch size"));
  }
  explicit Bfloat16Operands(KernelContext& k) {
    auto* scratch = reinterpret_cast<float*>(k.scratch);
    for (std::size_t i = 0; i < k.inputs.size(); ++i) {
      if (k.inputs[i] == nullptr) {
        inputs.push_back(nullptr);
        continue;
      }
      widen_into(k.pool, k.input(i).data<bfloat16>(), scratch, k.input(i).elements());
      inputs.push_back(scratch);
      scratch += k.input(i).elements();
    }
    output = scratch;
  }
  void finish(KernelContext& k) const {
    narrow_into(k.pool, output, k.output(0).data<bfloat16>(), k.output(0).elements());
  }
};

void run_matmul(const MatMulPlan& p, KernelContext& k, const float* a, const float* b, float* y) {
  if (p.fold_batch_into_m) {
    parallel_gemm(k.pool, false, false, element_count(p.a_batch) * p.m, p.n, p.k, 1.0f, a, p.k, b, p.n, 0.0f, y, p.n);
    return;
  }
  const int64_t count = p.batches.elements();
  auto one = [&](int64_t batch, int64_t a_index, int64_t b_index, bool parallel) {
    const float* ab = a + a_index * p.m * p.k;
    const float* bb = b + b_index * p.k * p.n;
    float* yb = y + batch * p.m * p.n;
    if (parallel) {
      parallel_gemm(k.pool, false, false, p.m, p.n, p.k, 1.0f, ab, p.k, bb, p.n, 0.0f, yb, p.n);
    } else {
      gemm(false, false, p.m, p.n, p.k, 1.0f, ab, p.k, bb, p.n, 0.0f, yb, p.n);
    }
  };
  if (count >= static_cast<int64_t>(k.pool.size()) * 2) {
    k.pool.parallel_for(count, 1, [&](int64_t begin, int64_t end) {
      p.batches.for_each_run(begin, end,
                             [&](int64_t o, std::span<const int64_t> off, std::span<const int64_t> st, int64_t len) {
                               for (int64_t j = 0; j < len; ++j) {
                                 one(o + j, off[0] + j * st[0], off[1] + j * st[1], false);
                               }
                             });
    });
  } else {
    p.batches.for_each_run(0, count,
                           [&](int64_t o, std::span<const int64_t> off, std::span<const int64_t> st, int64_t len) {
                             for (int64_t j = 0; j < len; ++j) {
                               one(o + j, off[0] + j * st[0], off[1] + j * st[1], true);
                             }
                           });
  }
}

// float32 or bfloat16, the same for every input.
DataType float_operands(const OpContext& ctx, std::size_t count) {
  ctx.expect_dtype(0, {DataType::float32, DataType::bfloat16});
  const DataType dtype = ctx.input(0).dtype;
  for (std::size_t i = 1; i < count; ++i) {
    if (ctx.has_input(i) && ctx.input(i).dtype != dtype) {
      ctx.fail("input {} has element type {}, input 0 has {}", i, dtype_name(ctx.input(i).dtype), dtype_name(dtype));
    }
  }
  return dtype;
}

PreparedOp prepare_matmul(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  const DataType dtype = float_operands(ctx, 2);
  std::vector<int64_t> out;
  const MatMulPlan p = plan_matmul(ctx, 0, 1, out);
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, out}};
  // A [..., K] x B [K, N], B constant: A's leading axes are the rows.
  const auto& as = ctx.input(0).shape;
  const auto& bs = ctx.input(1).shape;
  if (dtype == DataType::float32 && bs.size() == 2 && !as.empty() && as.back() == bs[0] && bs[0] > 0 &&
      prepare_int8_gemm(ctx, Int8GemmRequest{ctx.input(0).elements() / bs[0], bs[0], bs[1], false, false}, op))
    return op;
  if (dtype == DataType::bfloat16) {
    op.scratch_bytes =
        Bfloat16Operands::scratch_bytes({ctx.input(0).elements(), ctx.input(1).elements()}, element_count(out));
    op.kernel = [p](KernelContext& k) {
      const Bfloat16Operands f(k);
      run_matmul(p, k, f.inputs[0], f.inputs[1], f.output);
      f.finish(k);
    };
  } else {
    op.kernel = [p](KernelContext& k) {
      run_matmul(p, k, k.input(0).data<float>(), k.input(1).data<float>(), k.output(0).data<float>());
    };
  }
  return op;
}

PreparedOp prepare_gemm(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  const DataType dtype = float_operands(ctx, 3);
  const auto& as = ctx.input(0).shape;
  const auto& bs = ctx.input(1).shape;
  if (as.size() != 2 || bs.size() != 2) {
    ctx.fail("inputs '{}' {} and '{}' {} must be matrices", ctx.input_name(0), shape_string(as), ctx.input_name(1),
             shape_string(bs));
  }
  const bool trans_a = ctx.attr_int("transA", 0) != 0;
  const bool trans_b = ctx.attr_int("transB", 0) != 0;
  const float alpha = ctx.attr_float("alpha", 1.0f);
  const float beta = ctx.attr_float("beta", 1.0f);
  const int64_t m = trans_a ? as[1] : as[0];
  const int64_t k = trans_a ? as[0] : as[1];
  const int64_t n = trans_b ? bs[0] : bs[1];
  const int64_t kb = trans_b ? bs[1] : bs[0];
  if (k != kb) {
    ctx.fail("inputs '{}' {} (transA={}) and '{}' {} (transB={}) cannot be multiplied: {} against {}",
             ctx.input_name(0), shape_string(as), trans_a, ctx.input_name(1), shape_string(bs), trans_b, k, kb);
  }
  bool has_c = ctx.has_input(2);
  int64_t c_rows = 1, c_cols = 1;  // C as [c_rows, c_cols], each 1 or the full size
  if (has_c) {
    const auto& cs = ctx.input(2).shape;
    const std::vector<int64_t> full{m, n};
    std::string error;
    const std::vector<std::vector<int64_t>> shapes{cs, full};
    if (cs.size() > 2 || broadcast_shape(shapes, error) != full) {
      ctx.fail("input '{}' of shape {} does not broadcast to [{}, {}]", ctx.input_name(2), shape_string(cs), m, n);
    }
    c_cols = cs.empty() ? 1 : cs.back();
    c_rows = cs.size() == 2 ? cs[0] : 1;
  }
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, {m, n}}};
  // C, when given, must be a bias: one value per column, added once.
  const bool bias_only = !has_c || (beta == 1.0f && c_rows == 1 && c_cols == n && ctx.input(2).elements() == n);
  if (dtype == DataType::float32 && !trans_a && alpha == 1.0f && bias_only &&
      prepare_int8_gemm(ctx, Int8GemmRequest{m, k, n, trans_b, has_c}, op))
    return op;
  if (dtype == DataType::bfloat16) {
    op.scratch_bytes = Bfloat16Operands::scratch_bytes(
        {ctx.input(0).elements(), ctx.input(1).elements(), has_c ? ctx.input(2).elements() : 0}, m * n);
  }
  op.kernel = [=](KernelContext& kc) {
    std::optional<Bfloat16Operands> widened;
    if (dtype == DataType::bfloat16) {
      widened.emplace(kc);
    }
    const float* a = widened ? widened->inputs[0] : kc.input(0).data<float>();
    const float* b = widened ? widened->inputs[1] : kc.input(1).data<float>();
    float* y = widened ? widened->output : kc.output(0).data<float>();
    float y_beta = 0.0f;
    if (has_c && beta != 0.0f) {
      const float* c = widened ? widened->inputs[2] : kc.input(2).data<float>();
      for (int64_t i = 0; i < m; ++i) {
        const float* crow = c + (c_rows == 1 ? 0 : i * c_cols);
        for (int64_t j = 0; j < n; ++j) {
          y[i * n + j] = beta * crow[c_cols == 1 ? 0 : j];
        }
      }
      y_beta = 1.0f;
    }
    parallel_gemm(kc.pool, trans_a, trans_b, m, n, k, alpha, a, as[1], b, bs[1], y_beta, y, n);
    if (widened) {
      widened->finish(kc);
    }
  };
  return op;
}

const OpRegistrar matmul_op{"MatMul", prepare_matmul};
const OpRegistrar gemm_op{"Gemm", prepare_gemm};

}  // namespace
}  // namespace rknnxx::host
