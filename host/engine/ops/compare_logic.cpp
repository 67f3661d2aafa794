// Comparisons and logic: Greater, Less, GreaterOrEqual, LessOrEqual (any numeric element type,
// float16 and bfloat16 compared as float32) giving bool with numpy-style broadcasting; And, Or, Xor on bool
// tensors; Not. Equal lives with Where in movement_ops.cpp.

#include "elementwise.hpp"

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

const OpRegistrar greater_op{"Greater", prepare_compare<Comparison::greater>};
const OpRegistrar less_op{"Less", prepare_compare<Comparison::less>};
const OpRegistrar greater_or_equal_op{"GreaterOrEqual", prepare_compare<Comparison::greater_equal>};
const OpRegistrar less_or_equal_op{"LessOrEqual", prepare_compare<Comparison::less_equal>};
const OpRegistrar and_op{"And", prepare_logic<Logic::and_>};
const OpRegistrar or_op{"Or", prepare_logic<Logic::or_>};
const OpRegistrar xor_op{"Xor", prepare_logic<Logic::xor_>};
const OpRegistrar not_op{"Not", prepare_not};

}  // namespace
}  // namespace rknnxx::host
