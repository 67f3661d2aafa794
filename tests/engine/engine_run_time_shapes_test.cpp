// Shapes decided while running (docs/conformance.md#run-time-shapes) and control flow with
// subgraphs (docs/conformance.md#control-flow): operators whose output shapes depend on data, the
// nodes downstream of them prepared again on every run, their bounds, and If, Loop and Unique.

#include "engine_test_model.hpp"

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

onnx::AttributeProto graph_attr(std::string name, onnx::GraphProto graph) {
  onnx::AttributeProto a;
  a.name = std::move(name);
  a.type = onnx::AttributeProto::Type::graph;
  a.g.push_back(std::move(graph));
  return a;
}

onnx::ValueInfoProto value_info(std::string name, DataType type = DataType::undefined) {
  onnx::ValueInfoProto v;
  v.name = std::move(name);
  v.kind = onnx::TypeKind::tensor;
  v.elem_type = type;
  return v;
}

onnx::NodeProto make_node(std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                          std::vector<onnx::AttributeProto> attributes = {}) {
  onnx::NodeProto n;
  n.op_type = std::move(op);
  n.name = n.op_type;
  n.input = std::move(inputs);
  n.output = std::move(outputs);
  n.attribute = std::move(attributes);
  return n;
}

template <class T> std::vector<T> values_of(const Tensor& t) {
  const auto v = t.values<T>();
  return {v.begin(), v.end()};
}

Session make_session(const onnx::ModelProto& model) {
  return Session(model, SessionOptions{.threads = test_threads(2)});
}

}  // namespace

TEST_SUITE("run-time shapes") {
  TEST_CASE("NonZero of a computed tensor: its count decided on every run, the rest of the graph planned") {
    ModelBuilder b(13);
    b.input("x", DataType::float32, {6})
        .initializer("zero", Tensor::scalar<float>(0.0f))
        .initializer("axes", Tensor::from<int64_t>({1}, {0}))
        .output("picked")
        .output("relu")
        .node("Greater", {"x", "zero"}, {"positive"})
        .node("NonZero", {"positive"}, {"where"})
        .node("Squeeze", {"where", "axes"}, {"indices"})
        .node("Gather", {"x", "indices"}, {"gathered"})
        .node("Mul", {"gathered", "gathered"}, {"picked"})
        .node("Relu", {"x"}, {"relu"});
    Session session = make_session(b.model());
    const TensorInfo input{DataType::float32, {6}};
    session.prepare({&input, 1});
    // The bound: every element non-zero.
    CHECK(session.output_shape_kinds() == std::vector{OutputShapeKind::bounded, OutputShapeKind::planned});
    CHECK(session.output_infos()[0].shape == std::vector<int64_t>{6});
    CHECK(session.output_infos()[1].shape == std::vector<int64_t>{6});

    auto outputs = session.run(std::vector{Tensor::from<float>({6}, {1, -2, 3, -4, 5, 0})});
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{1, 9, 25});
    CHECK(values_of<float>(outputs[1]) == std::vector<float>{1, 0, 3, 0, 5, 0});
    outputs =
        session.run(std::vector{Tensor::from<float>({6}, {-1, -2, -3, -4, -5, 2})});  // the same plan, one element
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{4});
    outputs = session.run(std::vector{Tensor::from<float>({6}, {-1, -2, -3, -4, -5, -6})});  // none
    CHECK(outputs[0].shape() == std::vector<int64_t>{0});
    CHECK(values_of<float>(outputs[1]) == std::vector<float>(6, 0.0f));
  }

  TEST_CASE("TopK with k = min(2, count) and NonMaxSuppression fed by the network, with bounds from shapes") {
    ModelBuilder b(13);
    b.input("scores", DataType::float32, {1, 1, 4})
        .input("boxes", DataType::float32, {1, 4, 4})
        .initializer("threshold", Tensor::scalar<float>(0.1f))
        .initializer("two", Tensor::from<int64_t>({1}, {2}))
        .initializer("max_boxes", Tensor::from<int64_t>({1}, {10}))
        .initializer("iou", Tensor::from<float>({1}, {0.5f}))
        .initializer("flat", Tensor::from<int64_t>({1}, {-1}))
        .output("best")
        .output("selected")
        .node("Reshape", {"scores", "flat"}, {"flat_scores"})
        .node("Greater", {"flat_scores", "threshold"}, {"over"})
        .node("NonZero", {"over"}, {"where"})
        .node("Shape", {"where"}, {"where_shape"})
        .node("Slice", {"where_shape", "flat", "max_boxes"}, {"count"})  // the last dimension: the count
        .node("Min", {"count", "two"}, {"k"})
        .node("TopK", {"flat_scores", "k"}, {"best", "best_indices"})
        .node("NonMaxSuppression", {"boxes", "scores", "max_boxes", "iou"}, {"selected"});
    Session session = make_session(b.model());
    const std::vector<TensorInfo> inputs{{DataType::float32, {1, 1, 4}}, {DataType::float32, {1, 4, 4}}};
    session.prepare(inputs);
    CHECK(session.output_shape_kinds() == std::vector{OutputShapeKind::bounded, OutputShapeKind::bounded});
    CHECK(session.output_infos()[0].shape == std::vector<int64_t>{2});  // min(2, at most 4) from the shape bound
    CHECK(session.output_infos()[1].shape == std::vector<int64_t>{4, 3});

    // Boxes 0 and 1 overlap (IoU 0.81), 2 and 3 stand apart.
    const Tensor boxes = Tensor::from<float>({1, 4, 4}, {0, 0, 10, 10, 0, 0, 10, 9, 20, 20, 30, 30, 40, 40, 50, 50});
    auto outputs = session.run(std::vector{Tensor::from<float>({1, 1, 4}, {0.9f, 0.8f, 0.05f, 0.7f}), boxes});
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{0.9f, 0.8f});
    CHECK(values_of<int64_t>(outputs[1]) == std::vector<int64_t>{0, 0, 0, 0, 0, 3, 0, 0, 2});
    outputs = session.run(std::vector{Tensor::from<float>({1, 1, 4}, {0.05f, 0.08f, 0.5f, 0.01f}), boxes});
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{0.5f});  // k = 1
    CHECK(values_of<int64_t>(outputs[1]) == std::vector<int64_t>{0, 0, 2, 0, 0, 1, 0, 0, 3});
  }

  TEST_CASE("a value computed from run-time values with no bound is reported unbounded and still runs") {
    ModelBuilder b(13);
    b.input("x", DataType::float32, {5})
        .initializer("zero", Tensor::scalar<float>(0.0f))
        .initializer("start", Tensor::scalar<int64_t>(0))
        .initializer("step", Tensor::scalar<int64_t>(1))
        .output("range")
        .node("Greater", {"x", "zero"}, {"positive"})
        .node("NonZero", {"positive"}, {"where"})
        .node("ReduceSum", {"where"}, {"sum"}, {attr("keepdims", int64_t{0})})
        .node("Range", {"start", "sum", "step"}, {"range"});
    Session session = make_session(b.model());
    const TensorInfo input{DataType::float32, {5}};
    session.prepare({&input, 1});
    CHECK(session.output_shape_kinds() == std::vector{OutputShapeKind::unbounded});
    const auto outputs = session.run(std::vector{Tensor::from<float>({5}, {0, 1, 0, 1, 1})});  // indices 1 + 3 + 4
    CHECK(values_of<int64_t>(outputs[0]) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  }
}

TEST_SUITE("control flow") {
  // then: x + 1; else: x * 2 (both read x of the outer graph).
  onnx::ModelProto if_model(bool constant_condition) {
    onnx::GraphProto then_branch;
    then_branch.name = "then";
    then_branch.initializer.push_back(to_proto("one", Tensor::scalar<float>(1.0f)));
    then_branch.node.push_back(make_node("Add", {"x", "one"}, {"then_out"}));
    then_branch.output.push_back(value_info("then_out", DataType::float32));
    onnx::GraphProto else_branch;
    else_branch.name = "else";
    else_branch.initializer.push_back(to_proto("two", Tensor::scalar<float>(2.0f)));
    else_branch.node.push_back(make_node("Mul", {"x", "two"}, {"else_out"}));
    else_branch.output.push_back(value_info("else_out", DataType::float32));
    ModelBuilder b(13);
    b.input("x", DataType::float32, {3}).output("y");
    if (constant_condition) {
      b.initializer("condition", Tensor::scalar<bool>(false));
    } else {
      b.initializer("zero", Tensor::scalar<float>(0.0f))
          .node("ReduceSum", {"x"}, {"sum"}, {attr("keepdims", int64_t{0})})
          .node("Greater", {"sum", "zero"}, {"condition"});
    }
    b.node("If", {"condition"}, {"y"},
           {graph_attr("then_branch", then_branch), graph_attr("else_branch", else_branch)});
    return b.model();
  }

  TEST_CASE("If with a computed condition chooses its branch on every run; a constant one is planned") {
    Session session = make_session(if_model(false));
    auto y = session.run(std::vector{Tensor::from<float>({3}, {1, 2, 3})});
    CHECK(session.output_shape_kinds() == std::vector{OutputShapeKind::bounded});
    CHECK(values_of<float>(y[0]) == std::vector<float>{2, 3, 4});
    y = session.run(std::vector{Tensor::from<float>({3}, {-1, -2, 0})});
    CHECK(values_of<float>(y[0]) == std::vector<float>{-2, -4, 0});

    Session planned = make_session(if_model(true));
    y = planned.run(std::vector{Tensor::from<float>({3}, {1, 2, 3})});
    CHECK(planned.output_shape_kinds() == std::vector{OutputShapeKind::planned});
    CHECK(values_of<float>(y[0]) == std::vector<float>{2, 4, 6});
  }

  TEST_CASE("a subgraph reading a name no scope defines is refused naming it") {
    onnx::ModelProto model = if_model(false);
    model.graph.node.back().attribute[0].g[0].node[0].input[0] = "nowhere";
    const std::string message = error_of([&] { Graph graph(model); });
    CHECK(message.find("a subgraph reads 'nowhere'") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }

  TEST_CASE("Loop carries a value and stacks a scan output for the trip count given while running") {
    // body(i, cond, sum) -> (cond, sum + x[i], sum + x[i]); x is the outer graph's.
    onnx::GraphProto body;
    body.name = "body";
    body.input = {value_info("i", DataType::int64), value_info("cond_in", DataType::boolean),
                  value_info("sum_in", DataType::float32)};
    body.node.push_back(make_node("Gather", {"x", "i"}, {"element"}));
    body.node.push_back(make_node("Add", {"sum_in", "element"}, {"sum_out"}));
    body.node.push_back(make_node("Identity", {"cond_in"}, {"cond_out"}));
    body.node.push_back(make_node("Identity", {"sum_out"}, {"partial"}));
    body.output = {value_info("cond_out", DataType::boolean), value_info("sum_out", DataType::float32),
                   value_info("partial", DataType::float32)};
    ModelBuilder b(13);
    b.input("x", DataType::float32, {4})
        .input("trips", DataType::int64, {})
        .initializer("go", Tensor::scalar<bool>(true))
        .initializer("start", Tensor::scalar<float>(0.0f))
        .output("sum")
        .output("partials")
        .node("Loop", {"trips", "go", "start"}, {"sum", "partials"}, {graph_attr("body", body)});
    Session session = make_session(b.model());
    auto outputs = session.run(std::vector{Tensor::from<float>({4}, {1, 2, 3, 4}), Tensor::scalar<int64_t>(3)});
    CHECK(session.output_shape_kinds() == std::vector{OutputShapeKind::unbounded, OutputShapeKind::unbounded});
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{6});
    CHECK(values_of<float>(outputs[1]) == std::vector<float>{1, 3, 6});
    CHECK(outputs[1].shape() == std::vector<int64_t>{3});
    outputs = session.run(std::vector{Tensor::from<float>({4}, {1, 2, 3, 4}), Tensor::scalar<int64_t>(0)});
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{0});
    CHECK(outputs[1].shape() == std::vector<int64_t>{0});
    // Gather out of range on the fifth trip: the iteration is named.
    const std::string message = error_of([&] {
      session.run(std::vector{Tensor::from<float>({4}, {1, 2, 3, 4}), Tensor::scalar<int64_t>(5)});
    });
    CHECK(message.find("iteration 4") != std::string::npos);
  }

  TEST_CASE("Unique of a computed tensor: sorted, in first-occurrence order, and along an axis") {
    ModelBuilder b(13);
    b.input("x", DataType::int64, {6})
        .output("y")
        .output("indices")
        .output("inverse")
        .output("counts")
        .node("Unique", {"x"}, {"y", "indices", "inverse", "counts"}, {attr("sorted", int64_t{0})});
    Session session = make_session(b.model());
    auto outputs = session.run(std::vector{Tensor::from<int64_t>({6}, {3, 1, 3, 2, 1, 3})});
    CHECK(session.output_shape_kinds()[0] == OutputShapeKind::bounded);
    CHECK(values_of<int64_t>(outputs[0]) == std::vector<int64_t>{3, 1, 2});
    CHECK(values_of<int64_t>(outputs[1]) == std::vector<int64_t>{0, 1, 3});
    CHECK(values_of<int64_t>(outputs[2]) == std::vector<int64_t>{0, 1, 0, 2, 1, 0});
    CHECK(values_of<int64_t>(outputs[3]) == std::vector<int64_t>{3, 2, 1});

    ModelBuilder sorted(13);
    sorted.initializer("x", Tensor::from<float>({3, 2}, {2, 1, 0, 5, 2, 1}))
        .output("y")
        .node("Unique", {"x"}, {"y", "indices", "inverse", "counts"}, {attr("axis", int64_t{0})});
    Session folded = make_session(sorted.model());
    outputs = folded.run({});
    CHECK(outputs[0].shape() == std::vector<int64_t>{2, 2});
    CHECK(values_of<float>(outputs[0]) == std::vector<float>{0, 5, 2, 1});
  }
}
