#pragma once
// Moving tensor data between a caller's buffer, described by an rknn_tensor_attr-like
// description (element type, format, dims, w_stride), and the engine's dense tensors
// (ONNX order: NCHW for 4-D). This is what rknn_inputs_set, rknn_outputs_get and zero-copy
// memory do on a board: layout conversion (NHWC with w_stride padding, NC1HWC2 blocking),
// mean/std normalisation and element-type conversion.

#include <rknnxx/abi/c_api.h>

#include "../engine/tensor.hpp"
#include "../engine/thread_pool.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host {

// How a caller's buffer holds one tensor.
struct BufferFormat {
  rknn_tensor_type type = RKNN_TENSOR_FLOAT32;
  rknn_tensor_format fmt = RKNN_TENSOR_UNDEFINED;
  std::vector<uint32_t> dims;  // as the attr reports them: NHWC, NCHW, [N,C1,H,W,C2] or any order for UNDEFINED
  uint32_t w_stride = 0;       // 0: the width
  uint32_t h_stride = 0;       // 0: the height

  // Bytes the buffer must hold, padding included.
  [[nodiscard]] size_t required_bytes() const;
  [[nodiscard]] std::string describe() const;  // "UINT8 NHWC [1,224,224,3] w_stride 224"
};

// Per-channel affine normalisation applied to raw values: (x - mean[c]) / std[c].
struct Normalization {
  std::vector<float> mean;
  std::vector<float> std;
  [[nodiscard]] bool empty() const noexcept { return mean.empty() && std.empty(); }
};

// Bytes of one element of I/O data; int4 (matmul only) is refused.
size_t element_bytes(rknn_tensor_type type);

// The runtime's name for an engine element type as the engine holds it; nullopt for a type the C
// interface has no name for. (A model's inputs and outputs may be shown as another type: LoadedModel.)
std::optional<rknn_tensor_type> rknn_type_of(DataType dtype);

// Checks, from the description alone (no data read or written), what decode and encode check
// before they move data: that `format` holds a tensor of `shape` (ONNX order) of the engine's
// element type `engine_type` — the element types, the byte count, and the dims and strides in the
// format's layout. A wrong element count fails with `count_error` (decode's RKNN_ERR_INPUT_INVALID,
// encode's RKNN_ERR_OUTPUT_INVALID); the other failures are the ones decode and encode give.
void check_fits(const BufferFormat& format, DataType engine_type, const std::vector<int64_t>& shape, int count_error);

// What happens to input values after their conversion, in place, element by element (the float16 rounding and the
// fake quantization of rknn_inputs_set): given to decode, it runs on each row just written, while it is in cache.
using FloatFinish = std::function<void(std::span<float>)>;

// Reads `source` (held as `format`) into `target`, a dense engine tensor in ONNX order whose
// shape is the tensor's logical shape, writing every element (target may be uninitialized). Values are
// converted to target's element type after normalisation (when given), then, for a float32 target, passed
// through `finish` (when given). The rows of a 4-D tensor are shared among `pool`'s threads when given (finish
// must then be safe to call from several threads at once). Throws ApiError(RKNN_ERR_INPUT_INVALID) naming the
// mismatch.
void decode(std::span<const std::byte> source, const BufferFormat& format, const Normalization& normalization,
            Tensor& target, const FloatFinish& finish = {}, ThreadPool* pool = nullptr);

// Writes the dense tensor `source` (ONNX order) into `target`, held as `format`; padding
// lanes and padded columns are written as zeros. `map`, when given, turns each value before it is
// stored (a quantized output's real value into its integer), so that no converted copy of the
// tensor is made first.
void encode(const Tensor& source, const BufferFormat& format, std::span<std::byte> target,
            const std::function<double(double)>& map = {});

}  // namespace rknnxx::host
