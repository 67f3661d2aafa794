#pragma once
// The element-wise chain Graph::fuse_for_inference (fusion.cpp) folds into a Conv, applied to the Conv's
// output while it is in cache: a list of steps, each a unary function of the value or the residual Add
// (the Conv's input 3, shaped as its output). Stored on the node as two attributes, decided once per graph
// (docs/runtime-extensions.md, "Fused element-wise chains"); one rule for both Conv paths (conv.cpp's kernels
// and oneDNN's post-ops in conv_onednn.cpp).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace rknnxx::host {

// Names of the attributes (not ONNX attributes): the step kinds, and two parameters per step.
constexpr std::string_view epilogue_kinds_attribute = "rknnxx.epilogue";
constexpr std::string_view epilogue_params_attribute = "rknnxx.epilogue_params";

enum class EpilogueKind : int64_t {
  clamp = 1,         // min(max(x, a), b): Relu, Clip
  hard_swish = 2,    // x * clamp(a * x + b, 0, 1): HardSwish, HardSigmoid then Mul by its input
  hard_sigmoid = 3,  // clamp(a * x + b, 0, 1)
  sigmoid = 4,       // 1 / (1 + exp(-x))
  silu = 5,          // x * sigmoid(x): Sigmoid then Mul by its input
  add = 6,           // x + residual (the Conv's input 3), element by element
  affine = 7,        // a * x + b: Mul, Div, Add, Sub by scalar constants (Paddle's learnable affine blocks)
};
constexpr EpilogueKind last_epilogue_kind = EpilogueKind::affine;

struct EpilogueStep {
  EpilogueKind kind = EpilogueKind::clamp;
  float a = 0.0f;
  float b = 0.0f;
};

struct Epilogue {
  std::vector<EpilogueStep> steps;

  bool empty() const noexcept { return steps.empty(); }
  bool has_residual() const noexcept {
    return std::any_of(steps.begin(), steps.end(), [](const EpilogueStep& s) { return s.kind == EpilogueKind::add; });
  }
  // The steps before the residual Add (all of them without one).
  std::size_t steps_before_residual() const noexcept {
    std::size_t i = 0;
    while (i < steps.size() && steps[i].kind != EpilogueKind::add) ++i;
    return i;
  }
  // Whether the chain is one clamp (the case conv.cpp's kernels apply inside their stores).
  bool is_clamp() const noexcept { return steps.size() == 1 && steps[0].kind == EpilogueKind::clamp; }

  // Steps [first, last) on n values of one output channel; bias added before them when `with_bias`.
  // `residual` is the matching row of input 3 (used by an add step).
  void apply(float* row, int64_t n, float bias, bool with_bias, const float* residual, std::size_t first = 0,
             std::size_t last = std::numeric_limits<std::size_t>::max()) const {
    last = std::min(last, steps.size());
    if (with_bias && first < last && steps[first].kind == EpilogueKind::clamp) {  // one pass for both
      const float a = steps[first].a, b = steps[first].b;
      for (int64_t i = 0; i < n; ++i) row[i] = std::min(std::max(row[i] + bias, a), b);
      ++first;
    } else if (with_bias && bias != 0.0f) {
      for (int64_t i = 0; i < n; ++i) row[i] += bias;
    }
    for (std::size_t s = first; s < last; ++s) {
      const float a = steps[s].a, b = steps[s].b;
      switch (steps[s].kind) {
        case EpilogueKind::clamp:
          for (int64_t i = 0; i < n; ++i) row[i] = std::min(std::max(row[i], a), b);
          break;
        case EpilogueKind::hard_swish:
          for (int64_t i = 0; i < n; ++i) row[i] = row[i] * std::min(std::max(a * row[i] + b, 0.0f), 1.0f);
          break;
        case EpilogueKind::hard_sigmoid:
          for (int64_t i = 0; i < n; ++i) row[i] = std::min(std::max(a * row[i] + b, 0.0f), 1.0f);
          break;
        case EpilogueKind::sigmoid:
          for (int64_t i = 0; i < n; ++i) row[i] = 1.0f / (1.0f + std::exp(-row[i]));
          break;
        case EpilogueKind::silu:
          for (int64_t i = 0; i < n; ++i) row[i] = row[i] * (1.0f / (1.0f + std::exp(-row[i])));
          break;
        case EpilogueKind::add:
          for (int64_t i = 0; i < n; ++i) row[i] += residual[i];
          break;
        case EpilogueKind::affine:
          for (int64_t i = 0; i < n; ++i) row[i] = a * row[i] + b;
          break;
      }
    }
  }
};

}  // namespace rknnxx::host
