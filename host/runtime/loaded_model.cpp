#include "loaded_model.hpp"

#include "api_error.hpp"

#include "../engine/engine_error.hpp"
#include "../engine/onnx_reader.hpp"
#include "../convert/config_json.hpp"
#include "../quantize/qnt8_section.hpp"

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/geometry.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace rknnxx::host {

namespace {

std::vector<int64_t> declared_dims(const onnx::ValueInfoProto& value) {
  std::vector<int64_t> dims;
  for (const auto& d : value.shape) dims.push_back(d.has_value ? d.value : -1);
  return dims;
}

bool fully_known(const std::vector<int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d > 0; });
}

// NCHW dims of a 4-D tensor as the attribute reports them for a layout.
Dims reported(const std::vector<int64_t>& nchw, TensorFormat format) {
  auto u = [&](size_t i) { return static_cast<uint32_t>(nchw[i]); };
  if (format == TensorFormat::nhwc) return Dims{u(0), u(2), u(3), u(1)};
  return Dims{u(0), u(1), u(2), u(3)};
}

}  // namespace

std::shared_ptr<const LoadedModel> LoadedModel::load(std::span<const std::byte> bytes) {
  auto model = std::make_shared<LoadedModel>();
  try {
    model->file_ = parse_model_file(bytes);
    model->onnx_ = onnx::read_model(model->file_.onnx);
  } catch (const std::exception& e) {
    fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
  }
  model->platform_ = model->file_.target_platform;
  model->info_ = rknnxx::platform_info(model->platform_);

  const auto& graph = model->onnx_.graph;
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer) initializers.insert(init.name);
  ShapeChoice declared;
  std::vector<toolkit::ModelInput> described;  // for the config's per-input rules
  for (const auto& input : graph.input) {
    if (initializers.contains(input.name)) continue;  // older exporters list initializers as inputs
    model->inputs_.push_back({input.name, input.elem_type});
    declared.push_back(declared_dims(input));
    described.push_back({input.name, declared.back()});
  }
  for (const auto& output : graph.output) model->outputs_.push_back({output.name, output.elem_type});
  if (model->inputs_.empty() || model->outputs_.empty())
    fail(RKNN_ERR_MODEL_INVALID, "the model has {} inputs and {} outputs; it needs at least one of each",
         model->inputs_.size(), model->outputs_.size());

  // The config section is checked now, as the converter checked it, so that a crafted or damaged
  // one is refused at rknn_init instead of failing (or being ignored) at the first rknn_inputs_set.
  try {
    const toolkit::Config config = config_from_json(model->file_.config_json);
    config.validate_against(described);
    model->custom_ops_ = config.custom_ops;
  } catch (const std::exception& e) {
    fail(RKNN_ERR_MODEL_INVALID, "model file: section 'conf' does not fit the model: {}", e.what());
  }
  const auto& preprocess = model->file_.preprocess;
  if (!preprocess.empty() && preprocess.size() != model->inputs_.size())
    fail(RKNN_ERR_MODEL_INVALID, "model file: section 'prep' has preprocessing for {} inputs, the model has {}",
         preprocess.size(), model->inputs_.size());
  model->normalization_.resize(model->inputs_.size());
  for (size_t i = 0; i < preprocess.size() && i < model->inputs_.size(); ++i) {
    auto& n = model->normalization_[i];
    n.mean.assign(preprocess[i].mean.begin(), preprocess[i].mean.end());
    n.std.assign(preprocess[i].std.begin(), preprocess[i].std.end());
  }

  model->load_quantization();

  if (model->file_.dynamic_input) {
    for (const auto& group : *model->file_.dynamic_input) {
      if (group.size() != model->inputs_.size())
        fail(RKNN_ERR_MODEL_INVALID, "a dynamic shape group has {} shapes for {} inputs", group.size(),
             model->inputs_.size());
      model->shape_set_.push_back(group);
    }
    model->initial_shapes_ = model->shape_set_[toolkit::max_shape_index(*model->file_.dynamic_input).value_or(0)];
  } else {
    for (size_t i = 0; i < declared.size(); ++i)
      if (!fully_known(declared[i]))
        fail(RKNN_ERR_MODEL_INVALID,
             "input {} ('{}') has dims {} with unknown sizes and the model has no dynamic_input shape set: "
             "convert it with dynamic_input, or with fixed input shapes",
             i, model->inputs_[i].name, dims_text(declared[i]));
    model->initial_shapes_ = declared;
  }
  model->check_shapes();
  return model;
}

void LoadedModel::load_quantization() {
  input_params_.resize(inputs_.size());
  output_params_.resize(outputs_.size());
  float16_outputs_.resize(outputs_.size());
  if (!file_.quantization) return;
  activations_ = quantize::activation_table(*file_.quantization);
  if (!quantized_activations()) return;  // weight-only: float16 inputs and outputs, no parameters
  // Every float input and output is an INT8 (INT16) tensor: it needs its parameters.
  auto find = [&](const char* role, size_t index, const IoTensor& tensor) -> std::optional<quantize::AffineParams> {
    if (tensor.dtype != DataType::float32 && tensor.dtype != DataType::float16) return std::nullopt;
    const auto found = activations_.params.find(tensor.name);
    if (found == activations_.params.end())
      fail(RKNN_ERR_MODEL_INVALID, "model file: section 'qnt8' has no quantization parameters for {} {} ('{}')", role,
           index, tensor.name);
    return found->second;
  };
  for (size_t i = 0; i < inputs_.size(); ++i) input_params_[i] = find("input", i, inputs_[i]);
  for (size_t o = 0; o < outputs_.size(); ++o) {
    output_params_[o] = find("output", o, outputs_[o]);
    // Hybrid quantization: a float16 layer's output reaches the application as float16, as the
    // vendor runtime reports it (docs/quantization.md). Graph inputs stay INT8.
    if (output_params_[o] && activations_.float16.contains(outputs_[o].name)) {
      float16_outputs_[o] = true;
      output_params_[o].reset();
    }
  }
}

void LoadedModel::check_shapes() const {
  const std::vector<ShapeChoice> choices = dynamic() ? shape_set_ : std::vector<ShapeChoice>{initial_shapes_};
  for (size_t g = 0; g < choices.size(); ++g)
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const std::vector<int64_t>& dims = choices[g][i];
      const std::string where = dynamic() ? fmt::format("input {} ('{}') in shape group {}", i, inputs_[i].name, g)
                                          : fmt::format("input {} ('{}')", i, inputs_[i].name);
      // Every layout a query may report must fit rknn_tensor_attr: its sizes are 32-bit, so the
      // runtime cannot describe (or plan) a bigger tensor. Checked before anything is allocated.
      for (AttrKind kind : {AttrKind::normal, AttrKind::native, AttrKind::native_nhwc}) {
        try {
          (void)attr(true, static_cast<uint32_t>(i), dims, kind);
        } catch (const rknnxx::Error& e) {
          fail(RKNN_ERR_MODEL_INVALID,
               "{} has shape {}, more than the runtime can describe (at most 4 GiB per "
               "tensor: rknn_tensor_attr's sizes are 32-bit): {}",
               where, dims_text(dims), e.message());
        } catch (const ApiError& e) {
          fail(RKNN_ERR_MODEL_INVALID, "{}: {}", where, e.what());
        }
      }
      const Normalization& n = normalization_[i];
      const size_t values = std::max(n.mean.size(), n.std.size());
      if (values != 0 && dims.size() == 4 && static_cast<int64_t>(values) != dims[1])
        fail(RKNN_ERR_MODEL_INVALID,
             "{} has {} channels (shape {}), but the model's preprocessing (section 'prep') "
             "has {} mean/std values",
             where, dims[1], dims_text(dims), values);
    }
}

bool LoadedModel::float16_model() const noexcept {
  return !quantized_activations() && file_.float_dtype == toolkit::FloatDtype::float16;
}

rknn_tensor_type LoadedModel::runtime_type(DataType dtype) const {
  if (dtype == DataType::float32 || dtype == DataType::float16) {
    if (quantized_activations()) return dfp_activations() ? RKNN_TENSOR_INT16 : RKNN_TENSOR_INT8;
    return float16_model() ? RKNN_TENSOR_FLOAT16 : RKNN_TENSOR_FLOAT32;
  }
  if (const auto type = rknn_type_of(dtype)) return *type;
  fail(RKNN_ERR_MODEL_INVALID, "ONNX element type {} has no runtime tensor type", static_cast<int>(dtype));
}

rknn_tensor_type LoadedModel::io_type(bool input, size_t index) const {
  if (!input && float16_outputs_.at(index)) return RKNN_TENSOR_FLOAT16;
  return runtime_type((input ? inputs_ : outputs_).at(index).dtype);
}

rknn_tensor_attr LoadedModel::attr(bool input, uint32_t index, const std::vector<int64_t>& dims, AttrKind kind) const {
  const IoTensor& tensor = (input ? inputs_ : outputs_).at(index);
  const auto type = static_cast<TensorType>(io_type(input, index));
  const PlatformInfo& info = platform_info();

  // docs/c-interface.md#attribute-views: 4-D inputs are reported NHWC and 4-D outputs NCHW; natively the NPU reads
  // 1-, 3- and 4-channel images as NHWC and everything else as NC1HWC2 where the platform
  // has a C2 for the element type; other ranks are UNDEFINED in the model's own order.
  TensorFormat format = TensorFormat::undefined;
  StrideRequest strides;
  if (dims.size() == 4) {
    const int64_t channels = dims[1];
    const bool image_like = channels == 1 || channels == 3 || channels == 4;
    const bool blockable = info.c2(type) != 0;
    switch (kind) {
      case AttrKind::normal: format = input ? TensorFormat::nhwc : TensorFormat::nchw; break;
      case AttrKind::native:
        format = (input && image_like) || !blockable ? (input ? TensorFormat::nhwc : TensorFormat::nchw)
                                                     : TensorFormat::nc1hwc2;
        break;
      case AttrKind::native_nhwc: format = TensorFormat::nhwc; break;
    }
    // Only inputs carry the zero-copy width alignment; an output's NHWC rows are dense.
    if (format == TensorFormat::nhwc && !input) strides.w_stride = static_cast<uint32_t>(dims[3]);
  }
  std::vector<uint32_t> extents;
  for (int64_t d : dims) {
    if (d <= 0 || d > std::numeric_limits<uint32_t>::max())
      fail(RKNN_ERR_MODEL_INVALID, "tensor '{}' has dim {} in {}", tensor.name, d, dims_text(dims));
    extents.push_back(static_cast<uint32_t>(d));
  }
  const Dims logical(extents);
  const Dims shown = format == TensorFormat::nhwc ? reported(dims, format) : logical;
  const Geometry g = geometry(platform_, type, format, shown, strides);

  rknn_tensor_attr attr{};
  attr.index = index;
  std::strncpy(attr.name, tensor.name.c_str(), RKNN_MAX_NAME_LEN - 1);
  g.fill(attr);
  // A quantized model's inputs carry the parameters of the normalized input (what the first layer
  // reads: mean and std folded), its outputs those of the last layers; a float model has none.
  const auto& params = (input ? input_params_ : output_params_).at(index);
  // w16a16i_dfp reports DFP with its fl, and the equal affine scale 2^-fl with zp 0 too, so that code
  // dequantizing every integer tensor affinely gets the right values (docs/c-interface.md#quantization).
  const std::optional<int> fl =
      params && dfp_activations() ? quantize::dfp_fraction_length(params->scale) : std::nullopt;
  attr.qnt_type = !params ? RKNN_TENSOR_QNT_NONE : fl ? RKNN_TENSOR_QNT_DFP : RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
  attr.fl = static_cast<int8_t>(fl.value_or(0));
  attr.zp = params ? params->zero_point : 0;
  attr.scale = params ? params->scale : 1.0f;
  attr.pass_through = 0;
  attr.h_stride = 0;  // written by the caller; 0 means the height
  return attr;
}

}  // namespace rknnxx::host
