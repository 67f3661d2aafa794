#include <doctest/doctest.h>
#include <rknnxx/core/platform.hpp>

using namespace rknnxx;

TEST_CASE("platform: NPU cores and valid core masks") {
  constexpr auto& rk3588 = platform_traits<Platform::rk3588>;
  static_assert(rk3588.npu_cores == 3 && rk3588.multi_core());
  static_assert(rk3588.valid_core_mask(CoreMask::core_0_1_2) && rk3588.valid_core_mask(CoreMask::core_2));
  static_assert(platform_traits<Platform::rk3576>.npu_cores == 2 &&
                platform_traits<Platform::rk3576>.npu_cores_inferred);
  static_assert(platform_traits<Platform::rk3576>.valid_core_mask(CoreMask::core_0_1));
  static_assert(!platform_traits<Platform::rk3576>.valid_core_mask(CoreMask::core_2));
  for (auto p : {Platform::rk3566, Platform::rk3568, Platform::rk3562, Platform::rv1106, Platform::rv1103,
                 Platform::rv1106b, Platform::rv1103b, Platform::rv1126b, Platform::rk2118}) {
    CAPTURE(name_of(p));
    CHECK(platform_info(p).npu_cores == 1);
    CHECK(platform_info(p).valid_core_mask(CoreMask::automatic));
    CHECK_FALSE(platform_info(p).valid_core_mask(CoreMask::core_0_1));
    CHECK_FALSE(platform_info(p).supports(Function::set_core_mask));
  }
  constexpr CoreMaskFor<Platform::rk3588> m = CoreMask::core_0_1_2;
  static_assert(m.value() == CoreMask::core_0_1_2);
  constexpr CoreMaskFor<Platform::rk3566> single = CoreMask::core_0;
  static_assert(static_cast<CoreMask>(single) == CoreMask::core_0);
  CHECK_NOTHROW(check_core_mask(Platform::rk3588, CoreMask::all));
  CHECK_THROWS_WITH_AS(check_core_mask(Platform::rk3566, CoreMask::core_0_1),
                       doctest::Contains("core mask 0x3 needs more NPU cores than RK3566 has (1)"), Error);
  // Cores 0 and 2 together is no rknn_core_mask value: said so, not blamed on the core count.
  CHECK_THROWS_WITH_AS(check_core_mask(Platform::rk3588, static_cast<CoreMask>(5)),
                       doctest::Contains("core mask 0x5 is not an rknn_core_mask value"), Error);
  CHECK_THROWS_WITH_AS(check_core_mask(Platform::rk3588, static_cast<CoreMask>(RKNN_NPU_CORE_UNDEFINED)),
                       doctest::Contains("core mask 0x10000 is not"), Error);
}

TEST_CASE("platform: functions by platform (docs/c-interface.md#platforms)") {
  for (auto p : all_platforms) {
    CAPTURE(name_of(p));
    const auto& info = platform_info(p);
    CHECK(info.supports(Function::init));
    CHECK(info.supports(Function::mem_sync));
    CHECK_FALSE(info.supports(Function::wait));
    CHECK_FALSE(info.supports(Function::create_mem_from_mb_blk));
    CHECK_FALSE(info.supports(Function::set_input_shape));
  }
  constexpr auto& rk3576 = platform_traits<Platform::rk3576>;
  static_assert(rk3576.supports(Function::set_batch_core_num) && rk3576.supports(Function::matmul_set_core_mask));
  constexpr auto& rv1126b = platform_traits<Platform::rv1126b>;
  static_assert(rv1126b.supports(Function::register_custom_ops) && !rv1126b.supports(Function::set_core_mask));
  constexpr auto& rv1106 = platform_traits<Platform::rv1106>;
  static_assert(rv1106.supports(Function::create_mem_from_fd) && !rv1106.supports(Function::inputs_set));
  static_assert(!rv1106.supports(Function::dup_context) && !rv1106.supports(Function::matmul_run));
  static_assert(rv1106.runtime_library == "librknnmrt.so");
  constexpr auto& rk2118 = platform_traits<Platform::rk2118>;
  static_assert(!rk2118.supports(Function::create_mem_from_fd) && rk2118.supports(Function::create_mem));
}

TEST_CASE("platform: queries by platform and dynamic shapes") {
  constexpr auto& rk3568 = platform_traits<Platform::rk3568>;
  static_assert(rk3568.supports(QueryCmd::input_dynamic_range) && rk3568.supports(QueryCmd::perf_detail));
  static_assert(!rk3568.supports(QueryCmd::device_mem_info) && rk3568.dynamic_shape);
  constexpr auto& rv1103 = platform_traits<Platform::rv1103>;
  static_assert(!rv1103.supports(QueryCmd::current_input_attr) && rv1103.supports(QueryCmd::device_mem_info));
  static_assert(!rv1103.dynamic_shape && !platform_traits<Platform::rk2118>.dynamic_shape);
  static_assert(platform_traits<Platform::rv1126b>.dynamic_shape && platform_traits<Platform::rk3576>.dynamic_shape);
  static_assert(rv1103.supports(QueryCmd::native_nc1hwc2_output_attr));  // the alias is the same query
  for (auto p : all_platforms) CHECK(platform_info(p).supports(QueryCmd::in_out_num));
}

TEST_CASE("platform: C2, zero-copy width alignment, matmul blocking") {
  static_assert(platform_traits<Platform::rk3566>.c2(TensorType::int8) == 8);
  static_assert(platform_traits<Platform::rk3568>.c2(TensorType::float16) == 4);
  static_assert(platform_traits<Platform::rk3588>.c2(TensorType::int8) == 16);
  static_assert(platform_traits<Platform::rk3562>.c2(TensorType::int16) == 8);
  static_assert(platform_traits<Platform::rv1106>.c2(TensorType::int8) == 16);
  static_assert(platform_traits<Platform::rk3576>.c2(TensorType::float16) == 8 &&
                platform_traits<Platform::rk3576>.c2_inferred);
  static_assert(platform_traits<Platform::rv1106b>.c2(TensorType::int8) == 0);  // undocumented
  static_assert(platform_traits<Platform::rk3588>.c2(TensorType::float32) == 0);
  static_assert(platform_traits<Platform::rk3566>.zero_copy_width_alignment == 8);
  static_assert(platform_traits<Platform::rk3588>.zero_copy_width_alignment == 16);
  static_assert(platform_traits<Platform::rk3576>.width_alignment_inferred);
  static_assert(platform_traits<Platform::rk3568>.matmul(TensorType::float16) == MatmulBlocking{16, 8, 4, 8, 16});
  static_assert(platform_traits<Platform::rk3562>.matmul(TensorType::float16).k_align == 32);
  static_assert(platform_traits<Platform::rk3588>.matmul(TensorType::int4).n_align == 64);
  static_assert(!platform_traits<Platform::rk3568>.matmul(TensorType::int4).supported());
  static_assert(platform_traits<Platform::rk3576>.matmul_b_segment_k == 4096);
  static_assert(platform_traits<Platform::rk3588>.matmul_b_segment_k == 8192);
  CHECK(platform_from_name("rk3588") == Platform::rk3588);
  CHECK(platform_from_name("RV1106B") == Platform::rv1106b);
  CHECK_FALSE(platform_from_name("rk3399").has_value());
  CHECK_THROWS_WITH_AS((void)platform_info(static_cast<Platform>(99)), doctest::Contains("platform value 99"), Error);
}
