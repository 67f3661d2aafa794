#pragma once
// QAT and QDQ models (docs/quantization.md): an ONNX graph whose activations pass through
// QuantizeLinear -> DequantizeLinear pairs (what ONNX Runtime's quantize_static and PyTorch's
// quantization-aware training export) converts as a w8a8 model with the scales and zero points
// the pairs carry, with no calibration set. Each pair's parameters become those of the tensor it
// quantizes in the "qnt8" section; weights and biases read through DequantizeLinear from integer
// constants keep their exact values, because the stored ONNX graph keeps those nodes.

#include "model_file.hpp"

#include "engine/onnx_model.hpp"
#include "engine/tensor.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <span>
#include <stdexcept>

namespace rknnxx::host {

// A QDQ model: a QuantizeLinear (standard domain) reads a value that is not computed from
// constants alone, i.e. an activation is quantized. Integer weights behind DequantizeLinear alone
// do not make one (their activations stay float).
[[nodiscard]] bool is_qdq_model(const onnx::ModelProto& model);

// The "qnt8" section of a QDQ model: dtype w8a8, 0 calibration samples (the parameters come from the
// model), the config's quantized_method (for a weight that is a float constant, quantized at load
// like a calibrated model's), and the parameters of every value w8a8 rounds (quantize::parameter_sources):
// a pair's scale and zero point for the value entering it and for the pair's output, a uint8 zero
// point z stored as the int8 z - 128 (the same grid and range); values of grid-keeping operators
// (Reshape, MaxPool, ...) take their input's. `inputs` is one shape of each input (to type the plan).
//
// Throws std::runtime_error naming the node or value for what an int8 model cannot hold exactly:
// an activation quantized per channel, a scale or zero point that is not a constant, a scale that is
// not finite and positive, two pairs with different parameters on one value, a QuantizeLinear whose
// output feeds anything but DequantizeLinear, a DequantizeLinear of a computed value no QuantizeLinear
// produced, and a float activation (graph input, output or layer) without a pair, since a model with
// pairs around some layers only would be rounded where its graph is not.
[[nodiscard]] ModelQuantization qdq_quantization(const onnx::ModelProto& model, const toolkit::Config& config,
                                                 std::span<const TensorInfo> inputs);

}  // namespace rknnxx::host
