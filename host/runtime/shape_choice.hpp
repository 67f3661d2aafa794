#pragma once
// rknn_set_input_shapes's rule: the attrs given (NHWC for 4-D, as the queries report them) must
// name one choice of the model's shape set (the initial shapes of a static model). A miss is
// refused with the supported shapes listed, and a hint when the dims were given in NCHW order.

#include <rknnxx/abi/c_api.h>

#include "loaded_model.hpp"

#include <span>

namespace rknnxx::host {

// The choice the attrs name, in ONNX order; RKNN_ERR_PARAM_INVALID or RKNN_ERR_FAIL otherwise.
[[nodiscard]] ShapeChoice choose_shapes(const LoadedModel& model, std::span<const rknn_tensor_attr> attrs);

}  // namespace rknnxx::host
