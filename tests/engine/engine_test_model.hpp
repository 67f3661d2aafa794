#pragma once
// Builds small ONNX models from the onnx_model.hpp structs for the engine tests, and the
// reference helpers the tests compare against.

#include "engine.hpp"
#include "thread_pool.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace rknnxx::host::testing {

inline onnx::AttributeProto attr(std::string name, int64_t value) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::int_;
  a.i = value;
  return a;
}
inline onnx::AttributeProto attr(std::string name, float value) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::float_;
  a.f = value;
  return a;
}
inline onnx::AttributeProto attr(std::string name, std::string value) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::string;
  a.s = std::move(value);
  return a;
}
inline onnx::AttributeProto attr(std::string name, const char* value) {
  return attr(std::move(name), std::string(value));
}
inline onnx::AttributeProto attr(std::string name, std::vector<int64_t> values) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::ints;
  a.ints = std::move(values);
  return a;
}
// A list of floats; named apart from attr() so that a braced list never picks the wrong one.
inline onnx::AttributeProto attr_floats(std::string name, std::vector<float> values) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::floats;
  a.floats = std::move(values);
  return a;
}

inline onnx::TensorProto to_proto(const std::string& name, const Tensor& t) {
  onnx::TensorProto p;
  p.name = name;
  p.data_type = t.dtype();
  p.dims = t.shape();
  p.raw_data.assign(reinterpret_cast<const char*>(t.raw()), t.bytes());
  return p;
}

// A dimension of -1 in input() is symbolic ("N").
class ModelBuilder {
public:
  explicit ModelBuilder(int64_t opset = 13) {
    model_.ir_version = 8;
    model_.opset_import.push_back({"", opset});
  }
  ModelBuilder& input(std::string name, DataType type, std::vector<int64_t> dims) {
    onnx::ValueInfoProto v;
    v.name = std::move(name);
    v.elem_type = type;
    v.has_shape = true;
    for (int64_t d : dims) {
      onnx::Dimension dim;
      dim.has_value = d >= 0;
      dim.value = d >= 0 ? d : 0;
      dim.param = d >= 0 ? "" : "N";
      v.shape.push_back(dim);
    }
    model_.graph.input.push_back(std::move(v));
    return *this;
  }
  ModelBuilder& output(std::string name) {
    onnx::ValueInfoProto v;
    v.name = std::move(name);
    model_.graph.output.push_back(std::move(v));
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const Tensor& t) {
    model_.graph.initializer.push_back(to_proto(name, t));
    return *this;
  }
  ModelBuilder& node(std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                     std::vector<onnx::AttributeProto> attributes = {}, std::string name = "",
                     std::string domain = "") {
    onnx::NodeProto n;
    n.domain = std::move(domain);
    n.op_type = std::move(op);
    n.input = std::move(inputs);
    n.output = std::move(outputs);
    n.attribute = std::move(attributes);
    n.name = name.empty() ? n.op_type + "_" + std::to_string(model_.graph.node.size()) : std::move(name);
    model_.graph.node.push_back(std::move(n));
    return *this;
  }
  const onnx::ModelProto& model() const { return model_; }
  onnx::ModelProto& model() { return model_; }

private:
  onnx::ModelProto model_;
};

// Thread counts for tests: at most $RKNNXX_HOST_THREADS when set (the emulated aarch64 run
// sets 1: qemu-user on the test machine hangs when a program starts a thread).
inline std::size_t test_threads(std::size_t wanted) { return std::min(wanted, default_thread_count()); }

// The distinct thread counts of `wanted` that test_threads allows.
inline std::vector<std::size_t> test_thread_counts(std::initializer_list<std::size_t> wanted) {
  std::vector<std::size_t> counts;
  for (const std::size_t w : wanted) {
    if (std::find(counts.begin(), counts.end(), test_threads(w)) == counts.end()) counts.push_back(test_threads(w));
  }
  return counts;
}

inline std::vector<float> random_floats(std::size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) {
    x = dist(rng);
  }
  return v;
}

inline Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  const auto n = static_cast<std::size_t>(element_count(shape));
  const auto values = random_floats(n, seed, lo, hi);
  return Tensor::from<float>(std::move(shape), std::span<const float>(values));
}

// One-output run of a model with the given inputs.
inline Tensor run_one(const onnx::ModelProto& model, std::vector<Tensor> inputs, SessionOptions options = {}) {
  options.threads = test_threads(options.threads == 0 ? 4 : options.threads);
  Session session(model, options);
  auto outputs = session.run(inputs);
  REQUIRE(outputs.size() >= 1);
  return std::move(outputs.front());
}

inline void check_close(const Tensor& got, const Tensor& want, float tolerance = 1e-4f) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(shape_string(got.shape()) == shape_string(want.shape()));
  const auto g = got.values<float>();
  const auto w = want.values<float>();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const float limit = tolerance * std::max(1.0f, std::fabs(w[i]));
    if (!(std::fabs(g[i] - w[i]) <= limit) && !(std::isnan(g[i]) && std::isnan(w[i]))) {
      if (bad++ < 5) {
        MESSAGE("element " << i << ": got " << g[i] << ", want " << w[i]);
      }
    }
  }
  CHECK(bad == 0);
}

// The message of the EngineError thrown by f ("" when none is thrown).
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const EngineError& e) {
    return e.what();
  }
  return "";
}

// The message of the EngineError that planning `model` throws ("" when none), for its graph inputs
// (initializers aside) at their declared shapes.
inline std::string planning_refusal(const onnx::ModelProto& model) {
  return error_of([&] {
    Session session(model, SessionOptions{.threads = 1});
    std::vector<TensorInfo> inputs;
    for (const auto& v : model.graph.input) {
      const bool initializer = std::any_of(model.graph.initializer.begin(), model.graph.initializer.end(),
                                           [&](const onnx::TensorProto& t) { return t.name == v.name; });
      if (!initializer) {
        TensorInfo info{v.elem_type, {}};
        for (const auto& d : v.shape) info.shape.push_back(d.value);
        inputs.push_back(std::move(info));
      }
    }
    session.prepare(inputs);
  });
}

}  // namespace rknnxx::host::testing
