#include "calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unistd.h>

namespace rknnxx::host::quantize {

namespace {

// Operators whose float output holds only values of their first input, moved or selected: on the
// NPU the output keeps the input's quantization, so the values stay on its grid without rounding.
constexpr std::array<std::string_view, 16> grid_keeping_ops{
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity", "MaxPool", "GlobalMaxPool",
    "Slice",   "Split",   "Gather",  "Tile",      "Expand",    "DepthToSpace", "SpaceToDepth", "ReduceMax"};

bool keeps_grid(const Node& node) {
  return node.domain.empty() &&
         std::find(grid_keeping_ops.begin(), grid_keeping_ops.end(), node.op_type) != grid_keeping_ops.end();
}

bool is_float(ValueId id, const std::vector<DataType>& types) {
  return types[static_cast<std::size_t>(id)] == DataType::float32;
}

// For every value: the value whose parameters it uses (itself, or the first input of a chain of
// grid-keeping operators), or no_value when it is not quantized. Types come from a plan of `session`.
std::vector<ValueId> parameter_sources(const Graph& graph, const Session& session) {
  const std::size_t count = graph.values().size();
  std::vector<DataType> types(count, DataType::undefined);
  for (std::size_t v = 0; v < count; ++v) {
    const Value& value = graph.values()[v];
    try {
      types[v] = session.info(value.name).dtype;
    } catch (const EngineError&) {
      // not part of the plan (an unused constant)
    }
  }
  std::vector<ValueId> source(count, no_value);
  for (ValueId in : graph.inputs())
    if (is_float(in, types)) source[static_cast<std::size_t>(in)] = in;
  for (const Node& node : graph.nodes()) {
    const ValueId first = node.inputs.empty() ? no_value : node.inputs.front();
    const bool inherit = keeps_grid(node) && first != no_value && source[static_cast<std::size_t>(first)] != no_value;
    for (ValueId out : node.outputs) {
      if (out == no_value || !is_float(out, types) || graph.constant(out) != nullptr) continue;
      source[static_cast<std::size_t>(out)] = inherit ? source[static_cast<std::size_t>(first)] : out;
    }
  }
  return source;
}

// A bar on stderr, drawn only when stderr is a terminal.
class Progress {
public:
  Progress(std::string_view label, std::size_t total, bool wanted)
      : label_(label), total_(total), shown_(wanted && total > 0 && isatty(STDERR_FILENO) == 1) {
    draw();
  }
  ~Progress() {
    if (shown_) std::fputs("\n", stderr);
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void advance() {
    ++done_;
    draw();
  }

private:
  void draw() const {
    if (!shown_) return;
    constexpr std::size_t width = 30;
    const std::size_t filled = done_ * width / total_;
    fmt::print(stderr, "\r{} [{:#<{}}{:<{}}] {}/{}", label_, "", filled, "", width - filled, done_, total_);
    std::fflush(stderr);
  }
  std::string_view label_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool shown_;
};

} // namespace

Graph inference_graph(const onnx::ModelProto& model) {
  Graph graph(model);
  graph.fuse_for_inference();
  return graph;
}

std::vector<rknnxx::toolkit::ModelInput> model_inputs(const Graph& graph) {
  std::vector<rknnxx::toolkit::ModelInput> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    rknnxx::toolkit::ModelInput input;
    input.name = value.name;
    for (const onnx::Dimension& d : value.declared_shape) input.shape.push_back(d.has_value && d.value > 0 ? d.value : -1);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

struct Calibrator::State {
  Session session;
  Algorithm algorithm;
  std::vector<ValueId> source;                              // per value, once planned
  std::vector<std::unique_ptr<TensorStatistics>> statistics;  // per value that owns parameters
  std::size_t samples = 0;

  State(const Graph& graph, Algorithm a, std::size_t threads)
      : session(Graph(graph), SessionOptions{.threads = threads, .fuse = false}), algorithm(a) {}

  TensorStatistics* statistics_of(ValueId id) {
    if (id == no_value || static_cast<std::size_t>(id) >= source.size() || source[static_cast<std::size_t>(id)] != id)
      return nullptr;
    auto& s = statistics[static_cast<std::size_t>(id)];
    if (!s) s = std::make_unique<TensorStatistics>(algorithm != Algorithm::normal);
    return s.get();
  }
};

Calibrator::Calibrator(const Graph& graph, Algorithm algorithm, std::size_t threads)
    : state_(std::make_unique<State>(graph, algorithm, threads)) {
  if (algorithm == Algorithm::gdq)
    throw std::invalid_argument("quantized_algorithm 'gdq' is for the weights of w4a16/w8a16 models; w8a8 "
                                "activations are calibrated with normal, kl_divergence or mmse");
  State& s = *state_;
  s.session.set_step_observer([&s](const Node& node, std::span<Tensor* const> outputs) {
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k)
      if (TensorStatistics* stats = outputs[k] != nullptr ? s.statistics_of(node.outputs[k]) : nullptr)
        stats->add(outputs[k]->values<float>());
  });
}

Calibrator::~Calibrator() = default;
Calibrator::Calibrator(Calibrator&&) noexcept = default;
Calibrator& Calibrator::operator=(Calibrator&&) noexcept = default;

void Calibrator::add(std::span<const Tensor> inputs) {
  State& s = *state_;
  std::vector<TensorInfo> infos;
  for (const Tensor& t : inputs) infos.push_back(t.info());
  s.session.prepare(infos);
  if (s.source.empty()) {
    s.source = parameter_sources(s.session.graph(), s.session);
    s.statistics.resize(s.source.size());
  }
  const auto graph_inputs = s.session.graph().inputs();
  for (std::size_t i = 0; i < inputs.size() && i < graph_inputs.size(); ++i)
    if (TensorStatistics* stats = s.statistics_of(graph_inputs[i])) stats->add(inputs[i].values<float>());
  (void)s.session.run(inputs);
  ++s.samples;
}

ActivationTable Calibrator::finish() const { return finish(state_->algorithm); }

ActivationTable Calibrator::finish(Algorithm algorithm) const {
  const State& s = *state_;
  if (s.samples == 0) throw std::invalid_argument("calibration needs at least one sample");
  ActivationTable table;
  table.algorithm = algorithm;
  table.samples = s.samples;
  const Graph& graph = s.session.graph();
  for (std::size_t v = 0; v < s.source.size(); ++v) {
    const ValueId from = s.source[v];
    if (from == no_value) continue;
    const auto& stats = s.statistics[static_cast<std::size_t>(from)];
    if (!stats || stats->empty()) continue;  // never computed (an unused branch) or all non-finite
    table.params[graph.value(static_cast<ValueId>(v)).name] = choose_params(*stats, algorithm);
  }
  return table;
}

ActivationTable calibrate(const Graph& graph, std::span<const CalibrationInput> inputs,
                          std::span<const DatasetSample> samples, const CalibrationOptions& options,
                          std::string_view source) {
  Calibrator calibrator(graph, options.algorithm, options.threads);
  Progress progress("calibrating", samples.size(), options.progress && !options.on_sample);
  for (const DatasetSample& sample : samples) {
    const std::vector<Tensor> tensors = load_sample(sample, inputs, source);
    try {
      calibrator.add(tensors);
    } catch (const EngineError& e) {
      throw DatasetError(fmt::format("{}:{}: {}", source, sample.line, e.what()));
    }
    progress.advance();
    if (options.on_sample) options.on_sample(static_cast<std::size_t>(&sample - samples.data()) + 1, samples.size());
  }
  return calibrator.finish();
}

std::map<std::string, WeightQuantization> quantize_graph_weights(Graph& graph, Method method) {
  std::map<std::string, WeightQuantization> out;
  auto quantize = [&](ValueId id, std::size_t channel_axis, std::size_t group_axis) {
    const Tensor* constant = graph.constant(id);
    if (constant == nullptr || constant->dtype() != DataType::float32 || constant->rank() < 2) return;
    const std::string& name = graph.value(id).name;
    if (out.contains(name)) return;  // shared by several nodes: quantized once
    Tensor weights = constant->clone();
    out.emplace(name, quantize_weights(weights.values<float>(), weights.shape(), method, channel_axis, group_axis));
    graph.replace_constant(id, std::move(weights));
  };
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty() || node.inputs.size() < 2 || node.inputs[1] == no_value) continue;
    if (node.op_type == "Conv") {
      quantize(node.inputs[1], 0, 1);  // [out, in / groups, kh, kw]
    } else if (node.op_type == "ConvTranspose") {
      quantize(node.inputs[1], 1, 0);  // [in, out / groups, kh, kw]
    } else if (node.op_type == "Gemm") {
      const auto* trans_b = node.attribute("transB");
      const bool transposed = trans_b != nullptr && trans_b->i != 0;
      quantize(node.inputs[1], transposed ? 0 : 1, transposed ? 1 : 0);
    } else if (node.op_type == "MatMul") {
      const Tensor* b = graph.constant(node.inputs[1]);
      if (b != nullptr && b->rank() == 2) quantize(node.inputs[1], 1, 0);  // [K, N]: a channel per column
    }
  }
  return out;
}

struct QuantizedSession::State {
  std::map<std::string, WeightQuantization> weights;
  ActivationTable table;
  std::optional<Session> session;
  std::vector<std::optional<AffineParams>> by_value;  // the parameters a step's output is rounded to
  std::vector<std::optional<AffineParams>> by_input;  // per graph input
  Session::StepObserver after_rounding;               // set_step_observer()
};

QuantizedSession::QuantizedSession(Graph graph, ActivationTable table, Method method, SessionOptions options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.weights = quantize_graph_weights(graph, method);
  s.table = std::move(table);
  options.fuse = false;                 // inference_graph() fused it; the table names its values
  options.float16_activations = false;  // the activations are int8 values, exact in float32
  s.session.emplace(std::move(graph), options);
  const Graph& g = s.session->graph();
  s.by_value.resize(g.values().size());
  // A node's output is rounded when it has its own parameters; a grid-keeping node's output
  // shares its input's and is left as it is.
  for (const Node& node : g.nodes()) {
    const bool inherits = keeps_grid(node) && !node.inputs.empty() && node.inputs.front() != no_value &&
                          s.table.params.contains(g.value(node.inputs.front()).name);
    if (inherits) continue;
    for (ValueId out : node.outputs)
      if (out != no_value)
        if (auto it = s.table.params.find(g.value(out).name); it != s.table.params.end())
          s.by_value[static_cast<std::size_t>(out)] = it->second;
  }
  for (ValueId in : g.inputs()) {
    const auto it = s.table.params.find(g.value(in).name);
    s.by_input.push_back(it == s.table.params.end() ? std::nullopt : std::optional(it->second));
  }
  s.session->set_step_observer([&s](const Node& node, std::span<Tensor* const> outputs) {
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k) {
      if (outputs[k] == nullptr || node.outputs[k] == no_value || outputs[k]->dtype() != DataType::float32) continue;
      if (const auto& p = s.by_value[static_cast<std::size_t>(node.outputs[k])]) fake_quantize(outputs[k]->values<float>(), *p);
    }
    if (s.after_rounding) s.after_rounding(node, outputs);
  });
}

QuantizedSession::~QuantizedSession() = default;
QuantizedSession::QuantizedSession(QuantizedSession&&) noexcept = default;
QuantizedSession& QuantizedSession::operator=(QuantizedSession&&) noexcept = default;

std::vector<Tensor> QuantizedSession::run(std::span<const Tensor> inputs) {
  State& s = *state_;
  std::vector<Tensor> rounded;
  rounded.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    rounded.push_back(inputs[i].clone());
    if (i < s.by_input.size() && s.by_input[i] && rounded.back().dtype() == DataType::float32)
      fake_quantize(rounded.back().values<float>(), *s.by_input[i]);
  }
  return s.session->run(rounded);
}

void QuantizedSession::set_step_observer(Session::StepObserver after_rounding) {
  state_->after_rounding = std::move(after_rounding);
}

const ActivationTable& QuantizedSession::activations() const noexcept { return state_->table; }
const std::map<std::string, WeightQuantization>& QuantizedSession::weights() const noexcept { return state_->weights; }
Session& QuantizedSession::session() noexcept { return *state_->session; }

} // namespace rknnxx::host::quantize
