#pragma once
// The element types rknn_inputs_set converts into a model input (pass_through = 0), by the model
// input's type: docs/c-interface.md#input-conversions. One table for the C++ layer's compile-time
// model descriptions (runtime/typed_context.hpp) and the host runtime's checks.

#include <rknnxx/core/element_type.hpp>

namespace rknnxx {

[[nodiscard]] constexpr bool input_accepts(TensorType model, TensorType given) noexcept {
  if (model == given) return true;
  switch (model) {
    case TensorType::int8:
    case TensorType::int16:  // quantized inputs (int16: w16a16i_dfp), normalized and quantized from these
      return given == TensorType::uint8 || given == TensorType::float32;
    case TensorType::float16:
    case TensorType::float32:
      return given == TensorType::uint8 || given == TensorType::float16 || given == TensorType::float32;
    default: return false;  // bool, int64 and the rest: their own type only
  }
}

}  // namespace rknnxx
