// NonMaxSuppression: per batch and class, boxes in falling score order (ties to the lower index)
// are kept unless they overlap a kept box by more than iou_threshold, up to
// max_output_boxes_per_class; output [selected, 3] rows (batch, class, box).
//
// How many boxes survive depends on the values: with constant inputs the result is computed while
// planning; fed by the network, while running (docs/conformance.md#run-time-shapes), bounded by
// min(max_output_boxes_per_class, boxes) rows per batch and class.

#include "../op_registry.hpp"
#include "constant_inputs.hpp"

#include <algorithm>
#include <numeric>

namespace rknnxx::host {
namespace {

struct Corners {
  float y1, x1, y2, x2;
};

Corners corners(const float* b, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

bool overlaps(const Corners& a, const Corners& b, float threshold) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0.0f || iw <= 0.0f) {
    return false;
  }
  const float inter = ih * iw;
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const float area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  const float uni = area_a + area_b - inter;
  return uni > 0.0f && inter / uni > threshold;
}

PreparedOp prepare_non_max_suppression(OpContext& ctx) {
  ctx.expect_inputs(2, 5);
  ctx.expect_dtype(0, {DataType::float32});
  ctx.expect_dtype(1, {DataType::float32});
  const auto& boxes_shape = ctx.input(0).shape;
  const auto& scores_shape = ctx.input(1).shape;
  if (boxes_shape.size() != 3 || boxes_shape[2] != 4 || scores_shape.size() != 3 || scores_shape[0] != boxes_shape[0] ||
      scores_shape[2] != boxes_shape[1]) {
    ctx.fail("boxes {} and scores {} must be [batch, boxes, 4] and [batch, classes, boxes]", shape_string(boxes_shape),
             shape_string(scores_shape));
  }
  const int64_t center_point = ctx.attr_int("center_point_box", 0);
  if (center_point != 0 && center_point != 1) {
    ctx.fail("attribute 'center_point_box' is {}, expected 0 or 1", center_point);
  }
  const int64_t batches = boxes_shape[0], count = boxes_shape[1], classes = scores_shape[1];
  bool all_known = true;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    all_known = all_known && (!ctx.has_input(i) || ctx.constant(i) != nullptr);
  }
  if (!all_known) {
    int64_t per_class = count;
    if (ctx.has_input(2) && ctx.constant(2) != nullptr) {
      const auto v = constant_ints(ctx, 2, "max_output_boxes_per_class");
      per_class = std::min(v.empty() ? 0 : std::max<int64_t>(v[0], 0), count);
    }
    return run_time_shaped(
        {TensorInfo{DataType::int64, {checked_mul(checked_mul(batches, classes, "rows"), per_class, "rows"), 3}}});
  }
  int64_t max_boxes = 0;
  if (ctx.has_input(2)) {
    const auto v = constant_ints(ctx, 2, "max_output_boxes_per_class");
    max_boxes = v.empty() ? 0 : v[0];
  }
  float iou_threshold = 0.0f;
  if (ctx.has_input(3)) {
    const auto v = constant_floats(ctx, 3, "iou_threshold");
    iou_threshold = v.empty() ? 0.0f : v[0];
  }
  bool has_score_threshold = false;
  float score_threshold = 0.0f;
  if (ctx.has_input(4)) {
    const auto v = constant_floats(ctx, 4, "score_threshold");
    has_score_threshold = !v.empty();
    score_threshold = has_score_threshold ? v[0] : 0.0f;
  }
  const Tensor* boxes = ctx.constant(0);
  const Tensor* scores = ctx.constant(1);
  std::vector<int64_t> selected;
  std::vector<int64_t> order;
  std::vector<Corners> kept;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = scores->data<float>() + (b * classes + c) * count;
      order.clear();
      for (int64_t i = 0; i < count; ++i) {
        if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_boxes) break;
        const Corners box = corners(boxes->data<float>() + (b * count + i) * 4, center_point == 1);
        if (std::none_of(kept.begin(), kept.end(), [&](const Corners& k) { return overlaps(k, box, iou_threshold); })) {
          kept.push_back(box);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
  }
  const auto rows = static_cast<int64_t>(selected.size() / 3);
  return constant_result(Tensor::from<int64_t>({rows, 3}, std::span<const int64_t>(selected)));
}

const OpRegistrar non_max_suppression_op{"NonMaxSuppression", prepare_non_max_suppression};

}  // namespace
}  // namespace rknnxx::host
