#include "qdq.hpp"

#include "engine/graph.hpp"
#include "engine/session.hpp"
#include "quantize/affine.hpp"
#include "quantize/calibrate.hpp"
#include "quantize/qnt8_section.hpp"
#include "quantize/settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

namespace rknnxx::host {

namespace {

// Per value of `graph`: computed from constants alone (initializers, and nodes reading only such
// values: a weight's DequantizeLinear, or a QuantizeLinear of a float weight). Nodes are in
// topological order.
std::vector<bool> constant_derived(const Graph& graph) {
  std::vector<bool> constant(graph.values().size());
  for (std::size_t v = 0; v < constant.size(); ++v) constant[v] = graph.constant(static_cast<ValueId>(v)) != nullptr;
  for (const Node& node : graph.nodes()) {
    const bool from_constants =
        std::any_of(node.inputs.begin(), node.inputs.end(), [](ValueId v) { return v != no_value; }) &&
        std::all_of(node.inputs.begin(), node.inputs.end(),
                    [&](ValueId v) { return v == no_value || constant[static_cast<std::size_t>(v)]; });
    if (from_constants)
      for (ValueId out : node.outputs)
        if (out != no_value) constant[static_cast<std::size_t>(out)] = true;
  }
  return constant;
}

[[noreturn]] void refuse(const std::string& why) { throw std::runtime_error("QDQ model: " + why); }

// The parameters of a QuantizeLinear or DequantizeLinear as an int8 tensor's: one scale, and the zero
// point as int8 (a uint8 zero point z is the int8 z - 128: the same real values, the same range).
// `integers` is the pair's integer type, which gives a missing zero point its type (0 of it).
quantize::AffineParams pair_params(const Graph& graph, const Node& node, DataType integers) {
  const auto constant_input = [&](std::size_t i, const char* what) -> const Tensor* {
    if (node.inputs.size() <= i || node.inputs[i] == no_value) return nullptr;
    const Tensor* t = graph.constant(node.inputs[i]);
    if (t == nullptr)
      refuse(fmt::format("{}: its {} '{}' is computed; an int8 model takes constant parameters", node.label(), what,
                         graph.value(node.inputs[i]).name));
    if (t->elements() != 1)
      refuse(fmt::format("{}: its {} '{}' has {} values (per channel); an int8 activation has one scale and zero "
                         "point per tensor",
                         node.label(), what, graph.value(node.inputs[i]).name, t->elements()));
    return t;
  };
  const Tensor* scale = constant_input(1, "scale");
  if (scale == nullptr || scale->dtype() != DataType::float32)
    refuse(fmt::format("{}: its scale is not a float32 constant", node.label()));
  quantize::AffineParams params;
  params.scale = scale->values<float>()[0];
  if (!std::isfinite(params.scale) || params.scale <= 0.0f)
    refuse(fmt::format("{}: scale {} is not finite and positive", node.label(), params.scale));
  const Tensor* zero = constant_input(2, "zero point");
  const DataType type = zero != nullptr ? zero->dtype() : integers;
  if (type == DataType::int8) {
    params.zero_point = zero != nullptr ? zero->values<int8_t>()[0] : 0;
  } else if (type == DataType::uint8) {
    params.zero_point = (zero != nullptr ? zero->values<uint8_t>()[0] : 0) - 128;
  } else {
    refuse(fmt::format("{}: its integers are {}; an int8 model takes int8 or uint8 pairs", node.label(),
                       dtype_name(type)));
  }
  return params;
}

std::string params_string(const quantize::AffineParams& p) {
  return fmt::format("scale {} zero point {}", p.scale, p.zero_point);
}

// The parameters each activation pair gives, by value name: the value entering the QuantizeLinear and
// the output of each DequantizeLinear it feeds. Pairs on constants (weights, biases) are left out:
// the stored graph keeps them and computes their exact values.
std::map<std::string, quantize::AffineParams> activation_pairs(const Graph& graph) {
  const std::vector<bool> constant = constant_derived(graph);
  std::vector<std::vector<const Node*>> readers(graph.values().size());
  for (const Node& node : graph.nodes())
    for (ValueId in : node.inputs)
      if (in != no_value) readers[static_cast<std::size_t>(in)].push_back(&node);
  const std::unordered_set<ValueId> outputs(graph.outputs().begin(), graph.outputs().end());

  std::map<std::string, quantize::AffineParams> pairs;
  auto record = [&](ValueId v, const quantize::AffineParams& p) {
    const std::string& name = graph.value(v).name;
    const auto [it, added] = pairs.try_emplace(name, p);
    if (!added && it->second != p)
      refuse(fmt::format("'{}' is quantized with {} and with {}; an int8 tensor has one scale and zero point", name,
                         params_string(it->second), params_string(p)));
  };
  for (const Node& node : graph.nodes()) {
    if (!is_default_domain(node.domain) || node.inputs.empty() || node.inputs[0] == no_value) continue;
    const ValueId x = node.inputs[0];
    if (constant[static_cast<std::size_t>(x)]) continue;
    if (node.op_type == "QuantizeLinear") {
      const ValueId q = node.outputs.at(0);
      const bool has_zero = node.inputs.size() > 2 && node.inputs[2] != no_value;
      const onnx::AttributeProto* output_dtype = node.attribute("output_dtype");  // QuantizeLinear-21
      const DataType integers = has_zero && graph.constant(node.inputs[2]) != nullptr
          ? graph.constant(node.inputs[2])->dtype()
          : output_dtype != nullptr && output_dtype->i != 0 && graph.opset() >= 21
          ? static_cast<DataType>(output_dtype->i)
          : DataType::uint8;  // ONNX's type without a zero point or output_dtype
      const quantize::AffineParams p = pair_params(graph, node, integers);
      if (outputs.contains(q))
        refuse(fmt::format("{} writes the graph output '{}' as integers; the outputs of a QDQ model are the float "
                           "values of a DequantizeLinear",
                           node.label(), graph.value(q).name));
      for (const Node* reader : readers[static_cast<std::size_t>(q)]) {
        if (reader->op_type != "DequantizeLinear" || !is_default_domain(reader->domain) || reader->inputs[0] != q)
          refuse(fmt::format("{} feeds {}, not a DequantizeLinear; an int8 model keeps a quantized tensor as the "
                             "parameters of a float one",
                             node.label(), reader->label()));
        const quantize::AffineParams d = pair_params(graph, *reader, integers);
        if (d != p)
          refuse(fmt::format("{} quantizes with {}, {} dequantizes with {}; one tensor has one scale and zero point",
                             node.label(), params_string(p), reader->label(), params_string(d)));
        record(reader->outputs.at(0), p);
      }
      record(x, p);
    } else if (node.op_type == "DequantizeLinear") {
      const std::int32_t producer = graph.value(x).producer;
      if (producer < 0 || graph.nodes()[static_cast<std::size_t>(producer)].op_type != "QuantizeLinear")
        refuse(fmt::format("{} reads '{}', which is computed but not by a QuantizeLinear; an int8 model cannot "
                           "hold integers of its own",
                           node.label(), graph.value(x).name));
    }
  }
  return pairs;
}

}  // namespace

bool is_qdq_model(const onnx::ModelProto& model) {
  // Names computed from constants alone, to a fixed point (the file's node order is not trusted).
  std::unordered_set<std::string> constant;
  for (const auto& init : model.graph.initializer) constant.insert(init.name);
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& node : model.graph.node) {
      const bool from_constants =
          std::any_of(node.input.begin(), node.input.end(), [](const std::string& n) { return !n.empty(); }) &&
          std::all_of(node.input.begin(), node.input.end(),
                      [&](const std::string& n) { return n.empty() || constant.contains(n); });
      if (!from_constants && !(node.op_type == "Constant" && is_default_domain(node.domain))) continue;
      for (const auto& out : node.output)
        if (!out.empty() && constant.insert(out).second) grew = true;
    }
  }
  return std::any_of(model.graph.node.begin(), model.graph.node.end(), [&](const onnx::NodeProto& node) {
    return node.op_type == "QuantizeLinear" && is_default_domain(node.domain) && !node.input.empty() &&
        !constant.contains(node.input[0]);
  });
}

ModelQuantization qdq_quantization(const onnx::ModelProto& model, const toolkit::Config& config,
                                   std::span<const TensorInfo> inputs) {
  quantize::Settings settings = quantize::settings_for(config);
  if (settings.dtype != toolkit::QuantizedDtype::w8a8)
    throw toolkit::ConfigError("quantized_dtype",
                               fmt::format("config: quantized_dtype is '{}', but the model's QuantizeLinear/"
                                           "DequantizeLinear pairs make it w8a8",
                                           toolkit::spelling(settings.dtype)));
  settings.algorithm = toolkit::QuantizedAlgorithm::normal;  // not used: nothing is calibrated
  const auto pairs = activation_pairs(Graph(model));

  // The values w8a8 rounds, in the graph as it runs (BatchNormalization folded, Relu fused), as
  // calibration would find them; each must get its parameters from a pair.
  Session session(quantize::inference_graph(model), SessionOptions{.threads = 1, .fuse = false});
  session.prepare(inputs);
  const Graph& graph = session.graph();
  const std::vector<ValueId> sources = quantize::parameter_sources(session);
  const std::vector<bool> constant = constant_derived(graph);
  quantize::ActivationTable table;
  table.algorithm = settings.algorithm;
  table.samples = 0;  // the parameters come from the model
  for (std::size_t v = 0; v < sources.size(); ++v) {
    const ValueId source = sources[v];
    if (source == no_value || constant[static_cast<std::size_t>(source)]) continue;
    const Value& value = graph.value(source);
    const auto found = pairs.find(value.name);
    if (found == pairs.end())
      refuse(fmt::format("'{}' ({}) is a float activation without a QuantizeLinear/DequantizeLinear pair; an int8 "
                         "model quantizes every activation, so pairs around some layers only cannot convert",
                         value.name,
                         value.producer < 0
                             ? std::string("a graph input")
                             : "output of " + graph.nodes()[static_cast<std::size_t>(value.producer)].label()));
    table.params[graph.value(static_cast<ValueId>(v)).name] = found->second;
  }
  return quantize::qnt8_section(table, settings);
}

}  // namespace rknnxx::host
