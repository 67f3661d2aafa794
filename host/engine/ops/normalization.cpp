// Normalizations over parts of a tensor: LayerNormalization (the axes from `axis` on, with its
// optional Mean and InvStdDev outputs), InstanceNormalization (each channel of each image),
// MeanVarianceNormalization (over `axes`), LRN (across channels), LpNormalization (dividing by
// the 1- or 2-norm along an axis) and GroupNormalization (opset 18: scale and bias per group;
// opset 21: per channel). Statistics accumulate in double: a row of thousands of floats keeps
// float precision.

#include "../broadcast.hpp"
#include "../op_registry.hpp"
#include "introduced.hpp"

#include <cmath>
#include <cstring>

namespace rknnxx::host {
namespace {

struct Moments {
  double mean = 0.0;
  double variance = 0.0;
};

// Mean and (biased) variance of n values at `stride` apart.
Moments moments(const float* x, int64_t n, int64_t stride = 1) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    sum += x[i * stride];
  }
  Moments m;
  m.mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  double squares = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i * stride] - m.mean;
    squares += d * d;
  }
  m.variance = n > 0 ? squares / static_cast<double>(n) : 0.0;
  return m;
}

// Copies input i broadcast (unidirectionally) to `shape` into `dst`, so that the kernels index
// Scale and B alike whatever shape they were given.
void expand_to(const Tensor& t, const std::vector<int64_t>& shape, float* dst) {
  const std::vector<std::vector<int64_t>> shapes{shape, t.shape()};
  const Broadcast bc(shapes);
  const float* src = t.data<float>();
  bc.for_each_run(0, bc.elements(),
                  [&](int64_t o, std::span<const int64_t> offsets, std::span<const int64_t> steps, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) {
                      dst[o + i] = src[offsets[1] + i * steps[1]];
                    }
                  });
}

// How InstanceNormalization and GroupNormalization split the channels of an [N, C, D1, ...] input:
// `groups` groups of `per_group` consecutive channels, Scale and B given per channel or per group.
struct Groups {
  int64_t groups = 1;
  int64_t per_group = 1;
  bool per_channel_parameters = true;
};

// Mean and variance over each group of each image, then y = scale * (x - mean) / sqrt(variance +
// epsilon) + bias. Inputs: X, Scale, B (checked by the caller).
PreparedOp normalized_groups(const OpContext& ctx, Groups split) {
  const auto& x = ctx.input(0).shape;
  const float epsilon = ctx.attr_float("epsilon", 1e-5f);
  const int64_t plane = element_count(std::span(x).subspan(2));
  const int64_t group_size = split.per_group * plane;
  const int64_t tasks = x[0] * split.groups;
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [=](KernelContext& k) {
    const float* scale = k.input(1).data<float>();
    const float* bias = k.input(2).data<float>();
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    k.pool.parallel_for(tasks, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, group_size)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t t = begin; t < end; ++t) {
                            const int64_t g = t % split.groups;
                            const Moments m = moments(in + t * group_size, group_size);
                            const double inv = 1.0 / std::sqrt(m.variance + epsilon);
                            for (int64_t j = 0; j < split.per_group; ++j) {
                              const int64_t param = split.per_channel_parameters ? g * split.per_group + j : g;
                              const auto a = static_cast<float>(scale[param] * inv);
                              const auto b = static_cast<float>(bias[param] - m.mean * scale[param] * inv);
                              const float* src = in + t * group_size + j * plane;
                              float* dst = out + t * group_size + j * plane;
                              for (int64_t i = 0; i < plane; ++i) {
                                dst[i] = src[i] * a + b;
                              }
                            }
                          }
                        });
  };
  return op;
}

// Input i must broadcast unidirectionally to `shape` (the normalized part).
void expect_broadcasts_to(const OpContext& ctx, std::size_t i, const std::vector<int64_t>& shape) {
  const std::vector<std::vector<int64_t>> shapes{shape, ctx.input(i).shape};
  std::string error;
  const auto result = broadcast_shape(shapes, error);
  if (!error.empty() || result != shape) {
    ctx.fail("input '{}' of shape {} does not broadcast to the normalized shape {}", ctx.input_name(i),
             shape_string(ctx.input(i).shape), shape_string(shape));
  }
}

PreparedOp prepare_layer_normalization(OpContext& ctx) {
  ctx.expect_inputs(2, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    if (ctx.has_input(i)) {
      ctx.expect_dtype(i, {DataType::float32});
    }
  }
  if (const int64_t stash = ctx.attr_int("stash_type", 1); stash != 1) {
    ctx.fail("attribute 'stash_type' is {}; the host engine computes the statistics in float32 (1)", stash);
  }
  const auto& shape = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0) {
    ctx.fail("input '{}' must have rank 1 or more", ctx.input_name(0));
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", -1), rank));
  const std::vector<int64_t> normalized(shape.begin() + static_cast<std::ptrdiff_t>(axis), shape.end());
  expect_broadcasts_to(ctx, 1, normalized);
  const bool has_bias = ctx.has_input(2);
  if (has_bias) {
    expect_broadcasts_to(ctx, 2, normalized);
  }
  const float epsilon = ctx.attr_float("epsilon", 1e-5f);
  const int64_t rows = element_count(std::span(shape).first(axis));
  const int64_t length = element_count(normalized);
  std::vector<int64_t> stat_shape = shape;
  std::fill(stat_shape.begin() + static_cast<std::ptrdiff_t>(axis), stat_shape.end(), 1);
  PreparedOp op;
  op.outputs = {ctx.input(0), TensorInfo{DataType::float32, stat_shape}, TensorInfo{DataType::float32, stat_shape}};
  op.outputs.resize(ctx.output_count());
  op.scratch_bytes = 2 * static_cast<std::size_t>(length) * sizeof(float);
  op.kernel = [=](KernelContext& k) {
    auto* scale = reinterpret_cast<float*>(k.scratch);
    float* bias = scale + length;
    expand_to(k.input(1), normalized, scale);
    if (has_bias) {
      expand_to(k.input(2), normalized, bias);
    } else {
      std::fill(bias, bias + length, 0.0f);
    }
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    float* mean_out = k.outputs.size() > 1 && k.outputs[1] != nullptr ? k.output(1).data<float>() : nullptr;
    float* inv_out = k.outputs.size() > 2 && k.outputs[2] != nullptr ? k.output(2).data<float>() : nullptr;
    k.pool.parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, length)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t r = begin; r < end; ++r) {
                            const float* x = in + r * length;
                            float* y = out + r * length;
                            const Moments m = moments(x, length);
                            const auto mean = static_cast<float>(m.mean);
                            const auto inv = static_cast<float>(1.0 / std::sqrt(m.variance + epsilon));
                            for (int64_t i = 0; i < length; ++i) {
                              y[i] = (x[i] - mean) * inv * scale[i] + bias[i];
                            }
                            if (mean_out != nullptr) mean_out[r] = mean;
                            if (inv_out != nullptr) inv_out[r] = inv;
                          }
                        });
  };
  return op;
}

PreparedOp prepare_instance_normalization(OpContext& ctx) {
  ctx.expect_inputs(3, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    ctx.expect_dtype(i, {DataType::float32});
  }
  const auto& x = ctx.input(0).shape;
  if (x.size() < 3) {
    ctx.fail("input '{}' has shape {}, expected [N, C, D1, ...]", ctx.input_name(0), shape_string(x));
  }
  const int64_t channels = x[1];
  for (std::size_t i = 1; i < 3; ++i) {
    if (ctx.input(i).shape != std::vector<int64_t>{channels}) {
      ctx.fail("input '{}' has shape {}, expected [{}]", ctx.input_name(i), shape_string(ctx.input(i).shape), channels);
    }
  }
  // Each channel of each image is a group of its own, with its own parameters.
  return normalized_groups(ctx, Groups{.groups = channels, .per_group = 1, .per_channel_parameters = true});
}

// y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta.
PreparedOp prepare_lrn(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& x = ctx.input(0).shape;
  if (x.size() < 3) {
    ctx.fail("input '{}' has shape {}, expected [N, C, D1, ...]", ctx.input_name(0), shape_string(x));
  }
  const int64_t size = ctx.attr_int("size", 0);
  if (size < 1) {
    ctx.fail("attribute 'size' is {}, expected a positive channel count", size);
  }
  const float alpha = ctx.attr_float("alpha", 1e-4f);
  const float beta = ctx.attr_float("beta", 0.75f);
  const float bias = ctx.attr_float("bias", 1.0f);
  const int64_t batch = x[0];
  const int64_t channels = x[1];
  const int64_t plane = element_count(std::span(x).subspan(2));
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [=](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    const float scaled_alpha = alpha / static_cast<float>(size);
    k.pool.parallel_for(batch * channels, std::max<int64_t>(1, 1024 / std::max<int64_t>(1, plane)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t t = begin; t < end; ++t) {
                            const int64_t n = t / channels;
                            const int64_t c = t % channels;
                            const int64_t first = std::max<int64_t>(0, c - before);
                            const int64_t last = std::min(channels - 1, c + after);
                            const float* src = in + t * plane;
                            float* dst = out + t * plane;
                            for (int64_t i = 0; i < plane; ++i) {
                              float sum = 0.0f;
                              for (int64_t j = first; j <= last; ++j) {
                                const float v = in[(n * channels + j) * plane + i];
                                sum += v * v;
                              }
                              dst[i] = src[i] / std::pow(bias + scaled_alpha * sum, beta);
                            }
                          }
                        });
  };
  return op;
}

// (x - mean) / (sqrt(variance) + 1e-9) with the statistics over `axes` (default N, H, W).
PreparedOp prepare_mean_variance_normalization(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : ctx.attr_ints("axes", {0, 2, 3})) {
    reduced[static_cast<std::size_t>(ctx.normalize_axis(a, rank))] = true;
  }
  // Offsets of the elements of one group (the reduced axes) and of each group's first element.
  std::vector<int64_t> group{0};
  std::vector<int64_t> starts{0};
  int64_t stride = 1;
  for (auto a = rank; a-- > 0;) {
    const auto i = static_cast<std::size_t>(a);
    auto& list = reduced[i] ? group : starts;
    std::vector<int64_t> next;
    for (int64_t j = 0; j < shape[i]; ++j) {
      for (int64_t b : list) {
        next.push_back(b + j * stride);
      }
    }
    list = std::move(next);
    stride *= shape[i];
  }
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [group = std::move(group), starts = std::move(starts)](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    const auto n = static_cast<double>(std::max<std::size_t>(group.size(), 1));
    for (int64_t s : starts) {
      double sum = 0.0;
      double squares = 0.0;
      for (int64_t g : group) {
        sum += in[s + g];
        squares += static_cast<double>(in[s + g]) * in[s + g];
      }
      const double mean = sum / n;
      const double deviation = std::sqrt(std::max(0.0, squares / n - mean * mean)) + 1e-9;
      for (int64_t g : group) {
        out[s + g] = static_cast<float>((in[s + g] - mean) / deviation);
      }
    }
  };
  return op;
}

// y = x / ||x||_p along `axis` (p 1 or 2). A zero vector gives zeros: the operator's definition
// leaves the division by zero open, and zeros keep NaN out of the network.
PreparedOp prepare_lp_normalization(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const auto& shape = ctx.input(0).shape;
  const auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0) {
    ctx.fail("input '{}' must have rank 1 or more", ctx.input_name(0));
  }
  const auto axis = static_cast<std::size_t>(ctx.normalize_axis(ctx.attr_int("axis", -1), rank));
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) {
    ctx.fail("attribute 'p' is {}, expected 1 or 2", p);
  }
  const int64_t outer = element_count(std::span(shape).first(axis));
  const int64_t length = shape[axis];
  const int64_t inner = element_count(std::span(shape).subspan(axis + 1));
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  // One norm per (outer, inner) position: at most the input's element count.
  op.scratch_bytes =
      static_cast<std::size_t>(checked_mul(checked_mul(outer, inner, "LpNormalization norms"),
                                           static_cast<int64_t>(sizeof(double)), "LpNormalization norms"));
  op.kernel = [=](KernelContext& k) {
    const float* in = k.input(0).data<float>();
    float* out = k.output(0).data<float>();
    auto* norms = reinterpret_cast<double*>(k.scratch);
    const auto scale_of = [p](double sum) { return sum > 0.0 ? 1.0 / (p == 2 ? std::sqrt(sum) : sum) : 0.0; };
    k.pool.parallel_for(outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, length * inner)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t o = begin; o < end; ++o) {
                            const float* x = in + o * length * inner;
                            float* y = out + o * length * inner;
                            double* norm = norms + o * inner;
                            // Rows of `inner` contiguous values: each step of the axis adds one row.
                            std::fill(norm, norm + inner, 0.0);
                            for (int64_t a = 0; a < length; ++a) {
                              const float* row = x + a * inner;
                              if (p == 2) {
                                for (int64_t i = 0; i < inner; ++i) norm[i] += static_cast<double>(row[i]) * row[i];
                              } else {
                                for (int64_t i = 0; i < inner; ++i) norm[i] += std::fabs(static_cast<double>(row[i]));
                              }
                            }
                            for (int64_t i = 0; i < inner; ++i) norm[i] = scale_of(norm[i]);
                            for (int64_t a = 0; a < length; ++a) {
                              const float* row = x + a * inner;
                              float* dst = y + a * inner;
                              for (int64_t i = 0; i < inner; ++i) dst[i] = static_cast<float>(row[i] * norm[i]);
                            }
                          }
                        });
  };
  return op;
}

// Mean and variance over each group of num_groups consecutive channels of each image, then
// y = scale * (x - mean) / sqrt(variance + epsilon) + bias, with scale and bias given per group
// (opset 18) or per channel (opset 21).
PreparedOp prepare_group_normalization(OpContext& ctx) {
  expect_introduced_in(ctx, 18);
  ctx.expect_inputs(3, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    ctx.expect_dtype(i, {DataType::float32});
  }
  if (const int64_t stash = ctx.attr_int("stash_type", 1); stash != 1) {
    ctx.fail("attribute 'stash_type' is {}; the host engine computes the statistics in float32 (1)", stash);
  }
  const auto& x = ctx.input(0).shape;
  if (x.size() < 2) {
    ctx.fail("input '{}' has shape {}, expected [N, C, D1, ...]", ctx.input_name(0), shape_string(x));
  }
  const int64_t channels = x[1];
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups < 1 || channels % groups != 0) {
    ctx.fail("attribute 'num_groups' is {}, expected a positive divisor of the {} channels", groups, channels);
  }
  const bool per_channel = ctx.opset() >= 21;
  const int64_t params = per_channel ? channels : groups;
  for (std::size_t i = 1; i < 3; ++i) {
    if (ctx.input(i).shape != std::vector<int64_t>{params}) {
      ctx.fail("input '{}' has shape {}, expected [{}] (one value per {} in opset {})", ctx.input_name(i),
               shape_string(ctx.input(i).shape), params, per_channel ? "channel" : "group", ctx.opset());
    }
  }
  return normalized_groups(
      ctx, Groups{.groups = groups, .per_group = channels / groups, .per_channel_parameters = per_channel});
}

const OpRegistrar layer_normalization_op{"LayerNormalization", prepare_layer_normalization};
const OpRegistrar instance_normalization_op{"InstanceNormalization", prepare_instance_normalization};
const OpRegistrar lrn_op{"LRN", prepare_lrn};
const OpRegistrar mean_variance_normalization_op{"MeanVarianceNormalization", prepare_mean_variance_normalization};
const OpRegistrar lp_normalization_op{"LpNormalization", prepare_lp_normalization};
const OpRegistrar group_normalization_op{"GroupNormalization", prepare_group_normalization};

}  // namespace
}  // namespace rknnxx::host
