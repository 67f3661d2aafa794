// MatMulInteger and QLinearMatMul (opset 10): products of int8/uint8 matrices with MatMul's
// shapes (matmul_plan.hpp), exact: (a - a_zero_point) x (b - b_zero_point) accumulates in
// int32. MatMulInteger outputs that; QLinearMatMul requantizes it (requantize.hpp),
//   y = saturate(round_half_to_even(acc * (a_scale * b_scale / y_scale)) + y_zero_point).
// Zero points and scales are per tensor (one value) or per row of a / per column of b (1-D,
// of the matrix's rows or columns).

#include "../op_registry.hpp"
#include "matmul_plan.hpp"
#include "requantize.hpp"

#include <algorithm>
#include <vector>

namespace rknnxx::host {
namespace {

// acc[batch] = (a - a_zero) x (b - b_zero) over every batch of the plan, in int32, as
// row-major [m, n] blocks of `acc`. Each output row is accumulated over k in the order that
// streams b's rows, so the loop is as fast as a plain loop over the output allows.
template <class A, class B> void integer_product(const MatMulPlan& p, ThreadPool& pool, const A* a, const B* b,
                                                 const Tensor* a_zero, const Tensor* b_zero, int32_t* acc) {
  std::vector<int32_t> b_zeros(static_cast<std::size_t>(p.n));
  for (int64_t j = 0; j < p.n; ++j) {
    b_zeros[static_cast<std::size_t>(j)] = parameter<int32_t>(b_zero, j);
  }
  const int64_t batches = p.batches.elements();
  std::vector<int64_t> a_index(static_cast<std::size_t>(batches));
  std::vector<int64_t> b_index(static_cast<std::size_t>(batches));
  p.batches.for_each_run(0, batches,
                         [&](int64_t o, std::span<const int64_t> off, std::span<const int64_t> st, int64_t len) {
                           for (int64_t j = 0; j < len; ++j) {
                             a_index[static_cast<std::size_t>(o + j)] = off[0] + j * st[0];
                             b_index[static_cast<std::size_t>(o + j)] = off[1] + j * st[1];
                           }
                         });
  pool.parallel_for(
      batches * p.m, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.n * p.k)), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t batch = row / p.m;
          const int64_t i = row % p.m;
          const A* ar = a + (a_index[static_cast<std::size_t>(batch)] * p.m + i) * p.k;
          const B* bb = b + b_index[static_cast<std::size_t>(batch)] * p.k * p.n;
          const int32_t az = parameter<int32_t>(a_zero, i);
          int32_t* out = acc + row * p.n;
          std::fill(out, out + p.n, 0);
          for (int64_t kk = 0; kk < p.k; ++kk) {
            const int32_t av = static_cast<int32_t>(ar[kk]) - az;
            const B* br = bb + kk * p.n;
            for (int64_t j = 0; j < p.n; ++j) {
              // Wraps on overflow (k beyond 33,000 with extreme values) instead of being undefined.
              const int32_t term = av * (static_cast<int32_t>(br[j]) - b_zeros[static_cast<std::size_t>(j)]);
              out[j] = static_cast<int32_t>(static_cast<uint32_t>(out[j]) + static_cast<uint32_t>(term));
            }
          }
        }
      });
}

PreparedOp prepare_matmul_integer(OpContext& ctx) {
  ctx.expect_inputs(2, 4);
  ctx.expect_dtype(0, {DataType::int8, DataType::uint8});
  ctx.expect_dtype(1, {DataType::int8, DataType::uint8});
  std::vector<int64_t> out;
  const MatMulPlan p = plan_matmul(ctx, 0, 1, out);
  for (std::size_t i : {2, 3}) {
    if (ctx.has_input(i)) {
      ctx.expect_dtype(i, {ctx.input(i - 2).dtype});
      expect_parameter(ctx, i, i == 2 ? p.m : p.n, "zero point");
    }
  }
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::int32, out}};
  op.kernel = [p, a_type = ctx.input(0).dtype, b_type = ctx.input(1).dtype](KernelContext& k) {
    visit_int8_pair(a_type, b_type, [&]<class A, class B>() {
      integer_product<A, B>(p, k.pool, k.input(0).data<A>(), k.input(1).data<B>(), k.optional_input(2),
                            k.optional_input(3), k.output(0).data<int32_t>());
    });
  };
  return op;
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
PreparedOp prepare_qlinear_matmul(OpContext& ctx) {
  ctx.expect_inputs(8, 8);
  ctx.expect_dtype(0, {DataType::int8, DataType::uint8});
  ctx.expect_dtype(3, {DataType::int8, DataType::uint8});
  ctx.expect_dtype(7, {DataType::int8, DataType::uint8});
  std::vector<int64_t> out;
  const MatMulPlan p = plan_matmul(ctx, 0, 3, out);
  for (std::size_t i : {1, 4, 6}) {
    ctx.expect_dtype(i, {DataType::float32});
  }
  ctx.expect_dtype(2, {ctx.input(0).dtype});
  ctx.expect_dtype(5, {ctx.input(3).dtype});
  expect_parameter(ctx, 1, p.m, "a_scale");
  expect_parameter(ctx, 2, p.m, "a_zero_point");
  expect_parameter(ctx, 4, p.n, "b_scale");
  expect_parameter(ctx, 5, p.n, "b_zero_point");
  expect_parameter(ctx, 6, 1, "y_scale");
  expect_parameter(ctx, 7, 1, "y_zero_point");
  const DataType y_type = ctx.input(7).dtype;
  const int64_t count = element_count(out);
  PreparedOp op;
  op.outputs = {TensorInfo{y_type, out}};
  op.scratch_bytes = static_cast<std::size_t>(count) * sizeof(int32_t);
  op.kernel = [p, count, a_type = ctx.input(0).dtype, b_type = ctx.input(3).dtype, y_type](KernelContext& k) {
    auto* acc = reinterpret_cast<int32_t*>(k.scratch);
    visit_int8_pair(a_type, b_type, [&]<class A, class B>() {
      integer_product<A, B>(p, k.pool, k.input(0).data<A>(), k.input(3).data<B>(), &k.input(2), &k.input(5), acc);
    });
    const float y_scale = parameter<float>(&k.input(6), 0);
    const int32_t y_zero = parameter<int32_t>(&k.input(7), 0);
    std::vector<float> multiplier(static_cast<std::size_t>(p.m * p.n));
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        multiplier[static_cast<std::size_t>(i * p.n + j)] =
            requantize_multiplier(parameter<float>(&k.input(1), i), parameter<float>(&k.input(4), j), y_scale);
      }
    }
    visit_dtype(y_type, [&]<class Y>() {
      if constexpr (std::is_same_v<Y, int8_t> || std::is_same_v<Y, uint8_t>) {
        Y* y = k.output(0).data<Y>();
        const int64_t block = p.m * p.n;
        k.pool.parallel_for(count, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
          for (int64_t e = begin; e < end; ++e) {
            y[e] = requantize<Y>(acc[e], multiplier[static_cast<std::size_t>(e % block)], y_zero);
          }
        });
      }
    });
  };
  return op;
}

const OpRegistrar matmul_integer_op{"MatMulInteger", prepare_matmul_integer};
const OpRegistrar qlinear_matmul_op{"QLinearMatMul", prepare_qlinear_matmul};

}  // namespace
}  // namespace rknnxx::host
