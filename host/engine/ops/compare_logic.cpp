// Comparisons and logic: Greater, Less, GreaterOrEqual, LessOrEqual (any numeric element type,
// float16 and bfloat16 compared as float32) giving bool with numpy-style broadcasting; And, Or, Xor on bool
// tensors; Not; BitwiseAnd, BitwiseOr, BitwiseXor (broadcasting) and BitwiseNot on the integer
// types (opset 18). Equal lives with Where in movement_ops.cpp.

#include "elementwise.hpp"
#include "introduced.hpp"

#include <type_traits>

namespace rknnxx::host {
namespace {

enum class Comparison { greater, less, greater_equal, less_equal };

template <Comparison kind, class T> bool compare(T a, T b) {
  if constexpr (kind == Comparison::greater) return a > b;
  if constexpr (kind == Comparison::less) return a < b;
  if constexpr (kind == Comparison::greater_equal) return a >= b;
  if constexpr (kind == Comparison::less_equal) return a <= b;
}

template <Comparison kind> PreparedOp prepare_compare(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0,
                   {DataType::float32, DataType::float16, DataType::bfloat16, DataType::int8, DataType::uint8,
                    DataType::int16, DataType::int32, DataType::int64});
  const DataType dtype = same_dtype(ctx, 0, 1);
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::boolean, bc.shape()}};
  op.kernel = [bc, dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      bool* out = k.output(0).data<bool>();
      if constexpr (is_float_bits_v<T>) {
        broadcast_binary(bc, k.pool, k.input(0).data<T>(), k.input(1).data<T>(), out,
                         [](T a, T b) { return compare<kind>(widen(a), widen(b)); });
      } else if constexpr (!std::is_same_v<T, bool>) {
        broadcast_binary(bc, k.pool, k.input(0).data<T>(), k.input(1).data<T>(), out,
                         [](T a, T b) { return compare<kind>(a, b); });
      }
    });
  };
  return op;
}

enum class Logic { and_, or_, xor_ };

template <Logic kind> PreparedOp prepare_logic(OpContext& ctx) {
  ctx.expect_inputs(2, 2);
  ctx.expect_dtype(0, {DataType::boolean});
  ctx.expect_dtype(1, {DataType::boolean});
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::boolean, bc.shape()}};
  op.kernel = [bc](KernelContext& k) {
    broadcast_binary(bc, k.pool, k.input(0).data<bool>(), k.input(1).data<bool>(), k.output(0).data<bool>(),
                     [](bool a, bool b) {
                       if constexpr (kind == Logic::and_) return a && b;
                       if constexpr (kind == Logic::or_) return a || b;
                       if constexpr (kind == Logic::xor_) return a != b;
                     });
  };
  return op;
}

PreparedOp prepare_not(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::boolean});
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [](KernelContext& k) {
    parallel_map(k.pool, k.input(0).data<bool>(), k.output(0).data<bool>(), k.input(0).elements(),
                 [](bool v) { return !v; });
  };
  return op;
}

template <class T> inline constexpr bool is_bitwise_type_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

void expect_bitwise_dtype(const OpContext& ctx, std::size_t i) {
  ctx.expect_dtype(i,
                   {DataType::int8, DataType::uint8, DataType::int16, DataType::uint16, DataType::int32,
                    DataType::uint32, DataType::int64, DataType::uint64});
}

template <Logic kind> PreparedOp prepare_bitwise(OpContext& ctx) {
  expect_introduced_in(ctx, 18);
  ctx.expect_inputs(2, 2);
  expect_bitwise_dtype(ctx, 0);
  const DataType dtype = same_dtype(ctx, 0, 1);
  Broadcast bc = prepare_broadcast(ctx, {0, 1});
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, bc.shape()}};
  op.kernel = [bc, dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (is_bitwise_type_v<T>) {
        broadcast_binary(bc, k.pool, k.input(0).data<T>(), k.input(1).data<T>(), k.output(0).data<T>(), [](T a, T b) {
          if constexpr (kind == Logic::and_) return static_cast<T>(a & b);
          if constexpr (kind == Logic::or_) return static_cast<T>(a | b);
          if constexpr (kind == Logic::xor_) return static_cast<T>(a ^ b);
        });
      }
    });
  };
  return op;
}

PreparedOp prepare_bitwise_not(OpContext& ctx) {
  expect_introduced_in(ctx, 18);
  ctx.expect_inputs(1, 1);
  expect_bitwise_dtype(ctx, 0);
  const DataType dtype = ctx.input(0).dtype;
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (is_bitwise_type_v<T>) {
        parallel_map(k.pool, k.input(0).data<T>(), k.output(0).data<T>(), k.input(0).elements(),
                     [](T v) { return static_cast<T>(~v); });
      }
    });
  };
  return op;
}

const OpRegistrar greater_op{"Greater", prepare_compare<Comparison::greater>};
const OpRegistrar less_op{"Less", prepare_compare<Comparison::less>};
const OpRegistrar greater_or_equal_op{"GreaterOrEqual", prepare_compare<Comparison::greater_equal>};
const OpRegistrar less_or_equal_op{"LessOrEqual", prepare_compare<Comparison::less_equal>};
const OpRegistrar and_op{"And", prepare_logic<Logic::and_>};
const OpRegistrar or_op{"Or", prepare_logic<Logic::or_>};
const OpRegistrar xor_op{"Xor", prepare_logic<Logic::xor_>};
const OpRegistrar not_op{"Not", prepare_not};
const OpRegistrar bitwise_and_op{"BitwiseAnd", prepare_bitwise<Logic::and_>};
const OpRegistrar bitwise_or_op{"BitwiseOr", prepare_bitwise<Logic::or_>};
const OpRegistrar bitwise_xor_op{"BitwiseXor", prepare_bitwise<Logic::xor_>};
const OpRegistrar bitwise_not_op{"BitwiseNot", prepare_bitwise_not};

}  // namespace
}  // namespace rknnxx::host
