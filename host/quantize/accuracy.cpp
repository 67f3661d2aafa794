#include "accuracy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace rknnxx::host::quantize {

Similarity similarity(std::span<const float> reference, std::span<const float> other) {
  if (reference.size() != other.size())
    throw std::invalid_argument(
        fmt::format("similarity of {} values against {} values", reference.size(), other.size()));
  double dot = 0.0, reference_norm = 0.0, other_norm = 0.0, squared_distance = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double a = reference[i];
    const double b = other[i];
    dot += a * b;
    reference_norm += a * a;
    other_norm += b * b;
    squared_distance += (a - b) * (a - b);
  }
  Similarity s;
  s.euclidean = std::sqrt(squared_distance);
  if (reference_norm == 0.0 || other_norm == 0.0) s.cosine = reference_norm == other_norm ? 1.0 : 0.0;
  else s.cosine = std::clamp(dot / (std::sqrt(reference_norm) * std::sqrt(other_norm)), -1.0, 1.0);
  if (std::isnan(dot) || std::isnan(squared_distance)) s.cosine = s.euclidean = std::nan("");
  return s;
}

namespace {

// Counts the steps of the three runs for the progress callback.
class StepCounter {
public:
  StepCounter(const AccuracyOptions& options, std::size_t steps_per_run)
      : progress_(options.progress), total_(3 * steps_per_run) {
    report();
  }
  void step() {
    done_ = std::min(done_ + 1, total_);
    report();
  }
  void finish_run(std::size_t run) {  // a run may execute fewer steps than planned (an If branch)
    done_ = std::max(done_, run * total_ / 3);
    report();
  }

private:
  void report() const {
    if (progress_) progress_(done_, total_);
  }
  const std::function<void(std::size_t, std::size_t)>& progress_;
  std::size_t total_;
  std::size_t done_ = 0;
};

}  // namespace

std::vector<TensorAccuracy> analyze_accuracy(const Graph& graph, const ActivationTable& table, Method method,
                                             std::span<const Tensor> inputs, const AccuracyOptions& options) {
  SessionOptions session_options = options.session;
  session_options.fuse = false;  // inference_graph() fused it already; the table names its values
  session_options.float16_activations = false;

  // 1. The float run: the reference value of every float tensor, and the order they come in.
  Session reference_session(Graph(graph), session_options);
  const Graph& g = reference_session.graph();
  {
    std::vector<TensorInfo> infos;
    for (const Tensor& t : inputs) infos.push_back(t.info());
    reference_session.prepare(infos);
  }
  StepCounter counter(options, reference_session.stats().steps);
  std::vector<std::optional<Tensor>> reference(g.values().size());
  std::vector<TensorAccuracy> report;
  std::vector<std::size_t> row_of(g.values().size(), SIZE_MAX);  // the report row of a calibrated value
  auto add_row = [&](ValueId id, const Node* producer) {
    const std::string& name = g.value(id).name;
    if (!table.params.contains(name) || row_of[static_cast<std::size_t>(id)] != SIZE_MAX) return;
    row_of[static_cast<std::size_t>(id)] = report.size();
    report.push_back(
        {name, producer != nullptr ? producer->op_type : "input", producer != nullptr ? producer->name : "", {}, {}});
  };
  const auto graph_inputs = g.inputs();
  for (std::size_t i = 0; i < graph_inputs.size() && i < inputs.size(); ++i) {
    if (inputs[i].dtype() != DataType::float32) continue;
    reference[static_cast<std::size_t>(graph_inputs[i])] = inputs[i].clone();
    add_row(graph_inputs[i], nullptr);
  }
  reference_session.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k) {
      if (outputs[k] == nullptr || node.outputs[k] == no_value || outputs[k]->dtype() != DataType::float32) continue;
      reference[static_cast<std::size_t>(node.outputs[k])] = outputs[k]->clone();
      add_row(node.outputs[k], &node);
    }
    counter.step();
  });
  (void)reference_session.run(inputs);
  counter.finish_run(1);

  // The graph inputs as the quantized graph reads them (QuantizedSession::run rounds them too).
  for (std::size_t i = 0; i < graph_inputs.size() && i < inputs.size(); ++i) {
    const std::size_t row = row_of[static_cast<std::size_t>(graph_inputs[i])];
    if (row == SIZE_MAX) continue;
    Tensor rounded = inputs[i].clone();
    fake_quantize(rounded.values<float>(), table.params.at(report[row].name));
    report[row].entire = report[row].single = similarity(inputs[i].values<float>(), rounded.values<float>());
  }

  QuantizedSession quantized(graph, table, method, session_options);
  auto measure = [&](ValueId id, const Tensor& value, Similarity TensorAccuracy::*field) {
    const std::size_t row = row_of[static_cast<std::size_t>(id)];
    const auto& ref = reference[static_cast<std::size_t>(id)];
    if (row != SIZE_MAX && ref && ref->elements() == value.elements())
      report[row].*field = similarity(ref->values<float>(), value.values<float>());
  };

  // 2. Entire: the quantized graph as it runs.
  quantized.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k)
      if (outputs[k] != nullptr && node.outputs[k] != no_value && outputs[k]->dtype() == DataType::float32)
        measure(node.outputs[k], *outputs[k], &TensorAccuracy::entire);
    counter.step();
  });
  (void)quantized.run(inputs);
  counter.finish_run(2);

  // 3. Single: after each step is measured, its outputs are replaced by the float values rounded
  // to their parameters (a float16 layer's as the quantized run rounds them), so that every later
  // step starts again from the float graph's values.
  quantized.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k) {
      if (outputs[k] == nullptr || node.outputs[k] == no_value || outputs[k]->dtype() != DataType::float32) continue;
      const ValueId id = node.outputs[k];
      measure(id, *outputs[k], &TensorAccuracy::single);
      const auto& ref = reference[static_cast<std::size_t>(id)];
      if (!ref || ref->elements() != outputs[k]->elements()) continue;
      auto values = outputs[k]->values<float>();
      const auto from = ref->values<float>();
      std::copy(from.begin(), from.end(), values.begin());
      if (table.float16.contains(g.value(id).name)) quantized.round_output(id, values);
      else if (auto it = table.params.find(g.value(id).name); it != table.params.end())
        fake_quantize(values, it->second);
    }
    counter.step();
  });
  (void)quantized.run(inputs);
  counter.finish_run(3);
  return report;
}

}  // namespace rknnxx::host::quantize
