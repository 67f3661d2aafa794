#include "model_io.hpp"

#include "api_error.hpp"

#include "../engine/float16.hpp"
#include "../quantize/affine.hpp"

#include <rknnxx/core/input_conversion.hpp>
#include <rknnxx/core/layout.hpp>

#include <algorithm>

namespace rknnxx::host {

namespace {

// The engine's element type for an input of this ONNX type (it computes float16 as float32).
DataType engine_type(DataType dtype) { return dtype == DataType::float16 ? DataType::float32 : dtype; }

// The type and layout rules of input `index`, before any dims are looked at.
void check_input_conversion(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& dims,
                            const BufferFormat& format, bool pass_through) {
  const IoTensor& tensor = model.inputs()[index];
  const rknn_tensor_type model_type = model.runtime_type(tensor.dtype);
  if (pass_through) {
    // Unchanged bytes: they must already be the model's type in its native layout (docs/c-interface.md#input-conversions).
    const rknn_tensor_attr native = model.attr(true, index, dims, AttrKind::native);
    if (format.type != model_type)
      fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): pass_through data must be the model's type {}, given {}", index,
           tensor.name, name_of(static_cast<TensorType>(model_type)), name_of(static_cast<TensorType>(format.type)));
    if (format.fmt != native.fmt && !(dims.size() == 4 && format.fmt == RKNN_TENSOR_NHWC))
      fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): pass_through data must be in the native layout {}, given {}",
           index, tensor.name, name_of(static_cast<TensorFormat>(native.fmt)),
           name_of(static_cast<TensorFormat>(format.fmt)));
    return;
  }
  // The vendor's table of types rknn_inputs_set converts from (docs/c-interface.md#input-conversions).
  if (!input_accepts(static_cast<TensorType>(model_type), static_cast<TensorType>(format.type)))
    fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): the model's {} input does not take {} data", index, tensor.name,
         name_of(static_cast<TensorType>(model_type)), name_of(static_cast<TensorType>(format.type)));
  if (format.fmt == RKNN_TENSOR_NC1HWC2)
    fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): NC1HWC2 data is only taken with pass_through", index, tensor.name);
}

}  // namespace

void check_index(const LoadedModel& model, bool input, uint32_t index) {
  const size_t count = input ? model.inputs().size() : model.outputs().size();
  if (index >= count)
    fail(RKNN_ERR_PARAM_INVALID, "{} index {} is out of range: the model has {} {}", input ? "input" : "output", index,
         count, input ? "inputs" : "outputs");
}

void round_to_float16(Tensor& t) {
  if (t.dtype() != DataType::float32) return;
  round_to_half(t.data<float>(), static_cast<size_t>(t.elements()));
}

BufferFormat format_of(const rknn_tensor_attr& attr) {
  BufferFormat format;
  format.type = attr.type;
  format.fmt = attr.fmt;
  format.dims.assign(attr.dims, attr.dims + std::min<uint32_t>(attr.n_dims, RKNN_MAX_DIMS));
  format.w_stride = attr.w_stride;
  format.h_stride = attr.h_stride;
  return format;
}

void check_input_format(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& dims,
                        const BufferFormat& format, bool pass_through) {
  check_input_conversion(model, index, dims, format, pass_through);
  check_fits(format, engine_type(model.inputs()[index].dtype), dims, RKNN_ERR_INPUT_INVALID);
}

Tensor decode_input(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& dims,
                    std::span<const std::byte> bytes, const BufferFormat& format, bool pass_through, ThreadPool* pool) {
  check_input_conversion(model, index, dims, format, pass_through);
  Tensor value = Tensor::uninitialized(engine_type(model.inputs()[index].dtype), dims);  // decode writes it all
  static const Normalization none;
  const bool normalize = !pass_through && dims.size() == 4 && format.fmt != RKNN_TENSOR_UNDEFINED;
  const bool half = model.float16_model();  // the NPU holds the input as float16
  // The engine computes on real values: pass_through data are the integers q as they are; other
  // data are normalized values, quantized to the input's parameters (what the NPU reads).
  const auto& params = model.quantization(true, index);
  const bool fused = !pass_through && value.dtype() == DataType::float32;
  const FloatFinish finish = [&](std::span<float> values) {
    if (half) round_to_half(values.data(), values.size());
    if (params) quantize::fake_quantize(values, *params);
  };
  decode(bytes, format, normalize ? model.normalization(index) : none, value,
         fused && (half || params) ? finish : FloatFinish(), pool);
  if (fused) return value;
  if (half) round_to_float16(value);
  if (params) {
    auto values = value.values<float>();
    if (pass_through)
      for (float& v : values) v = params->dequantize(static_cast<int32_t>(v));
    else quantize::fake_quantize(values, *params);
  }
  return value;
}

BufferFormat output_format(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& shape,
                           bool want_float) {
  BufferFormat format = format_of(model.attr(false, index, shape, AttrKind::normal));
  if (want_float &&
      (format.type == RKNN_TENSOR_FLOAT16 || format.type == RKNN_TENSOR_INT8 || format.type == RKNN_TENSOR_UINT8 ||
       format.type == RKNN_TENSOR_INT16))
    format.type = RKNN_TENSOR_FLOAT32;
  format.w_stride = 0;
  return format;
}

void encode_output(const LoadedModel& model, uint32_t index, const Tensor& value, const BufferFormat& format,
                   std::span<std::byte> target) {
  const auto& params = model.quantization(false, index);
  if (params && (format.type == RKNN_TENSOR_INT8 || format.type == RKNN_TENSOR_INT16))
    encode(value, format, target, [&](double v) { return params->quantize(static_cast<float>(v)); });
  else encode(value, format, target);
}

}  // namespace rknnxx::host
