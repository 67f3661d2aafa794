// Graph::fuse_for_inference: BatchNormalization folded into the preceding Conv's weights and
// bias, then Relu or Clip (with constant bounds) fused into the Conv as a clamp on its output.
// Only where the Conv's output feeds nothing else and is not a graph output.

#include "graph.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rknnxx::host {

namespace {

onnx::AttributeProto float_attribute(std::string name, float value) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::float_;
  a.f = value;
  return a;
}

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

}  // namespace

void Graph::fuse_for_inference() {
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
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    for (ValueId in : nodes_[i].inputs) {
      if (in != no_value) {
        consumer[static_cast<std::size_t>(in)] = static_cast<int32_t>(i);
      }
    }
  }
  std::vector<bool> removed(nodes_.size(), false);
  bool changed = false;
  for (std::size_t ci = 0; ci < nodes_.size(); ++ci) {
    Node& conv = nodes_[ci];
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 ||
        conv.attribute("rknnxx.fused_min") != nullptr) {
      continue;
    }
    auto next_node = [&]() -> Node* {
      const auto out = static_cast<std::size_t>(conv.outputs[0]);
      const int32_t c = consumer[out];
      if (uses[out] != 1 || c < 0 || removed[static_cast<std::size_t>(c)]) {
        return nullptr;
      }
      Node& n = nodes_[static_cast<std::size_t>(c)];
      return n.inputs.empty() || n.inputs[0] != conv.outputs[0] || !n.domain.empty() ? nullptr : &n;
    };
    auto absorb = [&](Node& next) {
      conv.outputs[0] = next.outputs[0];
      removed[static_cast<std::size_t>(&next - nodes_.data())] = true;
      changed = true;
    };
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
        absorb(*next);
        next = next_node();
      }
    }
    if (next == nullptr) {
      continue;
    }
    float lo = std::numeric_limits<float>::lowest();
    float hi = std::numeric_limits<float>::max();
    if (next->op_type == "Relu") {
      lo = 0.0f;
    } else if (next->op_type == "Clip") {
      if (opset_ < 11) {
        lo = attribute_float(*next, "min", lo);
        hi = attribute_float(*next, "max", hi);
      } else {
        bool constant_bounds = true;
        for (std::size_t i = 1; i < next->inputs.size(); ++i) {
          if (next->inputs[i] == no_value) {
            continue;
          }
          const Tensor* t = constant(next->inputs[i]);
          if (t == nullptr || t->dtype() != DataType::float32 || t->elements() != 1) {
            constant_bounds = false;
            break;
          }
          (i == 1 ? lo : hi) = t->data<float>()[0];
        }
        if (!constant_bounds) {
          continue;
        }
      }
    } else {
      continue;
    }
    conv.attributes.push_back(float_attribute("rknnxx.fused_min", lo));
    conv.attributes.push_back(float_attribute("rknnxx.fused_max", hi));
    absorb(*next);
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
