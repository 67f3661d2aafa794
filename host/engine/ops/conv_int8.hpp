#pragma once
// Conv on integers (docs/runtime-extensions.md, "Integer Conv"): when the Conv's input and weights are known
// to hold int8 grid values (Graph::integer_grid, set by quantize::QuantizedSession), the Conv runs as an
// int8 convolution with int32 sums on oneDNN instead of on the floats. Built with oneDNN (option onednn) and
// used on CPUs whose int8 dot product cannot saturate (AVX512-VNNI, AVX-VNNI); elsewhere prepare_int8_conv
// returns false and the float kernels run every Conv.

#include "conv_onednn.hpp"

namespace rknnxx::host {

// When this Conv (2-D or 1-D, constant weights) can run on integers: sets op.kernel and op.scratch_bytes
// (primitives and int8 weights made here, once) and returns true; its output is then the exact integer sum
// scaled to float32, plus the bias, clamped by the fused activation. Otherwise returns false and leaves op as
// it was. Only Convs where it measured faster (worth_integers in conv_int8.cpp) unless RKNNXX_ENGINE_INT8 is
// "always" (every Conv it can take: tests); "off" turns it off (measurements); a value other than on, always
// or off fails.
bool prepare_int8_conv(const OpContext& ctx, const OnednnConvRequest& request, PreparedOp& op);

// Whether this build and this CPU run int8 Convs on integers (for tests).
bool int8_conv_available() noexcept;

}  // namespace rknnxx::host
