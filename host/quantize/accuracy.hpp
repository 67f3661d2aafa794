#pragma once
// Accuracy analysis of a quantized graph against its float graph, on one set of inputs: the
// toolkit's accuracy_analysis, off-board (docs/quantization.md). For every calibrated tensor, in
// execution order, the cosine similarity and the euclidean distance between the float values and
// the quantized ones, measured two ways:
//   entire  the quantized graph run end to end: a tensor carries the error of every layer before it;
//   single  every step run quantized on the float values of its inputs (rounded to their
//           parameters, which is what the int8 operator reads): the error the layer adds by itself.
// A layer whose entire cosine drops while its single cosine stays near 1 suffers from what comes
// before it; a low single cosine points at the layer itself (its weights or its output range).
//
//   auto report = quantize::analyze_accuracy(graph, table, method, inputs);

#include "calibrate.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host::quantize {

struct Similarity {
  double cosine = 1.0;     // 1 for two zero tensors, 0 when only one of them is zero
  double euclidean = 0.0;  // sqrt(sum((float - quantized)^2))
};

// `reference` and `other` have the same number of values (throws std::invalid_argument otherwise).
// Non-finite values make both measures NaN, which the report shows as they are.
[[nodiscard]] Similarity similarity(std::span<const float> reference, std::span<const float> other);

struct TensorAccuracy {
  std::string name;     // the tensor (ONNX value) name
  std::string op_type;  // the operator producing it; "input" for a graph input
  std::string node;     // the producing node's name; empty for a graph input
  Similarity entire;
  Similarity single;
};

struct AccuracyOptions {
  SessionOptions session;  // threads (fuse and float16 are set by the analysis)
  // Called as the three runs (float, entire, single) advance, step by step.
  std::function<void(std::size_t done, std::size_t total)> progress = {};
};

// `graph` is an inference_graph(), `table` its calibration and `method` the weights' method, as
// QuantizedSession takes them; `inputs` are float32 tensors in input order. Every tensor of the
// table that the run computes is reported, graph inputs first. Throws EngineError for inputs the
// graph cannot run.
[[nodiscard]] std::vector<TensorAccuracy> analyze_accuracy(const Graph& graph, const ActivationTable& table,
                                                           Method method, std::span<const Tensor> inputs,
                                                           const AccuracyOptions& options = {});

}  // namespace rknnxx::host::quantize
