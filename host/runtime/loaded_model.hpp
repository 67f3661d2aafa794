#pragma once
// A host model file loaded for rknn_init: the file, its ONNX graph, and everything the
// runtime reports about it (tensor names, element types as the board reports them, the
// dynamic shape set, the normalisation fused into each input). Immutable and shared by
// every context made from it with rknn_dup_context.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/platform.hpp>

#include "../engine/onnx_model.hpp"
#include "../engine/tensor.hpp"
#include "../convert/model_file.hpp"
#include "../quantize/calibrate.hpp"
#include "tensor_codec.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host {

// The three views of a tensor the queries give (docs/c-interface.md#attribute-views).
enum class AttrKind { normal, native, native_nhwc };

// Dims of every input in ONNX order: one choice of a dynamic model's shape set.
using ShapeChoice = std::vector<std::vector<int64_t>>;

struct IoTensor {
  std::string name;
  DataType dtype = DataType::undefined;  // as in the ONNX graph
};

class LoadedModel {
public:
  // Throws ApiError(RKNN_ERR_MODEL_INVALID) naming what is wrong with the bytes.
  static std::shared_ptr<const LoadedModel> load(std::span<const std::byte> bytes);

  [[nodiscard]] Platform platform() const noexcept { return platform_; }
  [[nodiscard]] const PlatformInfo& platform_info() const noexcept { return info_; }
  [[nodiscard]] const ModelFile& file() const noexcept { return file_; }
  [[nodiscard]] const onnx::ModelProto& onnx() const noexcept { return onnx_; }
  [[nodiscard]] const std::vector<IoTensor>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const std::vector<IoTensor>& outputs() const noexcept { return outputs_; }
  // The operators the converter kept for rknn_register_custom_ops (the config's custom_ops).
  [[nodiscard]] const std::vector<toolkit::CustomOpType>& custom_ops() const noexcept { return custom_ops_; }
  // A model whose activations the board holds as float16: a float model, or a weight-only quantized
  // one (w8a16, w4a16).
  [[nodiscard]] bool float16_model() const noexcept;
  // A quantized model (the file's "qnt8" section, docs/quantization.md): its weights are integers.
  [[nodiscard]] bool quantized() const noexcept { return file_.quantization.has_value(); }
  // A w8a8 or w16a16i_dfp model: every float input and output is INT8 with the affine parameters
  // of quantization(), or INT16 dynamic fixed point (scale 2^-fl, zero point 0), but an output a
  // float16 layer computes (hybrid quantization: FLOAT16, io_type()).
  [[nodiscard]] bool quantized_activations() const noexcept {
    return quantized() &&
        (file_.quantization->dtype == toolkit::QuantizedDtype::w8a8 ||
         file_.quantization->dtype == toolkit::QuantizedDtype::w16a16i_dfp);
  }
  [[nodiscard]] bool dfp_activations() const noexcept {
    return quantized() && file_.quantization->dtype == toolkit::QuantizedDtype::w16a16i_dfp;
  }
  [[nodiscard]] const quantize::ActivationTable& activation_table() const noexcept { return activations_; }
  // The parameters of a quantized model's float input or output; nullopt otherwise.
  [[nodiscard]] const std::optional<quantize::AffineParams>& quantization(bool input, size_t index) const {
    return (input ? input_params_ : output_params_).at(index);
  }

  // The element type the board reports for a tensor of this ONNX type (float32 is float16
  // in a model converted with float_dtype float16 or weight-only quantized, int8 in a w8a8 one,
  // int16 in a w16a16i_dfp one).
  [[nodiscard]] rknn_tensor_type runtime_type(DataType dtype) const;
  // The element type of input or output `index`: runtime_type of its ONNX type, except an output of
  // a hybrid w8a8 model that a float16 layer computes, which is FLOAT16 without parameters.
  [[nodiscard]] rknn_tensor_type io_type(bool input, size_t index) const;
  [[nodiscard]] const Normalization& normalization(size_t input) const { return normalization_.at(input); }

  // The shape set of a dynamic model (empty for a static one) and the group the runtime
  // starts with: MaxShape, the group with the largest sum of input sizes.
  [[nodiscard]] const std::vector<ShapeChoice>& shape_set() const noexcept { return shape_set_; }
  [[nodiscard]] bool dynamic() const noexcept { return !shape_set_.empty(); }
  [[nodiscard]] const ShapeChoice& initial_shapes() const noexcept { return initial_shapes_; }

  // The attribute a query reports for a tensor of these (ONNX-order) dims.
  [[nodiscard]] rknn_tensor_attr attr(bool input, uint32_t index, const std::vector<int64_t>& dims,
                                      AttrKind kind) const;

private:
  // The activation table and the parameters of every float input and output of a quantized model.
  void load_quantization();
  // Refuses input shapes the runtime cannot describe and preprocessing that does not fit them.
  void check_shapes() const;

  Platform platform_ = Platform::rk3588;
  PlatformInfo info_ = rknnxx::platform_info(Platform::rk3588);
  ModelFile file_;
  onnx::ModelProto onnx_;
  std::vector<IoTensor> inputs_;
  std::vector<IoTensor> outputs_;
  std::vector<toolkit::CustomOpType> custom_ops_;
  std::vector<Normalization> normalization_;
  quantize::ActivationTable activations_;
  std::vector<std::optional<quantize::AffineParams>> input_params_;
  std::vector<std::optional<quantize::AffineParams>> output_params_;
  std::vector<bool> float16_outputs_;  // computed by a float16 layer (hybrid quantization)
  std::vector<ShapeChoice> shape_set_;
  ShapeChoice initial_shapes_;
};

}  // namespace rknnxx::host
