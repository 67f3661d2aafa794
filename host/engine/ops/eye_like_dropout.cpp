// EyeLike (ones on a diagonal of a 2-D tensor shaped like the input) and Dropout as inference
// runs it: the identity, with an all-true mask. Dropout in training mode draws random numbers
// and is refused, unless its ratio is a constant 0 (then it is the identity too).

#include "../op_registry.hpp"

#include <cstring>
#include <type_traits>

namespace rknnxx::host {
namespace {

PreparedOp prepare_eye_like(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  const auto& shape = ctx.input(0).shape;
  if (shape.size() != 2) {
    ctx.fail("input '{}' has shape {}, expected a 2-D tensor", ctx.input_name(0), shape_string(shape));
  }
  const auto dtype =
      ctx.attribute("dtype") != nullptr ? static_cast<DataType>(ctx.attr_int("dtype", 0)) : ctx.input(0).dtype;
  if (!is_supported(dtype)) {
    ctx.fail("attribute 'dtype' names element type {}, not supported by the host engine", dtype_name(dtype));
  }
  const int64_t diagonal = ctx.attr_int("k", 0);
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, shape}};
  op.kernel = [rows = shape[0], cols = shape[1], diagonal, dtype](KernelContext& k) {
    Tensor& out = k.output(0);
    std::memset(out.raw(), 0, out.bytes());
    visit_dtype(dtype, [&]<class T>() {
      T one{};
      if constexpr (is_float_bits_v<T>) {
        one = narrow<T>(1.0f);
      } else {
        one = T{1};
      }
      T* data = out.data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + diagonal;
        if (j >= 0 && j < cols) {
          data[i * cols + j] = one;
        }
      }
    });
  };
  return op;
}

// True when `t` holds one value equal to `value`.
bool holds(const Tensor* t, double value) {
  if (t == nullptr || t->elements() != 1) {
    return false;
  }
  return visit_dtype(t->dtype(), [&]<class T>() {
    if constexpr (is_float_bits_v<T>) {
      return widen(t->data<T>()[0]) == value;
    } else {
      return static_cast<double>(t->data<T>()[0]) == value;
    }
  });
}

PreparedOp prepare_dropout(OpContext& ctx) {
  ctx.expect_inputs(1, 3);
  bool training = ctx.attr_int("is_test", 1) == 0 && ctx.opset() < 7;
  if (ctx.has_input(2)) {
    const Tensor* mode = ctx.constant(2);
    if (mode == nullptr) {
      ctx.fail("input 'training_mode' must be a constant: the host engine runs inference only");
    }
    training = holds(mode, 1.0);
  }
  if (training && !holds(ctx.constant(1), 0.0)) {
    ctx.fail("training_mode=1 draws random numbers; the host engine runs Dropout for inference only");
  }
  PreparedOp op;
  op.outputs = {ctx.input(0), TensorInfo{DataType::boolean, ctx.input(0).shape}};
  op.outputs.resize(ctx.output_count());
  op.kernel = [](KernelContext& k) {
    std::memcpy(k.output(0).raw(), k.input(0).raw(), k.input(0).bytes());
    if (k.outputs.size() > 1 && k.outputs[1] != nullptr) {
      std::memset(k.output(1).raw(), 1, k.output(1).bytes());
    }
  };
  return op;
}

const OpRegistrar eye_like_op{"EyeLike", prepare_eye_like};
const OpRegistrar dropout_op{"Dropout", prepare_dropout};

}  // namespace
}  // namespace rknnxx::host
