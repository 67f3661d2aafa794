// Building a Graph from a ModelProto: validation errors, constant folding, pruning.

#include "engine_test_model.hpp"
#include "op_registry.hpp"

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {
ModelBuilder relu_model(int64_t opset = 13) {
  ModelBuilder b(opset);
  b.input("x", DataType::float32, {2, 3}).output("y").node("Relu", {"x"}, {"y"}, {}, "relu1");
  return b;
}
}  // namespace

TEST_SUITE("engine.graph") {
  TEST_CASE("a valid graph exposes inputs, outputs and nodes in topological order") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2})
        .output("z")
        .node("Relu", {"y"}, {"z"}, {}, "second")  // listed before its producer
        .node("Neg", {"x"}, {"y"}, {}, "first");
    Graph g(b.model());
    REQUIRE(g.nodes().size() == 2);
    CHECK(g.nodes()[0].name == "first");
    CHECK(g.nodes()[1].name == "second");
    CHECK(g.inputs().size() == 1);
    CHECK(g.value(g.outputs()[0]).name == "z");
    CHECK(g.opset() == 13);
  }

  TEST_CASE("opsets outside 1..21 are refused") {
    CHECK_NOTHROW(Graph(relu_model(1).model()));
    CHECK_NOTHROW(Graph(relu_model(8).model()));
    CHECK_NOTHROW(Graph(relu_model(17).model()));
    CHECK_NOTHROW(Graph(relu_model(21).model()));
    CHECK(error_of([] { Graph g(relu_model(0).model()); }).find("opset 0 is not supported") != std::string::npos);
    CHECK_NOTHROW(Graph(relu_model(21).model()));
    CHECK(error_of([] { Graph g(relu_model(22).model()); }) ==
          "model opset 22 is not supported by the host engine (supported: 1 to 21)");
  }

  TEST_CASE("an unsupported operator is named with its node") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2}).output("y").node("FancyOp", {"x"}, {"y"}, {}, "mystery");
    CHECK(error_of([&] { Graph g(b.model()); }) ==
          "node 'mystery' (FancyOp): operator FancyOp is not supported by the host engine; to run it with "
          "rknn_register_custom_ops, list it in the conversion config's \"custom_ops\" (docs/custom-operators.md)");
    b.model().graph.node[0].domain = "com.microsoft";
    CHECK(error_of([&] { Graph g(b.model()); }).find("com.microsoft.FancyOp") != std::string::npos);
  }

  TEST_CASE("an operator listed as custom is kept; a listed operator the engine has is refused") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2}).output("y").node("FancyOp", {"x"}, {"y"}, {}, "mystery", "my.domain");
    const std::vector<CustomOpType> fancy{{"FancyOp", "my.domain"}};
    const Graph g(b.model(), fancy);
    REQUIRE(g.nodes().size() == 1);
    CHECK(g.nodes()[0].custom);
    CHECK(g.nodes()[0].op == nullptr);
    const std::vector<CustomOpType> other_domain{{"FancyOp", "other.domain"}};
    CHECK(error_of([&] { Graph h(b.model(), other_domain); }).find("my.domain.FancyOp is not supported") !=
          std::string::npos);
    const std::vector<CustomOpType> relu{{"Relu", ""}};
    CHECK(error_of([&] { Graph h(b.model(), relu); }) ==
          "custom operator Relu is an operator the host engine implements; list only operators it lacks as custom");
  }

  TEST_CASE("an operator refused by design says why") {
    const auto refusal = [](const char* op_type) {
      ModelBuilder b;
      b.input("x", DataType::float32, {2}).output("y").node(op_type, {"x"}, {"y"}, {}, "n");
      return error_of([&] { Graph g(b.model()); });
    };
    CHECK(refusal("SoftmaxCrossEntropyLoss") ==
          "node 'n' (SoftmaxCrossEntropyLoss): operator SoftmaxCrossEntropyLoss "
          "is not supported by the host engine: a training operator; the host "
          "engine runs inference");
    CHECK(refusal("StringNormalizer").find(": a string operator") != std::string::npos);
    CHECK(refusal("SequenceLength").find(": it works on sequence or optional values") != std::string::npos);
    CHECK(refusal("RandomUniformLike").find(": a random generator") != std::string::npos);
    ModelBuilder adam;
    adam.input("x", DataType::float32, {2}).output("y").node("Adam", {"x"}, {"y"}, {}, "n", "ai.onnx.preview.training");
    CHECK(error_of([&] { Graph g(adam.model()); })
              .find("ai.onnx.preview.training.Adam is not supported by the host "
                    "engine: a training operator") != std::string::npos);
    ModelBuilder custom;
    custom.input("x", DataType::float32, {2}).output("y").node("Adam", {"x"}, {"y"}, {}, "n", "com.example");
    CHECK(error_of([&] { Graph g(custom.model()); }) ==
          "node 'n' (Adam): operator com.example.Adam is not supported by the host engine; to run it with "
          "rknn_register_custom_ops, list it in the conversion config's \"custom_ops\" (docs/custom-operators.md)");
  }

  TEST_CASE("a dangling input names the node, operator and missing tensor") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2}).output("y").node("Add", {"x", "ghost"}, {"y"}, {}, "adder");
    CHECK(error_of([&] { Graph g(b.model()); }) ==
          "node 'adder' (Add): input 'ghost' is not a graph input, an initializer or the output of any node");
  }

  TEST_CASE("a cycle is refused, naming a node on it") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2})
        .output("y")
        .node("Add", {"x", "b"}, {"a"}, {}, "n1")
        .node("Relu", {"a"}, {"b"}, {}, "n2")
        .node("Relu", {"a"}, {"y"}, {}, "n3");
    const std::string e = error_of([&] { Graph g(b.model()); });
    CHECK(e.find("is part of a cycle") != std::string::npos);
    CHECK((e.find("'n1' (Add)") != std::string::npos || e.find("'n2' (Relu)") != std::string::npos));
  }

  TEST_CASE("a value produced twice is refused") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2})
        .output("y")
        .node("Relu", {"x"}, {"y"}, {}, "a")
        .node("Neg", {"x"}, {"y"}, {}, "b");
    CHECK(error_of([&] { Graph g(b.model()); }) ==
          "node 'b' (Neg): output 'y' is already produced by another node, input or initializer");
  }

  TEST_CASE("a missing graph output is refused") {
    ModelBuilder b;
    b.input("x", DataType::float32, {2}).output("nowhere").node("Relu", {"x"}, {"y"});
    CHECK(error_of([&] { Graph g(b.model()); }).find("graph output 'nowhere'") != std::string::npos);
  }

  TEST_CASE("initializers and Constant nodes are constants; dead nodes are dropped") {
    ModelBuilder b(11);
    onnx::AttributeProto value = attr("value", 0.0f);
    value.name = "value";
    value.type = onnx::AttributeProto::Type::tensor;
    value.t.push_back(to_proto("", Tensor::from<float>({2}, {10, 20})));
    b.input("x", DataType::float32, {2})
        .input("w", DataType::float32, {2})  // IR 3 style: an initializer listed as an input
        .initializer("w", Tensor::from<float>({2}, {1, 2}))
        .output("y")
        .node("Constant", {}, {"c"}, {value})
        .node("Add", {"x", "w"}, {"s"})
        .node("Add", {"s", "c"}, {"y"})
        .node("Neg", {"x"}, {"unused"}, {}, "dead");
    Graph g(b.model());
    CHECK(g.inputs().size() == 1);
    CHECK(g.nodes().size() == 2);
    REQUIRE(g.find("c"));
    REQUIRE(g.constant(*g.find("c")) != nullptr);
    CHECK(g.constant(*g.find("c"))->values<float>()[1] == 20.0f);
    Session s(b.model());
    auto y = s.run(std::vector{Tensor::from<float>({2}, {100, 200})});
    CHECK(y[0].values<float>()[0] == 111.0f);
    CHECK(y[0].values<float>()[1] == 222.0f);
  }

  TEST_CASE("Constant nodes with scalar and list attributes") {
    ModelBuilder b(13);
    b.input("x", DataType::float32, {2})
        .output("y")
        .node("Constant", {}, {"c"}, {attr("value_float", 3.0f)})
        .node("Mul", {"x", "c"}, {"y"});
    auto y = run_one(b.model(), {Tensor::from<float>({2}, {1, 2})});
    CHECK(y.values<float>()[1] == 6.0f);
  }

  TEST_CASE("the registry lists the operators of this issue") {
    const auto ops = OpRegistry::instance().op_types();
    for (const char* op : {"Conv",
                           "ConvTranspose",
                           "MaxPool",
                           "AveragePool",
                           "GlobalAveragePool",
                           "BatchNormalization",
                           "Relu",
                           "Clip",
                           "LeakyRelu",
                           "PRelu",
                           "Sigmoid",
                           "HardSigmoid",
                           "HardSwish",
                           "Tanh",
                           "Erf",
                           "Add",
                           "Sub",
                           "Mul",
                           "Div",
                           "Pow",
                           "Sqrt",
                           "Exp",
                           "Log",
                           "MatMul",
                           "Gemm",
                           "Softmax"}) {
      CHECK_MESSAGE(std::find(ops.begin(), ops.end(), op) != ops.end(), op);
    }
  }
}
