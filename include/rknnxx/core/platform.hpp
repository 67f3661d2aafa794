#pragma once
// Platforms: what each Rockchip NPU offers, as constexpr traits (docs/c-interface.md#platforms).
//
//   constexpr auto& rk3588 = platform_traits<Platform::rk3588>;
//   rk3588.npu_cores == 3; rk3588.supports(Function::set_core_mask); rk3588.c2(TensorType::int8) == 16
//   CoreMaskFor<Platform::rk3588> m = CoreMask::core_0_1;   // compiles
//   CoreMaskFor<Platform::rk3566> m = CoreMask::core_0_1;   // does not: RK3566 has one NPU core
//
// Facts the reference marks INFERRED are flagged by an `inferred` member and a comment.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rknnxx {

enum class Platform : std::uint8_t {
  rk3588,
  rk3576,
  rk3566,
  rk3568,
  rk3562,
  rv1106,
  rv1103,
  rv1106b,
  rv1103b,
  rv1126b,
  rk2118,
};

inline constexpr std::array all_platforms{Platform::rk3588,  Platform::rk3576,  Platform::rk3566, Platform::rk3568,
                                          Platform::rk3562,  Platform::rv1106,  Platform::rv1103, Platform::rv1106b,
                                          Platform::rv1103b, Platform::rv1126b, Platform::rk2118};

enum class CoreMask : std::uint32_t {
  automatic = RKNN_NPU_CORE_AUTO,
  core_0 = RKNN_NPU_CORE_0,
  core_1 = RKNN_NPU_CORE_1,
  core_2 = RKNN_NPU_CORE_2,
  core_0_1 = RKNN_NPU_CORE_0_1,
  core_0_1_2 = RKNN_NPU_CORE_0_1_2,
  all = RKNN_NPU_CORE_ALL,
};

// A value of rknn_core_mask (RKNN_NPU_CORE_UNDEFINED excluded: it selects nothing).
[[nodiscard]] constexpr bool is_valid(CoreMask m) noexcept {
  switch (m) {
    case CoreMask::automatic:
    case CoreMask::core_0:
    case CoreMask::core_1:
    case CoreMask::core_2:
    case CoreMask::core_0_1:
    case CoreMask::core_0_1_2:
    case CoreMask::all: return true;
  }
  return false;
}

// The runtime's functions, for availability per platform (docs/c-interface.md#platforms).
enum class Function : std::uint8_t {
  init,
  dup_context,
  destroy,
  query,
  inputs_set,
  set_batch_core_num,
  set_core_mask,
  run,
  wait,
  outputs_get,
  outputs_release,
  create_mem_from_phys,
  create_mem_from_fd,
  create_mem_from_mb_blk,
  create_mem,
  create_mem2,
  destroy_mem,
  set_weight_mem,
  set_internal_mem,
  set_io_mem,
  set_input_shape,
  set_input_shapes,
  mem_sync,
  matmul_create,
  matmul_create_dynamic_shape,
  matmul_set_io_mem,
  matmul_set_core_mask,
  matmul_set_quant_params,
  matmul_get_quant_params,
  matmul_set_dynamic_shape,
  matmul_run,
  matmul_destroy,
  B_normal_layout_to_native_layout,
  register_custom_ops,
  custom_op_get_op_attr,
};

enum class QueryCmd : std::uint32_t {
  in_out_num = RKNN_QUERY_IN_OUT_NUM,
  input_attr = RKNN_QUERY_INPUT_ATTR,
  output_attr = RKNN_QUERY_OUTPUT_ATTR,
  perf_detail = RKNN_QUERY_PERF_DETAIL,
  perf_run = RKNN_QUERY_PERF_RUN,
  sdk_version = RKNN_QUERY_SDK_VERSION,
  mem_size = RKNN_QUERY_MEM_SIZE,
  custom_string = RKNN_QUERY_CUSTOM_STRING,
  native_input_attr = RKNN_QUERY_NATIVE_INPUT_ATTR,
  native_output_attr = RKNN_QUERY_NATIVE_OUTPUT_ATTR,
  native_nc1hwc2_input_attr = RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR,
  native_nc1hwc2_output_attr = RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR,
  native_nhwc_input_attr = RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR,
  native_nhwc_output_attr = RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR,
  device_mem_info = RKNN_QUERY_DEVICE_MEM_INFO,
  input_dynamic_range = RKNN_QUERY_INPUT_DYNAMIC_RANGE,
  current_input_attr = RKNN_QUERY_CURRENT_INPUT_ATTR,
  current_output_attr = RKNN_QUERY_CURRENT_OUTPUT_ATTR,
  current_native_input_attr = RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR,
  current_native_output_attr = RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR,
};

// Matmul block sizes for one element type of A and B (the matmul header's alignment rules). Zero: not supported.
struct MatmulBlocking {
  std::uint32_t k_align = 0;  // K must be a multiple of this (element counts: INFERRED unit)
  std::uint32_t n_align = 0;  // N must be a multiple of this
  std::uint32_t a_sub_k = 0;  // native A: [K/subK, M, subK]
  std::uint32_t b_sub_n = 0;  // native B: [N/subN, K/subK, subN, subK]
  std::uint32_t b_sub_k = 0;
  [[nodiscard]] constexpr bool supported() const noexcept { return k_align != 0; }
  friend constexpr bool operator==(const MatmulBlocking&, const MatmulBlocking&) = default;
};

namespace detail {
constexpr std::uint64_t bit(Function f) noexcept { return std::uint64_t{1} << static_cast<unsigned>(f); }
constexpr std::uint32_t bit(QueryCmd q) noexcept { return std::uint32_t{1} << static_cast<unsigned>(q); }
template <class... F> constexpr std::uint64_t functions(F... f) noexcept { return (bit(f) | ... | 0u); }
template <class... Q> constexpr std::uint32_t queries(Q... q) noexcept { return (bit(q) | ... | 0u); }
}  // namespace detail

struct PlatformInfo {
  Platform platform;
  std::string_view name;             // as the toolkit's target_platform spells it, upper case
  std::string_view runtime_library;  // librknnrt.so or librknnmrt.so
  std::uint32_t npu_cores;
  bool npu_cores_inferred;
  bool dynamic_shape;      // rknn_set_input_shapes and the CURRENT_* queries
  std::uint32_t c2_8bit;   // NC1HWC2 C2 for int8 (and uint8: INFERRED); 0 = unknown
  std::uint32_t c2_16bit;  // for float16 and int16; 0 = unknown
  bool c2_inferred;
  std::uint32_t zero_copy_width_alignment;  // pixels; 0 = unknown
  bool width_alignment_inferred;
  MatmulBlocking matmul_int8{};  // all zero: no matmul of that type
  MatmulBlocking matmul_float16{};
  MatmulBlocking matmul_int4{};
  std::uint32_t matmul_max_k;        // 0 = no matmul
  std::uint32_t matmul_b_segment_k;  // B is split into segments of this K; 0 = never
  std::uint64_t function_set;
  std::uint32_t query_set;

  [[nodiscard]] constexpr bool supports(Function f) const noexcept { return (function_set & detail::bit(f)) != 0; }
  [[nodiscard]] constexpr bool supports(QueryCmd q) const noexcept { return (query_set & detail::bit(q)) != 0; }
  [[nodiscard]] constexpr bool multi_core() const noexcept { return npu_cores > 1; }

  // The C2 of NC1HWC2 tensors of element type t; 0 when the platform has none or it is unknown.
  [[nodiscard]] constexpr std::uint32_t c2(TensorType t) const noexcept {
    switch (t) {
      case TensorType::int8:
      case TensorType::uint8: return c2_8bit;
      case TensorType::float16:
      case TensorType::int16: return c2_16bit;
      default: return 0;
    }
  }

  // A mask names cores the platform has. AUTO and CORE_0 are meaningful everywhere (single-core
  // platforms simply have no rknn_set_core_mask to call: see supports(Function::set_core_mask)).
  [[nodiscard]] constexpr bool valid_core_mask(CoreMask m) const noexcept {
    switch (m) {
      case CoreMask::automatic:
      case CoreMask::core_0: return true;
      case CoreMask::core_1:
      case CoreMask::core_0_1:
      case CoreMask::all: return npu_cores >= 2;
      case CoreMask::core_2:
      case CoreMask::core_0_1_2: return npu_cores >= 3;
    }
    return false;
  }

  [[nodiscard]] constexpr MatmulBlocking matmul(TensorType t) const noexcept {
    switch (t) {
      case TensorType::int8: return matmul_int8;
      case TensorType::float16: return matmul_float16;
      case TensorType::int4: return matmul_int4;
      default: return {};
    }
  }
};

namespace detail {
using F = Function;
using Q = QueryCmd;
// The first two columns of docs/c-interface.md#platforms share the full API but for the core-mask calls (B only).
inline constexpr std::uint64_t functions_everywhere =
    functions(F::init, F::destroy, F::query, F::run, F::create_mem_from_phys, F::create_mem, F::create_mem2,
              F::destroy_mem, F::set_weight_mem, F::set_internal_mem, F::set_io_mem, F::mem_sync);
inline constexpr std::uint64_t functions_rv110x = functions_everywhere | functions(F::create_mem_from_fd);
inline constexpr std::uint64_t functions_column_a = functions_rv110x |
    functions(F::dup_context, F::inputs_set, F::outputs_get, F::outputs_release, F::set_input_shapes, F::matmul_create,
              F::matmul_create_dynamic_shape, F::matmul_set_io_mem, F::matmul_set_quant_params,
              F::matmul_get_quant_params, F::matmul_set_dynamic_shape, F::matmul_run, F::matmul_destroy,
              F::B_normal_layout_to_native_layout, F::register_custom_ops, F::custom_op_get_op_attr);
inline constexpr std::uint64_t functions_column_b =
    functions_column_a | functions(F::set_core_mask, F::set_batch_core_num, F::matmul_set_core_mask);
// rknn_wait, rknn_create_mem_from_mb_blk and the deprecated rknn_set_input_shape: nowhere.

// The vendor's query table lists only the queries below as platform-dependent; the others (IN_OUT_NUM, the
// attributes, SDK_VERSION, MEM_SIZE, CUSTOM_STRING, the NATIVE_* ones) are taken to exist on
// every platform (INFERRED: the table does not exclude them).
inline constexpr std::uint32_t queries_everywhere =
    queries(Q::in_out_num, Q::input_attr, Q::output_attr, Q::sdk_version, Q::mem_size, Q::custom_string,
            Q::native_input_attr, Q::native_output_attr, Q::native_nhwc_input_attr, Q::native_nhwc_output_attr);
inline constexpr std::uint32_t queries_columns_ab = queries_everywhere |
    queries(Q::perf_detail, Q::perf_run, Q::input_dynamic_range, Q::current_input_attr, Q::current_output_attr,
            Q::current_native_input_attr, Q::current_native_output_attr);
// DEVICE_MEM_INFO: the vendor's table marks it supported on RV110x and RK2118, its prose says not
// on the RV1106 family; the table is followed here (docs/c-interface.md#platforms).
inline constexpr std::uint32_t queries_columns_cd = queries_everywhere | queries(Q::device_mem_info);

inline constexpr MatmulBlocking mm_rk356x_int8{32, 16, 8, 16, 32};
inline constexpr MatmulBlocking mm_rk356x_fp16{16, 8, 4, 8, 16};
inline constexpr MatmulBlocking mm_rk3562_int8{32, 16, 16, 16, 32};
inline constexpr MatmulBlocking mm_rk3562_fp16{32, 8, 8, 8, 32};
inline constexpr MatmulBlocking mm_rk3588_int8{32, 32, 16, 32, 32};
inline constexpr MatmulBlocking mm_rk3588_fp16{32, 16, 8, 16, 32};
inline constexpr MatmulBlocking mm_rk3588_int4{32, 64, 32, 64, 32};

constexpr PlatformInfo rk356x(Platform p, std::string_view name) {
  return {.platform = p,
          .name = name,
          .runtime_library = "librknnrt.so",
          .npu_cores = 1,
          .npu_cores_inferred = false,
          .dynamic_shape = true,
          .c2_8bit = 8,
          .c2_16bit = 4,
          .c2_inferred = false,
          .zero_copy_width_alignment = 8,
          .width_alignment_inferred = false,
          .matmul_int8 = mm_rk356x_int8,
          .matmul_float16 = mm_rk356x_fp16,
          .matmul_max_k = 10240,
          .matmul_b_segment_k = 0,
          .function_set = functions_column_a,
          .query_set = queries_columns_ab};
}
constexpr PlatformInfo rv110x(Platform p, std::string_view name, bool b_revision) {
  // RV1106/RV1103: C2 and the 16-pixel alignment of docs/c-interface.md#nc1hwc2. The B revisions:
  // not documented.
  return {.platform = p,
          .name = name,
          .runtime_library = "librknnmrt.so",
          .npu_cores = 1,
          .npu_cores_inferred = false,
          .dynamic_shape = false,
          .c2_8bit = b_revision ? 0u : 16u,
          .c2_16bit = b_revision ? 0u : 8u,
          .c2_inferred = false,
          .zero_copy_width_alignment = b_revision ? 0u : 16u,
          .width_alignment_inferred = false,
          .matmul_max_k = 0,
          .matmul_b_segment_k = 0,
          .function_set = functions_rv110x,
          .query_set = queries_columns_cd};
}
}  // namespace detail

[[nodiscard]] constexpr PlatformInfo platform_info(Platform p) {
  using namespace detail;
  switch (p) {
    case Platform::rk3588:
      return {.platform = p,
              .name = "RK3588",
              .runtime_library = "librknnrt.so",
              .npu_cores = 3,
              .npu_cores_inferred = false,
              .dynamic_shape = true,
              .c2_8bit = 16,
              .c2_16bit = 8,
              .c2_inferred = false,
              .zero_copy_width_alignment = 16,
              .width_alignment_inferred = false,
              .matmul_int8 = mm_rk3588_int8,
              .matmul_float16 = mm_rk3588_fp16,
              .matmul_int4 = mm_rk3588_int4,
              .matmul_max_k = 10240,
              .matmul_b_segment_k = 8192,
              .function_set = functions_column_b,
              .query_set = queries_columns_ab};
    case Platform::rk3576: {
      // RK3588's figures but for two cores and a shorter B segment. INFERRED: two cores (third-party configs use
      // cores {0, 1}); C2 and the 16-pixel width alignment assumed equal to RK3588's. Read attr.dims[4] and
      // attr.w_stride at run time.
      PlatformInfo info = platform_info(Platform::rk3588);
      info.platform = p;
      info.name = "RK3576";
      info.npu_cores = 2;
      info.npu_cores_inferred = true;
      info.c2_inferred = true;
      info.width_alignment_inferred = true;
      info.matmul_b_segment_k = 4096;
      return info;
    }
    case Platform::rk3566: return rk356x(p, "RK3566");
    case Platform::rk3568: return rk356x(p, "RK3568");
    case Platform::rk3562:
      return {.platform = p,
              .name = "RK3562",
              .runtime_library = "librknnrt.so",
              .npu_cores = 1,
              .npu_cores_inferred = false,
              .dynamic_shape = true,
              .c2_8bit = 16,
              .c2_16bit = 8,
              .c2_inferred = false,
              .zero_copy_width_alignment = 16,
              .width_alignment_inferred = false,
              .matmul_int8 = mm_rk3562_int8,
              .matmul_float16 = mm_rk3562_fp16,
              .matmul_max_k = 10240,
              .matmul_b_segment_k = 0,
              .function_set = functions_column_a,
              .query_set = queries_columns_ab};
    case Platform::rv1106: return rv110x(p, "RV1106", false);
    case Platform::rv1103: return rv110x(p, "RV1103", false);
    case Platform::rv1106b: return rv110x(p, "RV1106B", true);
    case Platform::rv1103b: return rv110x(p, "RV1103B", true);
    case Platform::rv1126b:
      // The first column of docs/c-interface.md#platforms (single core: no core-mask functions). C2, width alignment and
      // matmul blocking are not documented.
      return {.platform = p,
              .name = "RV1126B",
              .runtime_library = "librknnrt.so",
              .npu_cores = 1,
              .npu_cores_inferred = false,
              .dynamic_shape = true,
              .c2_8bit = 0,
              .c2_16bit = 0,
              .c2_inferred = false,
              .zero_copy_width_alignment = 0,
              .width_alignment_inferred = false,
              .matmul_max_k = 10240,
              .matmul_b_segment_k = 0,
              .function_set = functions_column_a,
              .query_set = queries_columns_ab};
    case Platform::rk2118:
      // Column D: the minimal API, no create_mem_from_fd. One core (INFERRED: no core-mask calls).
      return {.platform = p,
              .name = "RK2118",
              .runtime_library = "librknnmrt.so",
              .npu_cores = 1,
              .npu_cores_inferred = true,
              .dynamic_shape = false,
              .c2_8bit = 0,
              .c2_16bit = 0,
              .c2_inferred = false,
              .zero_copy_width_alignment = 0,
              .width_alignment_inferred = false,
              .matmul_max_k = 0,
              .matmul_b_segment_k = 0,
              .function_set = functions_everywhere,
              .query_set = queries_columns_cd};
  }
  detail::fail("rknnxx::platform_info", "platform value {} is not a known platform", static_cast<unsigned>(p));
}

template <Platform P> inline constexpr PlatformInfo platform_traits = platform_info(P);

[[nodiscard]] constexpr std::string_view name_of(Platform p) { return platform_info(p).name; }

// "rk3588" or "RK3588" (the toolkit's target_platform) to the enum.
[[nodiscard]] constexpr std::optional<Platform> platform_from_name(std::string_view s) noexcept {
  for (auto p : all_platforms) {
    const auto n = platform_info(p).name;
    if (n.size() != s.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < n.size(); ++i) {
      char c = s[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      same = same && c == n[i];
    }
    if (same) return p;
  }
  return std::nullopt;
}

// Run-time check of a core mask, with the reason when it is refused.
constexpr void check_core_mask(Platform p, CoreMask m) {
  const auto& info = platform_info(p);
  if (!is_valid(m))
    detail::fail("rknn_set_core_mask", "core mask {:#x} is not an rknn_core_mask value (0, 1, 2, 4, 3, 7, 0xffff)",
                 static_cast<std::uint32_t>(m));
  if (!info.valid_core_mask(m))
    detail::fail("rknn_set_core_mask", "core mask {:#x} needs more NPU cores than {} has ({})",
                 static_cast<std::uint32_t>(m), info.name, info.npu_cores);
}

// A core mask checked against the platform at compile time: a multi-core mask for a single-core
// platform does not compile.
template <Platform P> class CoreMaskFor {
public:
  consteval CoreMaskFor(CoreMask m) : mask_(m) {
    if (!platform_traits<P>.valid_core_mask(m))
      detail::fail("rknnxx::CoreMaskFor", "core mask needs more NPU cores than the platform has: {:#x}",
                   static_cast<std::uint32_t>(m));
  }
  [[nodiscard]] constexpr CoreMask value() const noexcept { return mask_; }
  constexpr operator CoreMask() const noexcept { return mask_; }

private:
  CoreMask mask_;
};

}  // namespace rknnxx
