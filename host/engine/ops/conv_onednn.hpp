#pragma once
// Float32 Conv on oneDNN, where it measured faster than the engine's own kernels (docs/runtime-extensions.md,
// "Conv kernels"). Built when Meson finds oneDNN (option onednn); without it prepare_onednn_conv always
// returns false and conv.cpp's kernels run every Conv.

#include "../op_registry.hpp"
#include "conv_epilogue.hpp"
#include "spatial.hpp"

namespace rknnxx::host {

struct OnednnConvRequest {
  const WindowGeometry& g;
  int64_t out_channels = 0;
  int64_t group = 1;
  // The fused chain (fusion.cpp): its leading steps become oneDNN post-ops, the rest (from the first step
  // oneDNN has no post-op for, or the residual Add on) runs on each slice's output just written. When
  // `residual_in_epilogue` is false the chain stops before the residual Add (the caller adds it).
  const Epilogue& epilogue;
  bool residual_in_epilogue = true;
};

// When RKNNXX_ENGINE_CONV and the per-class rule choose oneDNN for this Conv (its weights constant) and
// oneDNN takes it: sets op.kernel and op.scratch_bytes (primitives and reordered weights made here, once)
// and returns true. Otherwise returns false and leaves op as it was. A wrong RKNNXX_ENGINE_CONV fails.
bool prepare_onednn_conv(const OpContext& ctx, const OnednnConvRequest& request, PreparedOp& op);

// Output rows (or channels, groups) cut for the pool's threads: boundaries over `units` in steps of `step`, at
// most `threads` slices. Shared by the float and the integer Conv (conv_int8.hpp).
std::vector<int64_t> slice_bounds(int64_t units, int64_t step, std::size_t threads);

// The input rows a band of output rows [begin, end) reads, and the padding above and below them.
struct Band {
  int64_t first = 0, rows = 0;  // input rows
  int64_t pad_top = 0, pad_bottom = 0;
};
Band band_rows(const WindowGeometry& g, int64_t begin, int64_t end);

// Bands of output rows for the pool's threads (slice_bounds over the rows); one band when some band's rows would
// read only padding (it would have no input rows).
std::vector<int64_t> row_bands(const WindowGeometry& g, std::size_t threads);

// Whether this build has oneDNN (for tests).
bool onednn_conv_built() noexcept;

// Whether oneDNN's blocked Conv kernels take NHWC on this CPU (its pick on AVX-512), so that values are kept
// across MaxPool and Concat too (blocked_layout.hpp; for tests).
bool onednn_conv_keeps_nhwc();

}  // namespace rknnxx::host
