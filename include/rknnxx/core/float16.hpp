#pragma once
// Float16: IEEE-754 binary16, the element type of RKNN_TENSOR_FLOAT16 tensors.

#include <rknnxx/core/packed_float.hpp>

namespace rknnxx {

using Float16 = PackedFloat<5, 10>;
static_assert(sizeof(Float16) == 2 && alignof(Float16) == 2);

}  // namespace rknnxx
