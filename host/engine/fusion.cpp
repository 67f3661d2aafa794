// Graph::fuse_for_inference: BatchNormalization folded into the preceding Conv's weights and
// bias, then the element-wise chain after the Conv fused into it as its epilogue
// (ops/conv_epilogue.hpp): Relu, Clip with constant bounds, HardSwish, HardSigmoid, Sigmoid,
// HardSigmoid or Sigmoid followed by a Mul by their input (HardSwish, SiLU), Mul, Div, Add and Sub by
// scalar constants, and one residual Add of another computed value; and a BatchNormalization left standing takes
// the one-input steps after it. Each intermediate absorbed feeds nothing else and is not a graph output
// (docs/runtime-extensions.md, "Fused element-wise chains").

#include "graph.hpp"
#include "ops/conv_epilogue.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace rknnxx::host {

namespace {

bool is_float_constant(const Graph& g, const Node& n, std::size_t input) {
  if (input >= n.inputs.size() || n.inputs[input] == no_value) {
    return false;
  }
  const Tensor* t = g.constant(n.inputs[input]);
  return t != nullptr && t->dtype() == DataType::float32;
}

float attribute_float(const Node& n, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = n.attribute(name);
  return a != nullptr ? a->f : fallback;
}

// The epilogue step of a one-input element-wise node, if it has one.
std::optional<EpilogueStep> unary_step(const Graph& g, const Node& n, int64_t opset) {
  if (n.op_type == "Relu" && n.inputs.size() == 1) {
    return EpilogueStep{EpilogueKind::clamp, 0.0f, std::numeric_limits<float>::max()};
  }
  if (n.op_type == "HardSwish" && n.inputs.size() == 1) {
    return EpilogueStep{EpilogueKind::hard_swish, 1.0f / 6.0f, 0.5f};
  }
  if (n.op_type == "HardSigmoid" && n.inputs.size() == 1) {
    return EpilogueStep{EpilogueKind::hard_sigmoid, attribute_float(n, "alpha", 0.2f),
                        attribute_float(n, "beta", 0.5f)};
  }
  if (n.op_type == "Sigmoid" && n.inputs.size() == 1) {
    return EpilogueStep{EpilogueKind::sigmoid, 0.0f, 0.0f};
  }
  if (n.op_type != "Clip") {
    return std::nullopt;
  }
  float lo = std::numeric_limits<float>::lowest();
  float hi = std::numeric_limits<float>::max();
  if (opset < 11) {
    lo = attribute_float(n, "min", lo);
    hi = attribute_float(n, "max", hi);
  } else {
    for (std::size_t i = 1; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == no_value) {
        continue;
      }
      const Tensor* t = g.constant(n.inputs[i]);
      if (t == nullptr || t->dtype() != DataType::float32 || t->elements() != 1) {
        return std::nullopt;
      }
      (i == 1 ? lo : hi) = t->data<float>()[0];
    }
  }
  return EpilogueStep{EpilogueKind::clamp, lo, hi};
}

// The scalar of a float constant with one element, if `v` is one.
std::optional<float> scalar_constant(const Graph& g, ValueId v) {
  const Tensor* t = v != no_value ? g.constant(v) : nullptr;
  if (t == nullptr || t->dtype() != DataType::float32 || t->elements() != 1) return std::nullopt;
  return t->data<float>()[0];
}

// `n` as a * x + b of the value x = `out`, when it is a Mul, Div, Add or Sub of x and a scalar float constant
// (x on either side; Div only x / k) whose rank is at most `rank`, the Conv output's: a broadcast of a
// higher rank would change the value's shape.
std::optional<EpilogueStep> affine_step(const Graph& g, const Node& n, ValueId out, std::size_t rank) {
  if (!n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
  const bool left = n.inputs[0] == out;
  if (left == (n.inputs[1] == out)) return std::nullopt;  // x on neither side, or on both
  const ValueId other = n.inputs[left ? 1 : 0];
  const std::optional<float> k = scalar_constant(g, other);
  if (!k || !std::isfinite(*k) || g.constant(other)->rank() > rank) return std::nullopt;
  if (n.op_type == "Mul") return EpilogueStep{EpilogueKind::affine, *k, 0.0f};
  if (n.op_type == "Add") return EpilogueStep{EpilogueKind::affine, 1.0f, *k};
  if (n.op_type == "Sub")
    return left ? EpilogueStep{EpilogueKind::affine, 1.0f, -*k} : EpilogueStep{EpilogueKind::affine, -1.0f, *k};
  if (n.op_type == "Div" && left && *k != 0.0f) return EpilogueStep{EpilogueKind::affine, 1.0f / *k, 0.0f};
  return std::nullopt;
}

// A gate written out as scalar arithmetic around a Clip, as Paddle exports HardSwish's
// (Add 3, Clip 0..6, then Div 6 before or after the Mul): when the nodes `chain` compute
// k clamp(a x + b, 0, 1) of their first input with k > 0, returns {a, b, k}. Each node is an Add, Sub,
// Mul or Div by a scalar constant (the value on either side of Add and Mul, on the left of Sub and
// Div) or one Clip with constant bounds.
struct ClipGate {
  float a, b;
  double k;
};
std::optional<ClipGate> clip_gate(const Graph& g, std::span<Node* const> chain, int64_t opset) {
  double a = 1.0, b = 0.0, c = 1.0, d = 0.0;  // clamp(a x + b, lo, hi) * c + d
  std::optional<std::pair<double, double>> clip;
  for (const Node* n : chain) {
    if (n->op_type == "Clip") {
      const std::optional<EpilogueStep> s = unary_step(g, *n, opset);
      if (!s || clip) return std::nullopt;
      clip = {s->a, s->b};
      continue;
    }
    if (n->inputs.size() != 2) return std::nullopt;
    const bool first = scalar_constant(g, n->inputs[0]).has_value();
    const std::optional<float> k = scalar_constant(g, n->inputs[first ? 0 : 1]);
    if (!k || (first && (n->op_type == "Sub" || n->op_type == "Div"))) return std::nullopt;
    double& scale = clip ? c : a;
    double& shift = clip ? d : b;
    if (n->op_type == "Add") {
      shift += *k;
    } else if (n->op_type == "Sub") {
      shift -= *k;
    } else if (n->op_type == "Mul" && *k > 0.0f) {
      scale *= *k;
      shift *= *k;
    } else if (n->op_type == "Div" && *k > 0.0f) {
      scale /= *k;
      shift /= *k;
    } else {
      return std::nullopt;
    }
  }
  // clamp(a x + b, 0, hi) c = c hi clamp(a x / hi + b / hi, 0, 1) when c > 0 and 0 < hi.
  if (!clip || clip->first != 0.0 || d != 0.0 || c <= 0.0 || !(clip->second > 0.0) || !std::isfinite(clip->second)) {
    return std::nullopt;
  }
  const double hi = clip->second;
  return ClipGate{static_cast<float>(a / hi), static_cast<float>(b / hi), c * hi};
}

// The two attributes a fused chain is stored in (ops/conv_epilogue.hpp), built one step at a time.
struct ChainAttributes {
  onnx::AttributeProto kinds, params;

  ChainAttributes() {
    kinds.name = std::string(epilogue_kinds_attribute);
    kinds.type = onnx::AttributeProto::Type::ints;
    params.name = std::string(epilogue_params_attribute);
    params.type = onnx::AttributeProto::Type::floats;
  }
  void push(const EpilogueStep& step) {
    kinds.ints.push_back(static_cast<int64_t>(step.kind));
    params.floats.push_back(step.a);
    params.floats.push_back(step.b);
  }
  void attach_to(Node& node) {
    if (kinds.ints.empty()) return;
    node.attributes.push_back(std::move(kinds));
    node.attributes.push_back(std::move(params));
  }
};

}  // namespace

void Graph::fuse_for_inference(FusionScope scope) {
  std::vector<int32_t> uses(values_.size(), 0);
  for (const Node& n : nodes_) {
    for (ValueId in : n.inputs) {
      if (in != no_value) {
        ++uses[static_cast<std::size_t>(in)];
      }
    }
  }
  for (ValueId out : outputs_) {
    uses[static_cast<std::size_t>(out)] += 2;  // never fuse away a graph output
  }
  std::vector<int32_t> consumer(values_.size(), -1);
  std::vector<std::vector<int32_t>> consumers(values_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId in : nodes_[i].inputs) {
      if (in != no_value) {
        consumer[static_cast<std::size_t>(in)] = static_cast<int32_t>(i);
        auto& list = consumers[static_cast<std::size_t>(in)];
        if (list.empty() || list.back() != static_cast<int32_t>(i)) list.push_back(static_cast<int32_t>(i));
      }
    }
  }
  std::vector<bool> removed(nodes_.size(), false);
  bool changed = false;
  // The one node reading the producer's output 0, as its input 0, when nothing else reads it.
  auto next_of = [&](const Node& producer) -> Node* {
    const auto out = static_cast<std::size_t>(producer.outputs[0]);
    const int32_t c = consumer[out];
    if (uses[out] != 1 || c < 0 || removed[static_cast<std::size_t>(c)]) {
      return nullptr;
    }
    Node& n = nodes_[static_cast<std::size_t>(c)];
    return n.inputs.empty() || n.inputs[0] != producer.outputs[0] || !n.domain.empty() ? nullptr : &n;
  };
  // The producer takes over the node's output, and the node goes.
  auto absorb_into = [&](Node& producer, Node& next) {
    producer.outputs[0] = next.outputs[0];
    removed[static_cast<std::size_t>(&next - nodes_.data())] = true;
    changed = true;
  };
  for (std::size_t ci = 0; ci < nodes_.size(); ++ci) {
    Node& conv = nodes_[ci];
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 ||
        conv.attribute(epilogue_kinds_attribute) != nullptr) {
      continue;
    }
    auto next_node = [&] { return next_of(conv); };
    auto absorb = [&](Node& next) { absorb_into(conv, next); };
    Node* next = next_node();
    if (next != nullptr && next->op_type == "BatchNormalization" && next->inputs.size() == 5 &&
        is_float_constant(*this, conv, 1) && (conv.inputs.size() < 3 || is_float_constant(*this, conv, 2)) &&
        std::all_of(next->outputs.begin() + 1, next->outputs.end(), [](ValueId v) { return v == no_value; }) &&
        (next->attribute("training_mode") == nullptr || next->attribute("training_mode")->i == 0)) {
      const Tensor& w = *constant(conv.inputs[1]);
      const int64_t m = w.rank() > 0 ? w.dim(0) : 0;
      bool params_fit = true;
      for (std::size_t i = 1; i < 5; ++i) {
        params_fit = params_fit && is_float_constant(*this, *next, i) &&
            constant(next->inputs[i])->shape() == std::vector<int64_t>{m};
      }
      const Tensor* bias = conv.inputs.size() >= 3 && conv.inputs[2] != no_value ? constant(conv.inputs[2]) : nullptr;
      if (params_fit && m > 0 && (bias == nullptr || bias->shape() == std::vector<int64_t>{m})) {
        const float* scale = constant(next->inputs[1])->data<float>();
        const float* shift = constant(next->inputs[2])->data<float>();
        const float* mean = constant(next->inputs[3])->data<float>();
        const float* var = constant(next->inputs[4])->data<float>();
        const float epsilon = attribute_float(*next, "epsilon", 1e-5f);
        Tensor new_w = w.clone();
        Tensor new_b(DataType::float32, {m});
        const int64_t per_channel = w.elements() / m;
        float* wd = new_w.data<float>();
        float* bd = new_b.data<float>();
        for (int64_t c = 0; c < m; ++c) {
          const float a = scale[c] / std::sqrt(var[c] + epsilon);
          for (int64_t i = 0; i < per_channel; ++i) {
            wd[c * per_channel + i] *= a;
          }
          bd[c] = ((bias != nullptr ? bias->data<float>()[c] : 0.0f) - mean[c]) * a + shift[c];
        }
        const std::string base = value(next->outputs[0]).name;
        conv.inputs.resize(3);
        conv.inputs[1] = add_constant(base + "/folded_weights", std::move(new_w));
        conv.inputs[2] = add_constant(base + "/folded_bias", std::move(new_b));
        uses.resize(values_.size(), 1);
        consumer.resize(values_.size(), static_cast<int32_t>(ci));
        consumers.resize(values_.size());
        absorb(*next);
        next = next_node();
      }
    }
    // The element-wise chain after it, one step at a time (ops/conv_epilogue.hpp).
    ChainAttributes chain;
    auto& kinds = chain.kinds;
    auto& params = chain.params;
    bool has_add = false;
    while (scope == FusionScope::all || kinds.ints.empty()) {
      const ValueId out = conv.outputs[0];
      const auto uses_of_out = static_cast<std::size_t>(out) < uses.size() ? uses[static_cast<std::size_t>(out)] : 0;
      std::optional<EpilogueStep> step;
      std::vector<Node*> taken;
      if (uses_of_out == 1 && (next = next_node()) != nullptr && next->outputs.size() == 1) {
        step = unary_step(*this, *next, opset_);
        if (step && scope == FusionScope::clamp && step->kind != EpilogueKind::clamp) step.reset();
        if (step) taken.push_back(next);
      }
      if (!step && scope == FusionScope::all && uses_of_out == 1) {
        // Scalar arithmetic (Paddle's learnable affine blocks: a Mul and an Add by constants of one element),
        // either operand. A HardSwish written out as such arithmetic is matched below, where the value
        // feeds both its gate and its Mul.
        const int32_t c = consumer[static_cast<std::size_t>(out)];
        const Tensor* w = conv.inputs.size() > 1 ? constant(conv.inputs[1]) : nullptr;
        if (c >= 0 && !removed[static_cast<std::size_t>(c)]) {
          Node& n = nodes_[static_cast<std::size_t>(c)];
          step = affine_step(*this, n, out, w != nullptr ? w->rank() : 3);
          if (step) taken.push_back(&n);
        }
      }
      if (!step && scope == FusionScope::all && uses_of_out == 1 && !has_add) {
        // A residual Add: the Conv's output and another float value (the Conv's input 3).
        const int32_t c = consumer[static_cast<std::size_t>(out)];
        Node* add = c >= 0 && !removed[static_cast<std::size_t>(c)] ? &nodes_[static_cast<std::size_t>(c)] : nullptr;
        if (add != nullptr && add->op_type == "Add" && add->domain.empty() && add->inputs.size() == 2 &&
            add->outputs.size() == 1 && (add->inputs[0] == out) != (add->inputs[1] == out)) {
          const ValueId other = add->inputs[add->inputs[0] == out ? 1 : 0];
          if (other != no_value && constant(other) == nullptr) {
            step = EpilogueStep{EpilogueKind::add, 0.0f, 0.0f};
            conv.inputs.resize(4, no_value);
            conv.inputs[3] = other;
            has_add = true;
            taken.push_back(add);
          }
        }
      }
      if (!step && scope == FusionScope::all && uses_of_out == 2) {
        // A gate of the output (HardSigmoid, Sigmoid, or scalar arithmetic around a Clip), then Mul of the
        // output by the gate: HardSwish, SiLU. Every node of the gate feeds only the next.
        const auto& users = consumers[static_cast<std::size_t>(out)];
        auto usable = [&](int32_t u) {
          const Node& n = nodes_[static_cast<std::size_t>(u)];
          return !removed[static_cast<std::size_t>(u)] && n.domain.empty() && n.outputs.size() == 1 &&
              !n.inputs.empty();
        };
        for (std::size_t first = 0; users.size() == 2 && first < 2 && !step; ++first) {
          const int32_t g0 = users[first], m0 = users[1 - first];
          if (!usable(g0) || !usable(m0) || nodes_[static_cast<std::size_t>(m0)].op_type != "Mul") continue;
          Node* mul = &nodes_[static_cast<std::size_t>(m0)];
          std::vector<Node*> gate{&nodes_[static_cast<std::size_t>(g0)]};
          for (;;) {  // follow the gate while each value feeds only the next node
            const auto v = static_cast<std::size_t>(gate.back()->outputs[0]);
            const int32_t c = consumer[v];
            if (uses[v] != 1 || c < 0 || c == m0 || gate.size() > 6 || !usable(c)) break;
            Node& n = nodes_[static_cast<std::size_t>(c)];
            if (n.inputs[0] != gate.back()->outputs[0] &&
                (n.inputs.size() < 2 || n.inputs[1] != gate.back()->outputs[0]))
              break;
            gate.push_back(&n);
          }
          const ValueId gated = gate.back()->outputs[0];
          if (uses[static_cast<std::size_t>(gated)] != 1 || mul->inputs.size() != 2 ||
              !((mul->inputs[0] == out && mul->inputs[1] == gated) ||
                (mul->inputs[1] == out && mul->inputs[0] == gated))) {
            continue;
          }
          const Node& g = *gate.front();
          if (gate.size() == 1 && g.op_type == "Sigmoid") {
            step = EpilogueStep{EpilogueKind::silu, 0.0f, 0.0f};
          } else if (gate.size() == 1 && g.op_type == "HardSigmoid") {
            step = EpilogueStep{EpilogueKind::hard_swish, attribute_float(g, "alpha", 0.2f),
                                attribute_float(g, "beta", 0.5f)};
          } else if (g.inputs[0] == out || (g.inputs.size() == 2 && g.inputs[1] == out)) {
            if (const auto gate_k = clip_gate(*this, gate, opset_)) {
              // k = 1, or a Div or Mul by a scalar after the Mul makes it 1 (its input feeds only it).
              const auto v = static_cast<std::size_t>(mul->outputs[0]);
              const int32_t after = consumer[v];
              Node* scale =
                  uses[v] == 1 && after >= 0 && usable(after) ? &nodes_[static_cast<std::size_t>(after)] : nullptr;
              std::optional<float> k;
              if (scale != nullptr && scale->inputs.size() == 2 && scale->inputs[0] == mul->outputs[0] &&
                  (scale->op_type == "Div" || scale->op_type == "Mul")) {
                k = scalar_constant(*this, scale->inputs[1]);
              }
              const bool alone = std::fabs(gate_k->k - 1.0) <= 1e-6;
              const bool scaled =
                  !alone && k && std::fabs((scale->op_type == "Div" ? gate_k->k / *k : gate_k->k * *k) - 1.0) <= 1e-6;
              if (alone || scaled) {
                step = EpilogueStep{EpilogueKind::hard_swish, gate_k->a, gate_k->b};
                if (scaled) {
                  removed[static_cast<std::size_t>(mul - nodes_.data())] = true;
                  mul = scale;
                }
              }
            }
          }
          if (step) {
            for (Node* n : gate) removed[static_cast<std::size_t>(n - nodes_.data())] = true;
            taken.push_back(mul);
          }
        }
      }
      if (!step) break;
      if (step->kind == EpilogueKind::affine && !kinds.ints.empty() &&
          kinds.ints.back() == static_cast<int64_t>(EpilogueKind::affine)) {
        // Two in a row are one: a2 (a1 x + b1) + b2.
        float& a1 = params.floats[params.floats.size() - 2];
        float& b1 = params.floats.back();
        b1 = step->a * b1 + step->b;
        a1 = step->a * a1;
      } else {
        chain.push(*step);
      }
      absorb(*taken.back());
    }
    chain.attach_to(conv);
  }
  // A BatchNormalization no Conv took (densenet's, after a Concat) takes the one-input steps after it: one pass
  // over its output instead of one per node.
  for (std::size_t bi = 0; bi < nodes_.size() && scope == FusionScope::all; ++bi) {
    Node& bn = nodes_[bi];
    if (removed[bi] || bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5 ||
        bn.outputs.empty() || bn.attribute(epilogue_kinds_attribute) != nullptr ||
        std::any_of(bn.outputs.begin() + 1, bn.outputs.end(), [](ValueId v) { return v != no_value; })) {
      continue;
    }
    ChainAttributes chain;
    for (Node* next = next_of(bn); next != nullptr && next->outputs.size() == 1; next = next_of(bn)) {
      const std::optional<EpilogueStep> step = unary_step(*this, *next, opset_);
      if (!step) break;
      chain.push(*step);
      absorb_into(bn, *next);
    }
    chain.attach_to(bn);
  }
  if (!changed) {
    return;
  }
  std::vector<Node> kept;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (!removed[i]) {
      kept.push_back(std::move(nodes_[i]));
    }
  }
  nodes_ = std::move(kept);
  sort_and_prune();
}

}  // namespace rknnxx::host
