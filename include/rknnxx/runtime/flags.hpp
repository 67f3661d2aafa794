#pragma once
// Typed flags of rknn_init (docs/c-interface.md#memory) and the attribute queries.
//
//   Context::from_file(path, {.flags = InitFlag::collect_perf | InitFlag::disable_flush_input_mem_cache});

#include <rknnxx/abi/c_api.h>

#include <cstdint>

namespace rknnxx {

enum class InitFlag : std::uint32_t {
  priority_medium = RKNN_FLAG_PRIOR_MEDIUM,
  priority_low = RKNN_FLAG_PRIOR_LOW,
  async = RKNN_FLAG_ASYNC_MASK,
  collect_perf = RKNN_FLAG_COLLECT_PERF_MASK,
  mem_alloc_outside = RKNN_FLAG_MEM_ALLOC_OUTSIDE,
  share_weight_mem = RKNN_FLAG_SHARE_WEIGHT_MEM,
  fence_in_outside = RKNN_FLAG_FENCE_IN_OUTSIDE,
  fence_out_outside = RKNN_FLAG_FENCE_OUT_OUTSIDE,
  collect_model_info_only = RKNN_FLAG_COLLECT_MODEL_INFO_ONLY,
  internal_alloc_outside = RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE,
  execute_fallback_prior_device_gpu = RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU,
  enable_sram = RKNN_FLAG_ENABLE_SRAM,
  share_sram = RKNN_FLAG_SHARE_SRAM,
  disable_proc_high_priority = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY,
  disable_flush_input_mem_cache = RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE,
  disable_flush_output_mem_cache = RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE,
  model_buffer_zero_copy = RKNN_FLAG_MODEL_BUFFER_ZERO_COPY,
};

// A set of InitFlag (priority high is the empty set).
class InitFlags {
public:
  constexpr InitFlags() noexcept = default;
  constexpr InitFlags(InitFlag f) noexcept : bits_(static_cast<std::uint32_t>(f)) {}  // NOLINT: a flag is a set
  [[nodiscard]] constexpr bool has(InitFlag f) const noexcept {
    return (bits_ & static_cast<std::uint32_t>(f)) == static_cast<std::uint32_t>(f);
  }
  [[nodiscard]] constexpr std::uint32_t value() const noexcept { return bits_; }
  constexpr InitFlags& operator|=(InitFlags o) noexcept {
    bits_ |= o.bits_;
    return *this;
  }
  [[nodiscard]] friend constexpr InitFlags operator|(InitFlags a, InitFlags b) noexcept { return a |= b; }
  friend constexpr bool operator==(InitFlags, InitFlags) noexcept = default;

private:
  std::uint32_t bits_ = 0;
};
[[nodiscard]] constexpr InitFlags operator|(InitFlag a, InitFlag b) noexcept { return InitFlags(a) | InitFlags(b); }

// Which attribute query (docs/c-interface.md#attribute-views): the "normal" one used with rknn_inputs_set, the native
// layouts, and for dynamic-shape models the ones of the current shape.
enum class AttrQuery : std::uint8_t { normal, native, native_nhwc, current, current_native };

[[nodiscard]] constexpr rknn_query_cmd query_cmd(AttrQuery q, bool input) noexcept {
  switch (q) {
    case AttrQuery::normal: return input ? RKNN_QUERY_INPUT_ATTR : RKNN_QUERY_OUTPUT_ATTR;
    case AttrQuery::native: return input ? RKNN_QUERY_NATIVE_INPUT_ATTR : RKNN_QUERY_NATIVE_OUTPUT_ATTR;
    case AttrQuery::native_nhwc: return input ? RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR : RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR;
    case AttrQuery::current: return input ? RKNN_QUERY_CURRENT_INPUT_ATTR : RKNN_QUERY_CURRENT_OUTPUT_ATTR;
    case AttrQuery::current_native:
      return input ? RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR : RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR;
  }
  return RKNN_QUERY_INPUT_ATTR;
}

}  // namespace rknnxx
