#pragma once
// The element-wise chain Graph::fuse_for_inference (fusion.cpp) folds into a Conv, applied to the Conv's
// output while it is in cache: a list of steps, each a unary function of the value or the residual Add
// (the Conv's input 3, shaped as its output). Stored on the node as two attributes, decided once per graph
// (docs/runtime-extensions.md, "Fused element-wise chains"); one rule for both Conv paths (conv.cpp's kernels
// and oneDNN's post-ops in conv_onednn.cpp).

#include "../four_lanes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

namespace rknnxx::host {

class OpContext;

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

struct Epilogue;
// The chain stored on a node by fusion.cpp (empty without the attributes), checked as any attribute: known steps,
// two parameters each, at most one residual Add (conv.cpp).
Epilogue epilogue_attributes(const OpContext& ctx);

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
  // `residual` is the matching row of input 3 (used by an add step). Four values at a time with the
  // compilers' vector extensions (SSE2, NEON): g++ -O2 leaves these loops scalar, with a branch per min
  // and max, and they were a fifth of the OCR recognizer's run.
  void apply(float* row, int64_t n, float bias, bool with_bias, const float* residual, std::size_t first = 0,
             std::size_t last = std::numeric_limits<std::size_t>::max()) const {
    last = std::min(last, steps.size());
    if (with_bias && first < last && steps[first].kind == EpilogueKind::clamp) {  // one pass for both
      const float a = steps[first].a, b = steps[first].b;
      each4(row, nullptr, n, [=](f32x4 v, f32x4) { return clamp(v + bias, a, b); });
      ++first;
    } else if (with_bias && bias != 0.0f) {
      each4(row, nullptr, n, [=](f32x4 v, f32x4) { return v + bias; });
    }
    for (std::size_t s = first; s < last; ++s) {
      const float a = steps[s].a, b = steps[s].b;
      switch (steps[s].kind) {
        case EpilogueKind::clamp: each4(row, nullptr, n, [=](f32x4 v, f32x4) { return clamp(v, a, b); }); break;
        case EpilogueKind::hard_swish:
          each4(row, nullptr, n, [=](f32x4 v, f32x4) { return v * clamp(a * v + b, 0.0f, 1.0f); });
          break;
        case EpilogueKind::hard_sigmoid:
          each4(row, nullptr, n, [=](f32x4 v, f32x4) { return clamp(a * v + b, 0.0f, 1.0f); });
          break;
        case EpilogueKind::sigmoid:
          each4(row, nullptr, n, [](f32x4 v, f32x4) {
            for (int l = 0; l < 4; ++l) v[l] = 1.0f / (1.0f + std::exp(-v[l]));
            return v;
          });
          break;
        case EpilogueKind::silu:
          each4(row, nullptr, n, [](f32x4 v, f32x4) {
            for (int l = 0; l < 4; ++l) v[l] = v[l] * (1.0f / (1.0f + std::exp(-v[l])));
            return v;
          });
          break;
        case EpilogueKind::add: each4(row, residual, n, [](f32x4 v, f32x4 r) { return v + r; }); break;
        case EpilogueKind::affine: each4(row, nullptr, n, [=](f32x4 v, f32x4) { return a * v + b; }); break;
      }
    }
  }

private:
  // std::min(std::max(v, lo), hi) lane by lane, NaN kept as std::min and std::max keep it.
  static f32x4 clamp(f32x4 v, float lo, float hi) {
    const f32x4 l{lo, lo, lo, lo}, h{hi, hi, hi, hi};
    v = v < l ? l : v;
    return h < v ? h : v;
  }

  // row[i] = f(row[i..i+4), other[i..i+4)) four at a time, the tail through a zero-padded vector.
  template <class F> static void each4(float* row, const float* other, int64_t n, F f) {
    int64_t i = 0;
    f32x4 o{};
    for (; i + 4 <= n; i += 4) {
      if (other != nullptr) o = load4(other + i);
      store4(row + i, f(load4(row + i), o));
    }
    if (i < n) {
      const auto count = static_cast<std::size_t>(n - i);
      if (other != nullptr) o = load4_partial(other + i, count);
      store4_partial(row + i, f(load4_partial(row + i, count), o), count);
    }
  }
};

}  // namespace rknnxx::host
