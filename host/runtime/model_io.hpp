#pragma once
// The rules for one model's inputs and outputs in a caller's buffers: which element types and
// layouts an input takes (docs/c-interface.md#input-conversions), the format an output is written
// in, and the conversions themselves through tensor_codec.hpp. A binding (rknn_set_io_mem) is
// checked here from its attributes alone, with the same rules and messages a run applies to data.

#include <rknnxx/abi/c_api.h>

#include "loaded_model.hpp"
#include "tensor_codec.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace rknnxx::host {

// RKNN_ERR_PARAM_INVALID unless the model has an input (or output) `index`.
void check_index(const LoadedModel& model, bool input, uint32_t index);

// A float32 tensor's values rounded to float16, as the NPU of a float16 model holds them.
void round_to_float16(Tensor& t);

// A caller's buffer as an attr describes it.
[[nodiscard]] BufferFormat format_of(const rknn_tensor_attr& attr);

// Refuses, with RKNN_ERR_INPUT_INVALID naming input `index`, a buffer of `format` that input `index`
// of shape `dims` cannot take: a type the input does not convert from, a layout it does not take, or
// dims and strides that do not describe the shape. Reads no data.
void check_input_format(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& dims,
                        const BufferFormat& format, bool pass_through);

// Input `index` of shape `dims` read from `bytes` (held as `format`) as the engine computes on it:
// normalized (unless pass_through), rounded to float16 in a float16 model, quantized in a w8a8 or
// w16a16i_dfp one.
// The conversion runs on `pool`'s threads when given.
[[nodiscard]] Tensor decode_input(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& dims,
                                  std::span<const std::byte> bytes, const BufferFormat& format, bool pass_through,
                                  ThreadPool* pool = nullptr);

// How rknn_outputs_get writes output `index` of this shape: the attr's format, FLOAT32 with want_float.
[[nodiscard]] BufferFormat output_format(const LoadedModel& model, uint32_t index, const std::vector<int64_t>& shape,
                                         bool want_float);

// Writes `value`, output `index` of a run, into `target` as `format`: straight from the engine's
// tensor, a quantized output written INT8 (INT16 for w16a16i_dfp) as its integers q.
void encode_output(const LoadedModel& model, uint32_t index, const Tensor& value, const BufferFormat& format,
                   std::span<std::byte> target);

}  // namespace rknnxx::host
