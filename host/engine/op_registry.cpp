#include "op_registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rknnxx::host {

namespace {

std::string_view attribute_type_name(onnx::AttributeProto::Type type) {
  using T = onnx::AttributeProto::Type;
  switch (type) {
    case T::float_: return "float";
    case T::int_: return "int";
    case T::string: return "string";
    case T::tensor: return "tensor";
    case T::graph: return "graph";
    case T::floats: return "floats";
    case T::ints: return "ints";
    case T::strings: return "strings";
    case T::tensors: return "tensors";
    case T::graphs: return "graphs";
    case T::undefined: break;
  }
  return "undefined";
}

}  // namespace

const TensorInfo& OpContext::input(std::size_t i) const {
  if (!has_input(i)) {
    fail("input {} is required but not given", i);
  }
  return *inputs_[i];
}

std::string_view OpContext::input_name(std::size_t i) const {
  return has_input(i) ? std::string_view(graph_.value(node_.inputs[i]).name) : std::string_view("");
}

void OpContext::expect_inputs(std::size_t min, std::size_t max) const {
  std::size_t given = inputs_.size();
  while (given > 0 && inputs_[given - 1] == nullptr) {
    --given;  // trailing omitted optional inputs do not count
  }
  if (given < min || given > max) {
    if (min == max) {
      fail("expected {} inputs, given {}", min, given);
    }
    fail("expected {} to {} inputs, given {}", min, max, given);
  }
  for (std::size_t i = 0; i < min; ++i) {
    if (inputs_[i] == nullptr) {
      fail("input {} is required but omitted", i);
    }
  }
}

void OpContext::expect_dtype(std::size_t i, std::initializer_list<DataType> types) const {
  const DataType given = input(i).dtype;
  if (std::find(types.begin(), types.end(), given) == types.end()) {
    std::vector<std::string_view> names;
    for (DataType t : types) {
      names.push_back(dtype_name(t));
    }
    fail("input {} has element type {}, expected {}", i, dtype_name(given), fmt::join(names, " or "));
  }
}

const Tensor& OpContext::expect_constant(std::size_t i) const {
  const Tensor* t = constant(i);
  if (t == nullptr) {
    fail("input {} must be a constant (initializer) for the host engine", i);
  }
  return *t;
}

const onnx::AttributeProto& OpContext::typed_attribute(std::string_view name, onnx::AttributeProto::Type type) const {
  const onnx::AttributeProto* a = attribute(name);
  if (a->type != type && a->type != onnx::AttributeProto::Type::undefined) {
    fail("attribute '{}' has type {}, expected {}", name, attribute_type_name(a->type), attribute_type_name(type));
  }
  return *a;
}

int64_t OpContext::attr_int(std::string_view name, int64_t fallback) const {
  return attribute(name) != nullptr ? typed_attribute(name, onnx::AttributeProto::Type::int_).i : fallback;
}

float OpContext::attr_float(std::string_view name, float fallback) const {
  return attribute(name) != nullptr ? typed_attribute(name, onnx::AttributeProto::Type::float_).f : fallback;
}

std::string OpContext::attr_string(std::string_view name, std::string_view fallback) const {
  return attribute(name) != nullptr ? typed_attribute(name, onnx::AttributeProto::Type::string).s
                                    : std::string(fallback);
}

std::vector<int64_t> OpContext::attr_ints(std::string_view name, std::vector<int64_t> fallback) const {
  return attribute(name) != nullptr ? typed_attribute(name, onnx::AttributeProto::Type::ints).ints
                                    : std::move(fallback);
}

std::vector<float> OpContext::attr_floats(std::string_view name, std::vector<float> fallback) const {
  return attribute(name) != nullptr ? typed_attribute(name, onnx::AttributeProto::Type::floats).floats
                                    : std::move(fallback);
}

std::optional<Tensor> OpContext::attr_tensor(std::string_view name) const {
  if (attribute(name) == nullptr) {
    return std::nullopt;
  }
  const auto& a = typed_attribute(name, onnx::AttributeProto::Type::tensor);
  if (a.t.empty()) {
    fail("attribute '{}' holds no tensor", name);
  }
  try {
    return tensor_from_proto(a.t.front());
  } catch (const EngineError& e) {
    fail("attribute '{}': {}", name, e.what());
  }
}

int64_t OpContext::normalize_axis(int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    fail("axis {} is out of range for rank {}", axis, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

void OpContext::fail(std::string_view message) const { throw NodeError(fmt::format("{}: {}", node_.label(), message)); }

OpRegistry& OpRegistry::instance() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(OpDefinition definition) {
  if (find(definition.domain, definition.op_type) != nullptr) {
    std::fprintf(stderr, "rknnxx host engine: operator %s registered twice\n", definition.op_type.c_str());
    std::abort();
  }
  definitions_.push_back(std::make_unique<OpDefinition>(std::move(definition)));
}

const OpDefinition* OpRegistry::find(std::string_view domain, std::string_view op_type) const {
  if (domain == "ai.onnx") {
    domain = "";
  }
  for (const auto& d : definitions_) {
    if (d->op_type == op_type && d->domain == domain) {
      return d.get();
    }
  }
  return nullptr;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> names;
  for (const auto& d : definitions_) {
    names.push_back(d->domain.empty() ? d->op_type : d->domain + "." + d->op_type);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string_view excluded_operator_reason(std::string_view domain, std::string_view op_type) noexcept {
  if (domain == "ai.onnx.preview.training") {
    return "a training operator; the host engine runs inference";
  }
  if (!domain.empty() && domain != "ai.onnx") {
    return "";
  }
  static constexpr std::string_view training[] = {
      "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "Adagrad", "Adam", "Momentum", "Gradient"};
  static constexpr std::string_view strings[] = {"StringNormalizer", "RegexFullMatch", "StringConcat", "StringSplit",
                                                 "LabelEncoder"};
  static constexpr std::string_view sequences[] = {"SequenceAt",    "SequenceConstruct",  "SequenceEmpty",
                                                   "SequenceErase", "SequenceInsert",     "SequenceLength",
                                                   "SequenceMap",   "SplitToSequence",    "ConcatFromSequence",
                                                   "Optional",      "OptionalGetElement", "OptionalHasElement"};
  static constexpr std::string_view random[] = {"RandomNormal",      "RandomNormalLike", "RandomUniform",
                                                "RandomUniformLike", "Multinomial",      "Bernoulli"};
  const auto in = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), op_type) != std::end(list);
  };
  if (in(training)) return "a training operator; the host engine runs inference";
  if (in(strings)) return "a string operator; the host engine computes on numeric tensors";
  if (in(sequences)) return "it works on sequence or optional values; the host engine plans tensors only";
  if (in(random)) return "a random generator; host engine results are deterministic";
  return "";
}

OpRegistrar::OpRegistrar(std::string_view op_type, PrepareFunction prepare, std::string_view domain) {
  OpRegistry::instance().add(OpDefinition{std::string(op_type), std::string(domain), prepare});
}

OpRegistrar::OpRegistrar(std::string_view op_type, PrepareFunction prepare, MovesValues) {
  OpRegistry::instance().add(OpDefinition{std::string(op_type), "", prepare, true});
}

}  // namespace rknnxx::host
