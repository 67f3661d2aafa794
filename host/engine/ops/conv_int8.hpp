#pragma once
// Conv on integers (docs/runtime-extensions.md, "Integer Conv"): when the Conv's input and weights are known
// to hold int8 grid values (Graph::integer_grid, set by quantize::QuantizedSession), the Conv runs as an
// int8 convolution with int32 sums on oneDNN instead of on the floats. Built with oneDNN (option onednn) and
// used on CPUs whose int8 dot product cannot saturate (AVX512-VNNI, AVX-VNNI); elsewhere prepare_int8_conv
// returns false and the float kernels run every Conv.

#include "conv_onednn.hpp"

#include <cstdint>
#include <string_view>

namespace rknnxx::host {

// When this Conv (2-D or 1-D, constant weights) can run on integers: sets op.kernel and op.scratch_bytes
// (primitives and int8 weights made here, once) and returns true; its output is then the exact integer sum
// scaled to float32, plus the bias, clamped by the fused activation. Otherwise returns false and leaves op as
// it was. Only Convs where it measured faster (worth_integers in conv_int8.cpp) unless RKNNXX_ENGINE_INT8 is
// "always" (every Conv it can take: tests); "off" turns it off (measurements); a value other than on, always
// or off fails.
bool prepare_int8_conv(const OpContext& ctx, const OnednnConvRequest& request, PreparedOp& op);

// A Gemm or MatMul Y [rows, columns] = A [rows, inner] x B (+ bias), B constant: [columns, inner] when
// b_transposed (Gemm's transB), else [inner, columns]; the bias (input 2, Gemm's C) one value per column. The
// caller has checked the rest (alpha 1, beta 1, A not transposed; A's leading axes are rows).
struct Int8GemmRequest {
  int64_t rows = 0, inner = 0, columns = 0;
  bool b_transposed = false;
  bool has_bias = false;
};

// When A and B hold int8 grid values and it measured faster (the Conv's rule, as a 1x1 Conv over an image of
// `rows` pixels): sets op.kernel and op.scratch_bytes, the product on integers as an Integer Conv's, and returns
// true. Otherwise returns false and leaves op as it was.
bool prepare_int8_gemm(const OpContext& ctx, const Int8GemmRequest& request, PreparedOp& op);

// Whether this build and this CPU run int8 Convs on integers (for tests).
bool int8_conv_available() noexcept;

// Whether an int8 convolution of `products` multiplications a call, with `out_per_group` output channels a group,
// is worth oneDNN's AMX kernel `implementation` (an impl_info_str naming amx; "1x1" in it: the 1x1 kernel) rather
// than the first kernel without AMX (docs/runtime-extensions.md, "Integer Conv": AMX's fixed cost a call).
bool amx_pays(std::string_view implementation, int64_t products, int64_t out_per_group) noexcept;

}  // namespace rknnxx::host
