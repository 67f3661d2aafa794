// Det (opset 11): the determinant of each square matrix in the innermost two axes of a float32
// or float64 tensor [*, M, M], by LU decomposition with partial pivoting in double (O(M^3) per
// matrix, as any practical determinant).

#include "../op_registry.hpp"

#include <cmath>
#include <utility>
#include <vector>

namespace rknnxx::host {
namespace {

double determinant(std::vector<double>& a, int64_t m) {
  double det = 1.0;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r) {
      if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) {
        pivot = r;
      }
    }
    if (a[pivot * m + c] == 0.0) {
      return 0.0;  // singular
    }
    if (pivot != c) {
      for (int64_t j = 0; j < m; ++j) {
        std::swap(a[c * m + j], a[pivot * m + j]);
      }
      det = -det;
    }
    const double d = a[c * m + c];
    det *= d;
    for (int64_t r = c + 1; r < m; ++r) {
      const double f = a[r * m + c] / d;
      for (int64_t j = c + 1; j < m; ++j) {
        a[r * m + j] -= f * a[c * m + j];
      }
    }
  }
  return det;
}

PreparedOp prepare_det(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32, DataType::float64});
  const TensorInfo in = ctx.input(0);
  const auto rank = in.shape.size();
  if (rank < 2 || in.shape[rank - 1] != in.shape[rank - 2]) {
    ctx.fail("input '{}' has shape {}, expected [*, M, M]", ctx.input_name(0), shape_string(in.shape));
  }
  const int64_t m = in.shape[rank - 1];
  std::vector<int64_t> shape(in.shape.begin(), in.shape.end() - 2);
  const int64_t matrices = element_count(shape);
  PreparedOp op;
  op.outputs = {TensorInfo{in.dtype, shape}};
  op.kernel = [m, matrices, dtype = in.dtype](KernelContext& k) {
    auto run = [&]<class T>() {
      const T* src = k.input(0).data<T>();
      T* dst = k.output(0).data<T>();
      k.pool.parallel_for(matrices, 1, [&](int64_t begin, int64_t end) {
        std::vector<double> a(static_cast<std::size_t>(m * m));
        for (int64_t i = begin; i < end; ++i) {
          for (int64_t j = 0; j < m * m; ++j) {
            a[static_cast<std::size_t>(j)] = static_cast<double>(src[i * m * m + j]);
          }
          dst[i] = static_cast<T>(determinant(a, m));
        }
      });
    };
    if (dtype == DataType::float64) {
      run.template operator()<double>();
    } else {
      run.template operator()<float>();
    }
  };
  return op;
}

const OpRegistrar det_op{"Det", prepare_det};

}  // namespace
}  // namespace rknnxx::host
