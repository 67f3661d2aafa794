#include "calibrate.hpp"

#include "float16.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unistd.h>

namespace rknnxx::host::quantize {

namespace {

// Operators whose float output holds only values of their first input, moved or selected: on the
// NPU the output keeps the input's quantization, so the values stay on its grid without rounding.
constexpr std::array<std::string_view, 16> grid_keeping_ops{
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity",     "MaxPool",      "GlobalMaxPool",
    "Slice",   "Split",   "Gather",  "Tile",      "Expand",    "DepthToSpace", "SpaceToDepth", "ReduceMax"};

bool keeps_grid(const Node& node) {
  return node.domain.empty() &&
      std::find(grid_keeping_ops.begin(), grid_keeping_ops.end(), node.op_type) != grid_keeping_ops.end();
}

bool is_float(ValueId id, const std::vector<DataType>& types) {
  return types[static_cast<std::size_t>(id)] == DataType::float32;
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

}  // namespace

Graph inference_graph(const onnx::ModelProto& model) {
  Graph graph(model);
  graph.fuse_for_inference(FusionScope::clamp);  // the tables name every value the quantizer sees
  return graph;
}

std::vector<rknnxx::toolkit::ModelInput> model_inputs(const Graph& graph) {
  std::vector<rknnxx::toolkit::ModelInput> inputs;
  for (ValueId id : graph.inputs()) {
    const Value& value = graph.value(id);
    rknnxx::toolkit::ModelInput input;
    input.name = value.name;
    for (const onnx::Dimension& d : value.declared_shape)
      input.shape.push_back(d.has_value && d.value > 0 ? d.value : -1);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

std::vector<ValueId> parameter_sources(const Session& session) {
  const Graph& graph = session.graph();
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

struct Calibrator::State {
  Session session;
  Algorithm algorithm;
  IntRange ints;
  std::vector<ValueId> source;                                // per value, once planned
  std::vector<std::unique_ptr<TensorStatistics>> statistics;  // per value that owns parameters
  std::size_t samples = 0;

  State(const Graph& graph, Algorithm a, std::size_t threads, IntRange i)
      : session(Graph(graph), SessionOptions{.threads = threads, .fuse = false}), algorithm(a), ints(i) {}

  TensorStatistics* statistics_of(ValueId id) {
    if (id == no_value || static_cast<std::size_t>(id) >= source.size() || source[static_cast<std::size_t>(id)] != id)
      return nullptr;
    auto& s = statistics[static_cast<std::size_t>(id)];
    if (!s) s = std::make_unique<TensorStatistics>(algorithm != Algorithm::normal);
    return s.get();
  }
};

Calibrator::Calibrator(const Graph& graph, Algorithm algorithm, std::size_t threads, IntRange ints)
    : state_(std::make_unique<State>(graph, algorithm, threads, ints)) {
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
    s.source = parameter_sources(s.session);
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
    table.params[graph.value(static_cast<ValueId>(v)).name] = choose_params(*stats, algorithm, s.ints);
  }
  return table;
}

ActivationTable calibrate(const Graph& graph, std::span<const CalibrationInput> inputs,
                          std::span<const DatasetSample> samples, const CalibrationOptions& options,
                          std::string_view source) {
  Calibrator calibrator(graph, options.algorithm, options.threads, options.ints);
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

namespace {

// Every weight quantize_graph_weights quantizes, once each (a constant several nodes share is
// visited with the first; with `every_use`, with each node): f(node, weight, channel axis, group axis, tensor).
template <class F> void for_each_weight(const Graph& graph, F&& f, bool every_use = false) {
  std::vector<ValueId> seen;
  auto visit = [&](const Node& node, ValueId id, std::size_t channel_axis, std::size_t group_axis) {
    const Tensor* constant = graph.constant(id);
    if (constant == nullptr || constant->dtype() != DataType::float32 || constant->rank() < 2) return;
    if (!every_use && std::find(seen.begin(), seen.end(), id) != seen.end()) return;
    seen.push_back(id);
    f(node, id, channel_axis, group_axis, *constant);
  };
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty() || node.inputs.size() < 2 || node.inputs[1] == no_value) continue;
    if (node.op_type == "Conv") {
      visit(node, node.inputs[1], 0, 1);  // [out, in / groups, kh, kw]
    } else if (node.op_type == "ConvTranspose") {
      visit(node, node.inputs[1], 1, 0);  // [in, out / groups, kh, kw]
    } else if (node.op_type == "Gemm") {
      const auto* trans_b = node.attribute("transB");
      const bool transposed = trans_b != nullptr && trans_b->i != 0;
      visit(node, node.inputs[1], transposed ? 0 : 1, transposed ? 1 : 0);
    } else if (node.op_type == "MatMul") {
      const Tensor* b = graph.constant(node.inputs[1]);
      if (b != nullptr && b->rank() == 2) visit(node, node.inputs[1], 1, 0);  // [K, N]: a channel per column
    }
  }
}

std::int64_t int_attribute(const Node& node, const char* name, std::int64_t otherwise) {
  const auto* a = node.attribute(name);
  return a != nullptr ? a->i : otherwise;
}

constexpr std::size_t last_axis = std::numeric_limits<std::size_t>::max();

// Where a weight node reads its input features: the axis of its data input, their count, and the
// feature each weight element multiplies.
struct FeatureMap {
  std::size_t axis = 1;  // last_axis: the data's last (MatMul)
  std::size_t features = 0;
  std::function<std::size_t(std::size_t)> of_element;
};

std::optional<FeatureMap> feature_map(const Node& node, const Tensor& weight) {
  const auto& shape = weight.shape();
  const auto dim = [&](std::size_t a) { return static_cast<std::size_t>(shape[a]); };
  std::size_t inner = 1;  // kernel elements of a convolution weight
  for (std::size_t a = 2; a < shape.size(); ++a) inner *= dim(a);
  if (node.op_type == "Conv") {
    const auto groups = static_cast<std::size_t>(std::max<std::int64_t>(1, int_attribute(node, "group", 1)));
    const std::size_t per_group_out = std::max<std::size_t>(1, dim(0) / groups);
    const std::size_t per_group_in = dim(1);
    return FeatureMap{1, per_group_in * groups, [=](std::size_t i) {
                        const std::size_t out = i / (per_group_in * inner);
                        return out / per_group_out * per_group_in + i / inner % per_group_in;
                      }};
  }
  if (node.op_type == "ConvTranspose") {
    const std::size_t per_in = dim(1) * inner;
    return FeatureMap{1, dim(0), [=](std::size_t i) { return i / per_in; }};
  }
  if (shape.size() != 2) return std::nullopt;
  if (node.op_type == "Gemm") {
    const bool trans_a = int_attribute(node, "transA", 0) != 0;
    if (int_attribute(node, "transB", 0) != 0) {  // B [N, K]
      const std::size_t k = dim(1);
      return FeatureMap{trans_a ? 0U : 1U, k, [=](std::size_t i) { return i % k; }};
    }
    const std::size_t n = dim(1);  // B [K, N]
    return FeatureMap{trans_a ? 0U : 1U, dim(0), [=](std::size_t i) { return i / n; }};
  }
  const std::size_t n = dim(1);  // MatMul B [K, N]; A [..., K]: the last axis (set by the caller)
  return FeatureMap{last_axis, dim(0), [=](std::size_t i) { return i / n; }};
}

// Sums of one tensor's values, per feature along an axis (last_axis: the tensor's last).
struct FeatureSums {
  std::size_t axis = 0;
  std::vector<double> sum, square;
  double count = 0;  // values per feature
  bool mismatched = false;
  void add(const Tensor& t) {
    const auto& shape = t.shape();
    const std::size_t axis_here = axis == last_axis && !shape.empty() ? shape.size() - 1 : axis;
    if (t.dtype() != DataType::float32 || axis_here >= shape.size() ||
        static_cast<std::size_t>(shape[axis_here]) != sum.size()) {
      mismatched = true;
      return;
    }
    std::size_t inner = 1;
    for (std::size_t a = axis_here + 1; a < shape.size(); ++a) inner *= static_cast<std::size_t>(shape[a]);
    const auto values = t.values<float>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::size_t f = i / inner % sum.size();
      sum[f] += values[i];
      square[f] += double{values[i]} * values[i];
    }
    count += static_cast<double>(values.size()) / static_cast<double>(sum.size());
  }
};

}  // namespace

std::map<std::string, WeightQuantization> quantize_graph_weights(Graph& graph, Method method, IntRange ints,
                                                                 const ClipRatios& clips,
                                                                 const std::set<std::string>& float16) {
  std::map<std::string, WeightQuantization> out;
  std::vector<std::pair<ValueId, Tensor>> replaced;
  for_each_weight(
      graph, [&](const Node&, ValueId id, std::size_t channel_axis, std::size_t group_axis, const Tensor& constant) {
        const std::string& name = graph.value(id).name;
        Tensor weights = constant.clone();
        if (float16.contains(name)) {
          round_to_half(weights.data<float>(), static_cast<std::size_t>(weights.elements()));
          replaced.emplace_back(id, std::move(weights));
          return;
        }
        const auto clip = clips.find(name);
        out.emplace(name,
                    quantize_weights(weights.values<float>(), weights.shape(), method, channel_axis, group_axis, ints,
                                     clip == clips.end() ? std::span<const float>() : std::span(clip->second)));
        replaced.emplace_back(id, std::move(weights));
      });
  for (const auto& [name, ratios] : clips)
    if (!out.contains(name))
      throw std::invalid_argument(
          fmt::format("gdq: clip ratios for '{}', which is not a quantized weight of the graph", name));
  for (auto& [id, weights] : replaced) graph.replace_constant(id, std::move(weights));
  return out;
}

std::set<std::string> float16_weights(const Graph& graph, const std::set<std::string>& float16_values) {
  std::set<std::string> out;
  for_each_weight(
      graph,
      [&](const Node& node, ValueId id, std::size_t, std::size_t, const Tensor&) {
        if (std::any_of(node.outputs.begin(), node.outputs.end(),
                        [&](ValueId o) { return o != no_value && float16_values.contains(graph.value(o).name); }))
          out.insert(graph.value(id).name);
      },
      true);
  return out;
}

ClipRatios choose_gdq_clips(const Graph& graph, std::span<const CalibrationInput> inputs,
                            std::span<const DatasetSample> samples, Method method, IntRange ints,
                            const CalibrationOptions& options, std::string_view source) {
  // The input features each weight's node reads, gathered over the float runs.
  struct Wanted {
    ValueId weight;
    ValueId data;
    std::size_t channel_axis, group_axis;
    FeatureMap map;
  };
  std::vector<Wanted> wanted;
  std::map<std::pair<ValueId, std::size_t>, FeatureSums> sums;  // by (value, axis)
  std::map<ValueId, std::vector<FeatureSums*>> by_value;
  for_each_weight(
      graph, [&](const Node& node, ValueId id, std::size_t channel_axis, std::size_t group_axis, const Tensor& weight) {
        auto map = feature_map(node, weight);
        const ValueId data = node.inputs[0];
        if (!map || data == no_value || map->features == 0) return;
        auto [it, added] = sums.try_emplace({data, map->axis});
        if (added) {
          it->second.axis = map->axis;
          it->second.sum.assign(map->features, 0.0);
          it->second.square.assign(map->features, 0.0);
          by_value[data].push_back(&it->second);
        } else if (it->second.sum.size() != map->features) {
          return;
        }
        wanted.push_back({id, data, channel_axis, group_axis, std::move(*map)});
      });

  Session session(Graph(graph), SessionOptions{.threads = options.threads, .fuse = false});
  session.set_step_observer([&](const Node& node, std::span<Tensor* const> outputs) {
    for (std::size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k)
      if (const auto found = by_value.find(node.outputs[k]); found != by_value.end() && outputs[k] != nullptr)
        for (FeatureSums* s : found->second) s->add(*outputs[k]);
  });
  const auto graph_inputs = session.graph().inputs();
  Progress progress("gdq", samples.size(), options.progress && !options.on_sample);
  for (const DatasetSample& sample : samples) {
    const std::vector<Tensor> tensors = load_sample(sample, inputs, source);
    for (std::size_t i = 0; i < tensors.size() && i < graph_inputs.size(); ++i)
      if (const auto found = by_value.find(graph_inputs[i]); found != by_value.end())
        for (FeatureSums* s : found->second) s->add(tensors[i]);
    try {
      (void)session.run(tensors);
    } catch (const EngineError& e) {
      throw DatasetError(fmt::format("{}:{}: {}", source, sample.line, e.what()));
    }
    progress.advance();
    if (options.on_sample) options.on_sample(static_cast<std::size_t>(&sample - samples.data()) + 1, samples.size());
  }

  ClipRatios clips;
  for (const Wanted& w : wanted) {
    const FeatureSums& s = sums.at({w.data, w.map.axis});
    if (s.mismatched || s.count == 0) continue;  // min/max for a weight whose inputs were not seen as expected
    const Tensor& weight = *graph.constant(w.weight);
    WeightInputMoments moments;
    moments.mean.resize(static_cast<std::size_t>(weight.elements()));
    moments.variance.resize(moments.mean.size());
    for (std::size_t i = 0; i < moments.mean.size(); ++i) {
      const std::size_t f = w.map.of_element(i);
      const double mean = s.sum[f] / s.count;
      moments.mean[i] = mean;
      moments.variance[i] = std::max(0.0, s.square[f] / s.count - mean * mean);
    }
    clips[graph.value(w.weight).name] =
        gdq_clip_ratios(weight.values<float>(), weight.shape(), method, w.channel_axis, w.group_axis, ints, moments);
  }
  return clips;
}

namespace {

IntegerGrid integer_grid(std::span<const AffineParams> params, std::size_t axis) {
  IntegerGrid grid;
  grid.axis = static_cast<int64_t>(axis);
  for (const AffineParams& p : params) {
    grid.scale.push_back(p.scale);
    grid.zero_point.push_back(p.zero_point);
  }
  grid.min = params.front().range.min;
  grid.max = params.front().range.max;
  return grid;
}

// Tells the engine which values hold integers of a known grid (Graph::set_integer_grid,
// docs/quantization.md#integer-kernels), so that its kernels may compute on the integers: the graph
// inputs run() rounds, every value the step observer rounds, the outputs of grid-keeping steps reading
// such a value (in topological order), and the weights quantized per layer or per channel.
void annotate_integer_grids(Graph& graph, const std::vector<std::optional<AffineParams>>& by_value,
                            const std::vector<std::optional<AffineParams>>& by_input,
                            const std::map<std::string, WeightQuantization>& weights) {
  const auto inputs = graph.inputs();
  for (std::size_t i = 0; i < inputs.size() && i < by_input.size(); ++i)
    if (by_input[i]) graph.set_integer_grid(inputs[i], integer_grid(std::span(&*by_input[i], 1), 0));
  for (const Node& node : graph.nodes()) {
    const ValueId first = node.inputs.empty() ? no_value : node.inputs.front();
    const IntegerGrid* inherited = keeps_grid(node) && first != no_value ? graph.integer_grid(first) : nullptr;
    for (ValueId out : node.outputs) {
      if (out == no_value) continue;
      if (const auto& p = by_value[static_cast<std::size_t>(out)])
        graph.set_integer_grid(out, integer_grid(std::span(&*p, 1), 0));
      else if (inherited != nullptr && inherited->scale.size() == 1) graph.set_integer_grid(out, *inherited);
    }
  }
  for (const auto& [name, w] : weights) {
    const auto id = graph.find(name);
    if (!id || w.params.empty() || w.method.kind == Method::Kind::group) continue;
    graph.set_integer_grid(*id, integer_grid(w.params, w.channel_axis));
  }
}

}  // namespace

struct QuantizedSession::State {
  std::map<std::string, WeightQuantization> weights;
  std::set<std::string> float16_weights;
  ActivationTable table;
  std::optional<Session> session;
  std::vector<std::optional<AffineParams>> by_value;  // the parameters a step's output is rounded to
  std::vector<bool> float16_value;                    // rounded to float16 first (hybrid quantization)
  std::vector<std::optional<AffineParams>> by_input;  // per graph input
  std::vector<Tensor> rounded_inputs;                 // the last run's inputs on their grids, reused while they fit

  // Whether round() may change the value's elements.
  bool rounds(ValueId id) const {
    if (id == no_value || static_cast<std::size_t>(id) >= by_value.size()) return false;
    return float16_value[static_cast<std::size_t>(id)] || by_value[static_cast<std::size_t>(id)].has_value();
  }
  void round(ValueId id, std::span<float> values) const {
    if (!rounds(id)) return;
    if (float16_value[static_cast<std::size_t>(id)]) round_to_half(values.data(), values.size());
    if (const auto& p = by_value[static_cast<std::size_t>(id)]) fake_quantize(values, *p);
  }
  // round() and the lookup in one pass, where round() is exactly the rounding to the lookup's grid.
  bool round_and_look_up(ValueId id, std::span<float> values, const RoundedLookup& lookup) const {
    if (!rounds(id) || float16_value[static_cast<std::size_t>(id)]) return false;
    const auto& p = by_value[static_cast<std::size_t>(id)];  // set: rounds() and not float16
    if (p->scale != lookup.grid_scale || p->zero_point != lookup.grid_zero || p->range.min != lookup.least ||
        p->range.max != lookup.most)
      return false;
    return fake_quantize_and_look_up(values, *p, lookup.bytes, lookup.scale, lookup.zero_point, lookup.out);
  }
};

QuantizedSession::QuantizedSession(Graph graph, ActivationTable table, Method method, SessionOptions options,
                                   IntRange weight_ints, const ClipRatios& clips)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  for (const std::string& name : table.float16)
    if (!table.params.contains(name))
      throw std::invalid_argument(
          fmt::format("hybrid quantization: float16 value '{}' has no quantization parameters", name));
  s.float16_weights = quantize::float16_weights(graph, table.float16);
  s.weights = quantize_graph_weights(graph, method, weight_ints, clips, s.float16_weights);
  s.table = std::move(table);
  options.fuse = false;  // inference_graph() fused it; the table names its values
  // w8a8, w16a16i_dfp: the activations are integers times a scale, exact in float32. A weight-only
  // type keeps them float.
  if (!s.table.params.empty()) options.float16_activations = false;
  const Graph& g = graph;  // moved into the session once annotated below
  s.by_value.resize(g.values().size());
  s.float16_value.resize(g.values().size());
  const auto is_float16 = [&](ValueId id) { return id != no_value && s.table.float16.contains(g.value(id).name); };
  // An int8 layer (one producing no float16 value) reading a value: a float16 value it reads is
  // re-quantized to the value's parameters.
  std::vector<bool> read_by_int8(g.values().size());
  for (const Node& node : g.nodes())
    if (std::none_of(node.outputs.begin(), node.outputs.end(), is_float16))
      for (ValueId in : node.inputs)
        if (in != no_value) read_by_int8[static_cast<std::size_t>(in)] = true;
  // A node's output is rounded when it has its own parameters; a grid-keeping node's output
  // shares its input's and is left as it is.
  for (const Node& node : g.nodes()) {
    for (ValueId out : node.outputs)
      if (is_float16(out)) s.float16_value[static_cast<std::size_t>(out)] = true;
    const bool inherits = keeps_grid(node) && !node.inputs.empty() && node.inputs.front() != no_value &&
        s.table.params.contains(g.value(node.inputs.front()).name);
    if (inherits) continue;
    for (ValueId out : node.outputs)
      if (out != no_value && (!is_float16(out) || read_by_int8[static_cast<std::size_t>(out)]))
        if (auto it = s.table.params.find(g.value(out).name); it != s.table.params.end())
          s.by_value[static_cast<std::size_t>(out)] = it->second;
  }
  for (ValueId in : g.inputs()) {
    const auto it = s.table.params.find(g.value(in).name);
    s.by_input.push_back(it == s.table.params.end() ? std::nullopt : std::optional(it->second));
  }
  annotate_integer_grids(graph, s.by_value, s.by_input, s.weights);
  s.session.emplace(std::move(graph), options);
  // Element by element, so values may stay in oneDNN's layout between Convs (an observer would keep them NCHW).
  s.session->set_output_rounding([&s](ValueId id, std::span<float> values) { s.round(id, values); },
                                 [&s](ValueId id, std::span<float> values, const RoundedLookup& lookup) {
                                   return s.round_and_look_up(id, values, lookup);
                                 },
                                 [&s](ValueId id) { return s.rounds(id); });
}

void QuantizedSession::round_output(ValueId id, std::span<float> values) const { state_->round(id, values); }

QuantizedSession::~QuantizedSession() = default;
QuantizedSession::QuantizedSession(QuantizedSession&&) noexcept = default;
QuantizedSession& QuantizedSession::operator=(QuantizedSession&&) noexcept = default;

std::vector<Tensor> QuantizedSession::run(std::span<const Tensor> inputs) {
  std::vector<Tensor> outputs;
  for (const Tensor& view : run_views(inputs)) outputs.push_back(view.clone());
  return outputs;
}

std::span<const Tensor> QuantizedSession::run_views(std::span<const Tensor> inputs) {
  State& s = *state_;
  // Copied into buffers kept from run to run: a fresh one per run would cost its pages again each time (an OCR
  // detector's 640x640 image is 4.9 MB).
  s.rounded_inputs.resize(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Tensor& rounded = s.rounded_inputs[i];
    if (rounded.dtype() == inputs[i].dtype() && rounded.shape() == inputs[i].shape() && rounded.raw() != nullptr) {
      if (rounded.bytes() != 0) std::memcpy(rounded.raw(), inputs[i].raw(), rounded.bytes());
    } else {
      rounded = inputs[i].clone();
    }
    if (i < s.by_input.size() && s.by_input[i] && rounded.dtype() == DataType::float32)
      fake_quantize(rounded.values<float>(), *s.by_input[i]);
  }
  return s.session->run_views(s.rounded_inputs);
}

std::span<const Tensor> QuantizedSession::run_views_on_grids(std::span<const Tensor> inputs) {
#if !defined(NDEBUG)
  const State& s = *state_;
  for (std::size_t i = 0; i < inputs.size() && i < s.by_input.size(); ++i) {
    if (!s.by_input[i] || inputs[i].dtype() != DataType::float32) continue;
    Tensor rounded = inputs[i].clone();
    fake_quantize(rounded.values<float>(), *s.by_input[i]);
    if (rounded.bytes() != 0 && std::memcmp(rounded.raw(), inputs[i].raw(), rounded.bytes()) != 0)
      throw EngineError(fmt::format("input {} ('{}') holds values off its quantization grid", i,
                                    s.session->graph().value(s.session->graph().inputs()[i]).name));
  }
#endif
  return state_->session->run_views(inputs);
}

void QuantizedSession::set_step_observer(Session::StepObserver after_rounding) {
  state_->session->set_step_observer(std::move(after_rounding));  // the session rounds before its observer
}

const ActivationTable& QuantizedSession::activations() const noexcept { return state_->table; }
const std::map<std::string, WeightQuantization>& QuantizedSession::weights() const noexcept { return state_->weights; }
const std::set<std::string>& QuantizedSession::float16_weights() const noexcept { return state_->float16_weights; }
Session& QuantizedSession::session() noexcept { return *state_->session; }

}  // namespace rknnxx::host::quantize
