#pragma once
// Reading the inputs that shape, data-movement and resize operators need while planning
// (a Reshape's shape, a Slice's starts, a Resize's scales): they must be constants, and
// come as int32/int64 (or float for scales) tensors. Also the byte-level element copies
// shared by the operators that move data without looking at it.

#include "../op_registry.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace rknnxx::host {

// Constant input i, or a failure naming it: what decides output shapes must be known while planning.
inline const Tensor& plan_time_constant(const OpContext& ctx, std::size_t i, std::string_view what) {
  const Tensor* t = ctx.constant(i);
  if (t == nullptr) {
    ctx.fail("input {} ('{}', the {}) must be a constant (initializer or computed from constants) for the host engine",
             i, ctx.input_name(i), what);
  }
  return *t;
}

// The values of constant input i as int64 (int32 and int64 tensors are accepted).
inline std::vector<int64_t> constant_ints(const OpContext& ctx, std::size_t i, std::string_view what) {
  const Tensor& t = plan_time_constant(ctx, i, what);
  if (t.dtype() == DataType::int64) {
    const auto v = t.values<int64_t>();
    return {v.begin(), v.end()};
  }
  if (t.dtype() == DataType::int32) {
    const auto v = t.values<int32_t>();
    return {v.begin(), v.end()};
  }
  ctx.fail("input {} (the {}) has element type {}, expected int64 or int32", i, what, dtype_name(t.dtype()));
}

// The values of constant input i as float (float32 and float16 tensors are accepted).
inline std::vector<float> constant_floats(const OpContext& ctx, std::size_t i, std::string_view what) {
  const Tensor& t = plan_time_constant(ctx, i, what);
  if (t.dtype() == DataType::float32) {
    const auto v = t.values<float>();
    return {v.begin(), v.end()};
  }
  if (t.dtype() == DataType::float16) {
    std::vector<float> values;
    for (half h : t.values<half>()) {
      values.push_back(half_bits_to_float(h.bits));
    }
    return values;
  }
  ctx.fail("input {} (the {}) has element type {}, expected float32 or float16", i, what, dtype_name(t.dtype()));
}

// Calls f.template operator()<U>() with an unsigned integer type as wide as one element of
// `type`: operators that only move elements are written once for every element type.
template <class F> decltype(auto) visit_element_width(DataType type, F&& f) {
  switch (element_size(type)) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    default: return f.template operator()<uint64_t>();
  }
}

}  // namespace rknnxx::host
