#pragma once
// The Conv that engine_conv_int8_test.cpp and engine_conv_onednn_test.cpp run on the engine's Conv paths:
// a square kernel with the same stride, dilation and pads on both spatial axes, and the activation that
// Graph::fuse_for_inference folds into it.

#include "engine_test_model.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rknnxx::host::testing {

struct SquareConv {
  const char* name;
  int64_t n, c, h, w, m, group, k, stride, dilation, pad_begin, pad_end;
  const char* activation = "";  // "", "Relu" or "Clip" after the Conv (fused into it)
  bool bias = true;
};

// x [n, c, h, w] -> Conv with weights `w` [m, c / group, k, k] and `bias` [m] (when s.bias) -> the activation
// (Clip to [-0.3, 0.4]) -> y, at opset 13.
inline onnx::ModelProto square_conv_model(const SquareConv& s, const Tensor& w, const Tensor& bias) {
  ModelBuilder b(13);
  b.input("x", DataType::float32, {s.n, s.c, s.h, s.w}).initializer("w", w).output("y");
  std::vector<std::string> inputs{"x", "w"};
  if (s.bias) {
    b.initializer("b", bias);
    inputs.emplace_back("b");
  }
  const std::string activation = s.activation;
  b.node("Conv", inputs, {activation.empty() ? "y" : "c"},
         {attr("strides", std::vector<int64_t>{s.stride, s.stride}),
          attr("dilations", std::vector<int64_t>{s.dilation, s.dilation}), attr("group", s.group),
          attr("pads", std::vector<int64_t>{s.pad_begin, s.pad_begin, s.pad_end, s.pad_end})},
         "conv");
  if (activation == "Relu") b.node("Relu", {"c"}, {"y"});
  if (activation == "Clip") {
    b.initializer("lo", Tensor::scalar(-0.3f)).initializer("hi", Tensor::scalar(0.4f));
    b.node("Clip", {"c", "lo", "hi"}, {"y"});
  }
  return b.model();
}

}  // namespace rknnxx::host::testing
