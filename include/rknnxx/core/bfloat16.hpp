#pragma once
// BFloat16: the upper half of an IEEE binary32, the element type of RKNN_TENSOR_BFLOAT16 tensors
// (SDK 2.3.0 and later). Conversion from float rounds to nearest even rather than truncating.

#include <rknnxx/core/packed_float.hpp>

namespace rknnxx {

using BFloat16 = PackedFloat<8, 7>;
static_assert(sizeof(BFloat16) == 2 && alignof(BFloat16) == 2);

}  // namespace rknnxx
