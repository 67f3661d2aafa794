// MatMul (numpy semantics: 1-D promotion, broadcast batch dimensions) and Gemm
// (alpha, beta, transA, transB, C broadcast to [M, N]), float32, on Eigen's GEMM.

#include "../broadcast.hpp"
#include "../gemm.hpp"
#include "../op_registry.hpp"
#include "matmul_plan.hpp"

#include <algorithm>

namespace rknnxx::host {
namespace {

void run_matmul(const MatMulPlan& p, KernelContext& k) {
  const float* a = k.input(0).data<float>();
  const float* b = k.input(1).data<float>();
  float* y = k.output(0).data<float>();
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

PreparedOp prepare_matmul(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  std::vector<int64_t> out;
  const MatMulPlan p = plan_matmul(ctx, 0, 1, out);
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, out}};
  op.kernel = [p](KernelContext& k) { run_matmul(p, k); };
  return op;
}

PreparedOp prepare_gemm(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
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
    ctx.expect_dtype(2, {DataType::float32});
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
  op.outputs = {TensorInfo{DataType::float32, {m, n}}};
  op.kernel = [=](KernelContext& kc) {
    const float* a = kc.input(0).data<float>();
    const float* b = kc.input(1).data<float>();
    float* y = kc.output(0).data<float>();
    float y_beta = 0.0f;
    if (has_c && beta != 0.0f) {
      const float* c = kc.input(2).data<float>();
      for (int64_t i = 0; i < m; ++i) {
        const float* crow = c + (c_rows == 1 ? 0 : i * c_cols);
        for (int64_t j = 0; j < n; ++j) {
          y[i * n + j] = beta * crow[c_cols == 1 ? 0 : j];
        }
      }
      y_beta = 1.0f;
    }
    parallel_gemm(kc.pool, trans_a, trans_b, m, n, k, alpha, a, as[1], b, bs[1], y_beta, y, n);
  };
  return op;
}

const OpRegistrar matmul_op{"MatMul", prepare_matmul};
const OpRegistrar gemm_op{"Gemm", prepare_gemm};

}  // namespace
}  // namespace rknnxx::host
