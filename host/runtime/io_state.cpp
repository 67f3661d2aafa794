#include "io_state.hpp"

#include "api_error.hpp"
#include "model_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace rknnxx::host {

IoState::IoState(const LoadedModel& model)
    : model_(model), staged_inputs_(model.inputs().size()), input_bindings_(model.inputs().size()),
      output_bindings_(model.outputs().size()) {}

IoState::~IoState() {
  for (void* buffer : runtime_output_buffers_) std::free(buffer);
}

void IoState::stage_inputs(std::span<const rknn_input> inputs, const ShapeChoice& shapes, ThreadPool& pool) {
  if (inputs.size() != model_.inputs().size())
    fail(RKNN_ERR_PARAM_INVALID, "n_inputs is {}, the model has {} inputs", inputs.size(), model_.inputs().size());
  std::vector<std::optional<Tensor>> staged(model_.inputs().size());
  for (const rknn_input& input : inputs) {
    check_index(model_, true, input.index);
    if (staged[input.index]) fail(RKNN_ERR_PARAM_INVALID, "input {} is given twice", input.index);
    if (input.buf == nullptr) fail(RKNN_ERR_PARAM_INVALID, "input {}: buf is NULL", input.index);
    const auto& dims = shapes[input.index];
    BufferFormat format;
    format.type = input.type;
    format.fmt = input.fmt;
    if (input.pass_through) {
      format = format_of(model_.attr(true, input.index, dims, AttrKind::native));
      format.type = input.type;
    } else if (dims.size() == 4 && input.fmt == RKNN_TENSOR_NHWC) {
      format.dims = {static_cast<uint32_t>(dims[0]), static_cast<uint32_t>(dims[2]), static_cast<uint32_t>(dims[3]),
                     static_cast<uint32_t>(dims[1])};
    } else {
      for (int64_t d : dims) format.dims.push_back(static_cast<uint32_t>(d));
    }
    const size_t needed = format.required_bytes();
    if (input.size < needed)
      fail(RKNN_ERR_PARAM_INVALID,
           "input {}: size {} is smaller than the {} bytes of {} data (check rknn_input.type: "
           "0 means FLOAT32)",
           input.index, input.size, needed, format.describe());
    staged[input.index] =
        decode_input(model_, input.index, dims, {static_cast<const std::byte*>(input.buf), input.size}, format,
                     input.pass_through != 0, &pool);
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    staged_inputs_[i] = std::move(staged[i]);
    input_bindings_[i].reset();
  }
}

void IoState::bind(const std::shared_ptr<HostMem>& mem, const rknn_tensor_attr& attr, const ShapeChoice& shapes,
                   std::span<const Tensor> last_outputs) {
  // The attr names its tensor: by name when it has one (as queried attrs do), else by index
  // among the inputs.
  const std::string_view name(attr.name, strnlen(attr.name, RKNN_MAX_NAME_LEN));
  bool input = true;
  uint32_t index = attr.index;
  if (!name.empty()) {
    auto find = [&](const std::vector<IoTensor>& list) -> std::optional<uint32_t> {
      for (uint32_t i = 0; i < list.size(); ++i)
        if (list[i].name == name) return i;
      return std::nullopt;
    };
    if (auto i = find(model_.inputs())) {
      input = true;
      index = *i;
    } else if (auto o = find(model_.outputs())) {
      input = false;
      index = *o;
    } else {
      fail(RKNN_ERR_PARAM_INVALID, "attr.name '{}' is neither an input nor an output of the model", name);
    }
    if (index != attr.index)
      fail(RKNN_ERR_PARAM_INVALID, "attr.name '{}' is {} {}, but attr.index is {}", name, input ? "input" : "output",
           index, attr.index);
  } else {
    check_index(model_, true, index);
  }
  const std::string role = fmt::format("{} {} ('{}')", input ? "input" : "output", index,
                                       (input ? model_.inputs() : model_.outputs())[index].name);
  BufferFormat format = format_of(attr);
  if (format.dims.empty()) fail(RKNN_ERR_PARAM_INVALID, "{}: attr.n_dims is 0", role);
  const size_t needed = format.required_bytes();
  if (mem->cpu_view().size() < needed)
    fail(RKNN_ERR_PARAM_INVALID,
         "{}: memory of {} bytes is smaller than the {} bytes of {} (allocate "
         "size_with_stride)",
         role, mem->cpu_view().size(), needed, format.describe());
  if (input) {
    // The type and the layout against the current shape, as a run will check the data.
    check_input_format(model_, index, shapes[index], format, attr.pass_through != 0);
    input_bindings_[index] = Binding{mem, format, attr.pass_through != 0};
    staged_inputs_[index].reset();
    return;
  }
  const rknn_tensor_type model_type = model_.io_type(false, index);
  // A float output may also be written FLOAT32 (a quantized one dequantized), as rknn_outputs_get's want_float.
  const bool float_output = model_type == RKNN_TENSOR_FLOAT16 || model_type == RKNN_TENSOR_FLOAT32 ||
      model_.quantization(false, index).has_value();
  if (format.type != model_type && !(float_output && format.type == RKNN_TENSOR_FLOAT32))
    fail(RKNN_ERR_PARAM_INVALID, "{}: the model's {} output cannot be written as {}", role,
         name_of(static_cast<TensorType>(model_type)), name_of(static_cast<TensorType>(format.type)));
  // After a run, the layout against its output, as writing it will check.
  if (!last_outputs.empty())
    check_fits(format, last_outputs[index].dtype(), last_outputs[index].shape(), RKNN_ERR_OUTPUT_INVALID);
  output_bindings_[index] = Binding{mem, format, false};
}

void IoState::drop_staged_inputs() {
  for (auto& staged : staged_inputs_) staged.reset();
}

std::vector<Tensor> IoState::gather_inputs(const ShapeChoice& shapes, bool emulate_cache) const {
  std::vector<Tensor> values;
  for (uint32_t i = 0; i < model_.inputs().size(); ++i) {
    if (const auto& binding = input_bindings_[i]) {
      const std::string role = fmt::format("input {}", i);
      const auto mem = live_mem(binding->mem, role);
      auto bytes = mem->device_view(emulate_cache);
      try {
        values.push_back(decode_input(model_, i, shapes[i], bytes, binding->format, binding->pass_through));
      } catch (const ApiError& e) {
        fail(e.code(),
             "{} ('{}'), bound with rknn_set_io_mem: {} (after rknn_set_input_shapes, bind again with the "
             "CURRENT attributes)",
             role, model_.inputs()[i].name, e.what());
      }
    } else if (staged_inputs_[i]) {
      // A view, not a copy (a 600 KB image cost 5 % of mobilenet_v3_small's run): the engine only reads its
      // inputs and copies any it hands back, and the staged value outlives the run (one thread per context).
      const Tensor& staged = *staged_inputs_[i];
      values.push_back(Tensor::view(staged.dtype(), staged.shape(), staged.raw()));
    } else {
      fail(RKNN_ERR_INPUT_INVALID,
           "input {} ('{}') has no data: call rknn_inputs_set or bind memory with "
           "rknn_set_io_mem first",
           i, model_.inputs()[i].name);
    }
  }
  return values;
}

void IoState::write_bound_outputs(std::span<const Tensor> outputs, const std::vector<bool>& run_time_shaped,
                                  bool emulate_cache) const {
  for (uint32_t i = 0; i < output_bindings_.size(); ++i) {
    const auto& binding = output_bindings_[i];
    if (!binding) continue;
    const auto mem = live_mem(binding->mem, fmt::format("output {}", i));
    try {
      const auto target = mem->device_view(emulate_cache);
      if (i < run_time_shaped.size() && run_time_shaped[i]) {
        if (outputs[i].elements() == 0) continue;  // nothing to write
        // A shape decided while running, within the bound the memory was made for: written in
        // the same type from the start of the memory (docs/c-interface.md#run-time-output-shapes).
        BufferFormat actual = output_format(model_, i, outputs[i].shape(), false);
        actual.type = binding->format.type;
        if (actual.required_bytes() > target.size())
          fail(RKNN_ERR_OUTPUT_INVALID, "{} does not fit the {} bytes bound", actual.describe(), target.size());
        encode_output(model_, i, outputs[i], actual, target.first(actual.required_bytes()));
        continue;
      }
      encode_output(model_, i, outputs[i], binding->format, target);
    } catch (const ApiError& e) {
      fail(e.code(),
           "output {} ('{}'), bound with rknn_set_io_mem: {} (after rknn_set_input_shapes, bind again with "
           "the CURRENT attributes)",
           i, model_.outputs()[i].name, e.what());
    }
  }
}

bool IoState::every_output_bound() const {
  return std::all_of(output_bindings_.begin(), output_bindings_.end(), [](const auto& b) { return b.has_value(); });
}

void IoState::hand_out(std::span<rknn_output> outputs, std::span<const Tensor> values,
                       std::span<const std::vector<int64_t>> shapes) {
  if (outputs.size() > model_.outputs().size())
    fail(RKNN_ERR_PARAM_INVALID, "n_outputs is {}, the model has {} outputs", outputs.size(), model_.outputs().size());
  for (rknn_output& output : outputs) {
    check_index(model_, false, output.index);
    if (values[output.index].elements() == 0) {  // a run-time shape that holds nothing: size 0
      if (!output.is_prealloc) {
        void* buffer = std::malloc(1);
        if (buffer == nullptr) throw std::bad_alloc();
        std::lock_guard lock(output_buffers_mutex_);
        runtime_output_buffers_.push_back(buffer);
        output.buf = buffer;
      }
      output.size = 0;
      continue;
    }
    const BufferFormat format = output_format(model_, output.index, shapes[output.index], output.want_float != 0);
    const size_t needed = format.required_bytes();
    if (output.is_prealloc) {
      if (output.buf == nullptr)
        fail(RKNN_ERR_PARAM_INVALID, "output {}: is_prealloc is set but buf is NULL", output.index);
      if (output.size < needed)
        fail(RKNN_ERR_PARAM_INVALID, "output {}: size {} is smaller than the {} bytes of {}", output.index, output.size,
             needed, format.describe());
      encode_output(model_, output.index, values[output.index], format, {static_cast<std::byte*>(output.buf), needed});
    } else {
      if (needed > std::numeric_limits<uint32_t>::max())
        fail(RKNN_ERR_OUTPUT_INVALID, "output {}: {} bytes of {} do not fit rknn_output.size (32-bit)", output.index,
             needed, format.describe());
      void* buffer = std::malloc(needed);
      if (buffer == nullptr) throw std::bad_alloc();
      {
        std::lock_guard lock(output_buffers_mutex_);
        runtime_output_buffers_.push_back(buffer);
      }
      encode_output(model_, output.index, values[output.index], format, {static_cast<std::byte*>(buffer), needed});
      output.buf = buffer;
      output.size = static_cast<uint32_t>(needed);
    }
  }
}

void IoState::release(std::span<rknn_output> outputs) {
  std::lock_guard lock(output_buffers_mutex_);
  for (rknn_output& output : outputs) {
    if (output.is_prealloc || output.buf == nullptr) continue;
    auto found = std::find(runtime_output_buffers_.begin(), runtime_output_buffers_.end(), output.buf);
    if (found == runtime_output_buffers_.end())
      fail(RKNN_ERR_PARAM_INVALID,
           "output {}: buf {} was not given out by rknn_outputs_get of this context (released "
           "twice?)",
           output.index, output.buf);
    std::free(*found);
    runtime_output_buffers_.erase(found);
    output.buf = nullptr;
  }
}

}  // namespace rknnxx::host
