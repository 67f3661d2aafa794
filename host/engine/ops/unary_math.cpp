// Float32 unary math: the trigonometric and hyperbolic functions, Round (half to even), Sign,
// IsInf and IsNaN (giving bool), and the activations Selu, Celu, ThresholdedRelu, Softplus,
// Softsign, Shrink, Mish (x tanh(softplus(x)), opset 18) and Gelu (opset 20). Each is a plain loop
// over the output (elementwise.hpp).

#include "elementwise.hpp"
#include "introduced.hpp"

#include <cmath>
#include <type_traits>

namespace rknnxx::host {
namespace {

float cos_(float x) { return std::cos(x); }
float sin_(float x) { return std::sin(x); }
float tan_(float x) { return std::tan(x); }
float acos_(float x) { return std::acos(x); }
float asin_(float x) { return std::asin(x); }
float atan_(float x) { return std::atan(x); }
float cosh_(float x) { return std::cosh(x); }
float sinh_(float x) { return std::sinh(x); }
float acosh_(float x) { return std::acosh(x); }
float asinh_(float x) { return std::asinh(x); }
float atanh_(float x) { return std::atanh(x); }
// Halves go to the even neighbour, as ONNX asks: nearbyint in the default rounding mode.
float round_(float x) { return std::nearbyint(x); }
float softsign(float x) { return x / (1.0f + std::fabs(x)); }
// log(1 + e^x) without overflow for large x.
float softplus(float x) { return x > 0.0f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

PreparedOp prepare_selu(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    return [alpha = c.attr_float("alpha", 1.67326319217681884765625f),
            gamma = c.attr_float("gamma", 1.05070102214813232421875f)](float x) {
      return x > 0.0f ? gamma * x : gamma * alpha * (std::exp(x) - 1.0f);
    };
  });
}

PreparedOp prepare_celu(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    const float alpha = c.attr_float("alpha", 1.0f);
    if (alpha == 0.0f) {
      c.fail("attribute 'alpha' must not be 0");
    }
    return [alpha](float x) { return x > 0.0f ? x : alpha * (std::exp(x / alpha) - 1.0f); };
  });
}

PreparedOp prepare_thresholded_relu(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    return [alpha = c.attr_float("alpha", 1.0f)](float x) { return x > alpha ? x : 0.0f; };
  });
}

PreparedOp prepare_shrink(OpContext& ctx) {
  return prepare_unary_float(ctx, [](const OpContext& c) {
    return [bias = c.attr_float("bias", 0.0f), lambd = c.attr_float("lambd", 0.5f)](float x) {
      return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f);
    };
  });
}

// Sign: float32 and the integer types.
PreparedOp prepare_sign(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(
      0, {DataType::float32, DataType::int8, DataType::uint8, DataType::int16, DataType::int32, DataType::int64});
  PreparedOp op;
  op.outputs = {ctx.input(0)};
  op.kernel = [dtype = ctx.input(0).dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        parallel_map(k.pool, k.input(0).data<T>(), k.output(0).data<T>(), k.input(0).elements(), [](T v) {
          if constexpr (std::is_unsigned_v<T>) {
            return static_cast<T>(v != 0);
          } else {
            return static_cast<T>((T{0} < v) - (v < T{0}));  // NaN gives 0
          }
        });
      }
    });
  };
  return op;
}

// IsInf (detect_negative, detect_positive) and IsNaN: float32 to bool.
template <bool nan> PreparedOp prepare_is_special(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::float32});
  const bool negative = ctx.attr_int("detect_negative", 1) != 0;
  const bool positive = ctx.attr_int("detect_positive", 1) != 0;
  PreparedOp op;
  op.outputs = {TensorInfo{DataType::boolean, ctx.input(0).shape}};
  // One capture list for both forms: IsNaN ignores the IsInf attributes.
  op.kernel = [=](KernelContext& k) {
    parallel_map(k.pool, k.input(0).data<float>(), k.output(0).data<bool>(), k.input(0).elements(), [=](float x) {
      if constexpr (nan) {
        return std::isnan(x);
      } else {
        return std::isinf(x) && (x > 0.0f ? positive : negative);
      }
    });
  };
  return op;
}

float mish(float x) { return x * std::tanh(softplus(x)); }

PreparedOp prepare_mish(OpContext& ctx) {
  expect_introduced_in(ctx, 18);
  return prepare_simple<mish>(ctx);
}

// x * Phi(x) with the normal distribution's CDF Phi, exact (approximate "none", through erf) or
// its tanh approximation (approximate "tanh").
PreparedOp prepare_gelu(OpContext& ctx) {
  expect_introduced_in(ctx, 20);
  const std::string approximate = ctx.attr_string("approximate", "none");
  if (approximate == "tanh") {
    return prepare_unary_float(ctx, [](const OpContext&) {
      return [](float x) {
        constexpr float sqrt_2_over_pi = 0.7978845608028654f;
        return 0.5f * x * (1.0f + std::tanh(sqrt_2_over_pi * (x + 0.044715f * x * x * x)));
      };
    });
  }
  if (approximate != "none") {
    ctx.fail("attribute 'approximate' is '{}', expected none or tanh", approximate);
  }
  return prepare_unary_float(ctx, [](const OpContext&) {
    return [](float x) {
      constexpr float one_over_sqrt_2 = 0.7071067811865476f;
      return 0.5f * x * (1.0f + std::erf(x * one_over_sqrt_2));
    };
  });
}

const OpRegistrar cos_op{"Cos", prepare_simple<cos_>};
const OpRegistrar sin_op{"Sin", prepare_simple<sin_>};
const OpRegistrar tan_op{"Tan", prepare_simple<tan_>};
const OpRegistrar acos_op{"Acos", prepare_simple<acos_>};
const OpRegistrar asin_op{"Asin", prepare_simple<asin_>};
const OpRegistrar atan_op{"Atan", prepare_simple<atan_>};
const OpRegistrar cosh_op{"Cosh", prepare_simple<cosh_>};
const OpRegistrar sinh_op{"Sinh", prepare_simple<sinh_>};
const OpRegistrar acosh_op{"Acosh", prepare_simple<acosh_>};
const OpRegistrar asinh_op{"Asinh", prepare_simple<asinh_>};
const OpRegistrar atanh_op{"Atanh", prepare_simple<atanh_>};
const OpRegistrar round_op{"Round", prepare_simple<round_>};
const OpRegistrar softsign_op{"Softsign", prepare_simple<softsign>};
const OpRegistrar softplus_op{"Softplus", prepare_simple<softplus>};
const OpRegistrar selu_op{"Selu", prepare_selu};
const OpRegistrar celu_op{"Celu", prepare_celu};
const OpRegistrar thresholded_relu_op{"ThresholdedRelu", prepare_thresholded_relu};
const OpRegistrar shrink_op{"Shrink", prepare_shrink};
const OpRegistrar sign_op{"Sign", prepare_sign};
const OpRegistrar is_inf_op{"IsInf", prepare_is_special<false>};
const OpRegistrar is_nan_op{"IsNaN", prepare_is_special<true>};
const OpRegistrar gelu_op{"Gelu", prepare_gelu};
const OpRegistrar mish_op{"Mish", prepare_mish};

}  // namespace
}  // namespace rknnxx::host
