#pragma once
// The shapes of a MatMul-like product (numpy semantics: 1-D promotion, broadcast batch
// dimensions), shared by MatMul and the integer products (MatMulInteger, QLinearMatMul).

#include "../broadcast.hpp"
#include "../op_registry.hpp"

#include <cstdint>
#include <vector>

namespace rknnxx::host {

struct MatMulPlan {
  int64_t m = 0, n = 0, k = 0;
  std::vector<int64_t> a_batch, b_batch;  // batch shapes (without the matrix dimensions)
  Broadcast batches{std::vector<std::vector<int64_t>>{{}, {}}};
  bool fold_batch_into_m = false;  // B has no batch: A's batches are rows of one big product
};

// The plan for the product of inputs `ai` and `bi` of `ctx`, whose shapes it checks; `out`
// receives the output shape.
inline MatMulPlan plan_matmul(const OpContext& ctx, std::size_t ai, std::size_t bi, std::vector<int64_t>& out) {
  std::vector<int64_t> as = ctx.input(ai).shape;
  std::vector<int64_t> bs = ctx.input(bi).shape;
  if (as.empty() || bs.empty()) {
    ctx.fail("inputs must have rank 1 or more, given {} and {}", shape_string(as), shape_string(bs));
  }
  const bool a_vector = as.size() == 1;
  const bool b_vector = bs.size() == 1;
  if (a_vector) {
    as.insert(as.begin(), 1);
  }
  if (b_vector) {
    bs.push_back(1);
  }
  MatMulPlan p;
  p.m = as[as.size() - 2];
  p.k = as.back();
  p.n = bs.back();
  if (bs[bs.size() - 2] != p.k) {
    ctx.fail("inputs '{}' {} and '{}' {} cannot be multiplied: {} columns against {} rows", ctx.input_name(ai),
             shape_string(ctx.input(ai).shape), ctx.input_name(bi), shape_string(ctx.input(bi).shape), p.k,
             bs[bs.size() - 2]);
  }
  p.a_batch.assign(as.begin(), as.end() - 2);
  p.b_batch.assign(bs.begin(), bs.end() - 2);
  std::string error;
  const std::vector<std::vector<int64_t>> batch_shapes{p.a_batch, p.b_batch};
  std::vector<int64_t> batch = broadcast_shape(batch_shapes, error);
  if (!error.empty()) {
    ctx.fail("batch dimensions of '{}' and '{}': {}", ctx.input_name(ai), ctx.input_name(bi), error);
  }
  p.batches = Broadcast(batch_shapes);
  p.fold_batch_into_m = element_count(p.b_batch) == 1 && batch.size() >= p.a_batch.size() &&
      element_count(batch) == element_count(p.a_batch);
  out = batch;
  if (!a_vector) {
    out.push_back(p.m);
  }
  if (!b_vector) {
    out.push_back(p.n);
  }
  return p;
}

}  // namespace rknnxx::host
