// AffineGrid (opset 20): the sampling grid of GridSample for a batch of affine matrices. For 2-D,
// theta [N, 2, 3] and size [N, C, H, W] give grid [N, H, W, 2], each point theta * (x, y, 1)
// of the normalized base grid; for 3-D, theta [N, 3, 4] and size [N, C, D, H, W] give
// [N, D, H, W, 3] from (x, y, z, 1). Along an axis of S points the base coordinates run from -1
// to 1: -1 + 2i / (S - 1) with align_corners (-1 for S = 1), else the pixel centres
// (2i + 1) / S - 1.

#include "constant_inputs.hpp"
#include "introduced.hpp"

#include <vector>

namespace rknnxx::host {
namespace {

std::vector<float> base_coordinates(int64_t size, bool align_corners) {
  std::vector<float> v(static_cast<std::size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const double c = align_corners
        ? (size > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1) : -1.0)
        : (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(size) - 1.0;
    v[static_cast<std::size_t>(i)] = static_cast<float>(c);
  }
  return v;
}

PreparedOp prepare_affine_grid(OpContext& ctx) {
  expect_introduced_in(ctx, 20);
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& theta = ctx.input(0).shape;
  if (theta.size() != 3 || !((theta[1] == 2 && theta[2] == 3) || (theta[1] == 3 && theta[2] == 4))) {
    ctx.fail("input '{}' has shape {}, expected [N, 2, 3] or [N, 3, 4]", ctx.input_name(0), shape_string(theta));
  }
  const std::vector<int64_t> size = constant_ints(ctx, 1, "output size");
  const bool three_d = theta[1] == 3;
  const std::size_t axes = three_d ? 3 : 2;
  if (size.size() != axes + 2 || size[0] != theta[0]) {
    ctx.fail("input '{}' (the size) is {}, expected [{}, C, {}] for theta of shape {}", ctx.input_name(1),
             shape_string(size), theta[0], three_d ? "D, H, W" : "H, W", shape_string(theta));
  }
  const bool align_corners = ctx.attr_int("align_corners", 0) != 0;
  // The spatial extents, D (1 in 2-D), H, W.
  const int64_t depth = three_d ? size[2] : 1, height = size[size.size() - 2], width = size[size.size() - 1];
  std::vector<int64_t> out_shape{theta[0]};
  out_shape.insert(out_shape.end(), size.begin() + 2, size.end());
  out_shape.push_back(static_cast<int64_t>(axes));
  (void)element_count(out_shape);  // negative or wrapping extents fail here, naming the shape
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::float32, out_shape}};
  op.kernel = [=, xs = base_coordinates(width, align_corners), ys = base_coordinates(height, align_corners),
               zs = base_coordinates(depth, align_corners)](KernelContext& k) {
    const float* t = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    const auto columns = static_cast<int64_t>(axes) + 1;
    const int64_t rows = theta[0] * depth * height;
    k.pool.parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, width)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t r = begin; r < end; ++r) {
                            const int64_t n = r / (depth * height);
                            const int64_t d = r / height % depth, h = r % height;
                            const float* m = t + n * static_cast<int64_t>(axes) * columns;
                            float* dst = out + r * width * static_cast<int64_t>(axes);
                            const float y = ys[static_cast<std::size_t>(h)];
                            const float z = three_d ? zs[static_cast<std::size_t>(d)] : 0.0f;
                            // Each output coordinate: m[j][0] * x + (the part constant along the row).
                            for (std::size_t j = 0; j < axes; ++j) {
                              const float* mj = m + static_cast<int64_t>(j) * columns;
                              const float constant = three_d ? mj[1] * y + mj[2] * z + mj[3] : mj[1] * y + mj[2];
                              const float a = mj[0];
                              for (int64_t w = 0; w < width; ++w) {
                                dst[w * static_cast<int64_t>(axes) + static_cast<int64_t>(j)] =
                                    a * xs[static_cast<std::size_t>(w)] + constant;
                              }
                            }
                          }
                        });
  };
  return op;
}

const OpRegistrar affine_grid_op{"AffineGrid", prepare_affine_grid};

}  // namespace
}  // namespace rknnxx::host
