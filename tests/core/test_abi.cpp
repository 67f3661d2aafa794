// The declared ABI agrees with the reference's numbers (the headers' static_asserts pin the
// layouts; these checks pin the values and count as tests on every target, qemu included).
#include <doctest/doctest.h>
#include <rknnxx/abi/c_api.h>
#include <rknnxx/abi/c_custom_op.h>
#include <rknnxx/abi/c_matmul_api.h>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/platform.hpp>

#include <cstddef>
#include <type_traits>

// Every function of the C interface (docs/c-interface.md) has the documented signature.
#define RKNNXX_SIGNATURE(fn, ret, args) static_assert(std::is_same_v<decltype(fn), ret args>, "signature of " #fn)
#include "abi_signatures.inc"
// The plugin entry point's type (a typedef, not a function).
static_assert(std::is_same_v<get_custom_op_func, rknn_custom_op* (*)()>);
#include <cstring>
#include <string_view>

TEST_CASE("abi: limits and handle width") {
  CHECK(RKNN_MAX_DIMS == 16);
  CHECK(RKNN_MAX_NUM_CHANNEL == 15);
  CHECK(RKNN_MAX_NAME_LEN == 256);
  CHECK(RKNN_MAX_DYNAMIC_SHAPE_NUM == 512);
#if defined(__arm__) && !defined(__aarch64__)
  CHECK(sizeof(rknn_context) == 4);
#else
  CHECK(sizeof(rknn_context) == 8);
#endif
  CHECK(sizeof(rknn_matmul_ctx) == sizeof(rknn_context));
  CHECK(sizeof(rknn_custom_op_interal_context) == sizeof(rknn_context));
}

TEST_CASE("abi: sizes of the fixed-layout structs") {
  CHECK(sizeof(rknn_tensor_attr) == 376);
  CHECK(offsetof(rknn_tensor_attr, h_stride) == 372);
  CHECK(sizeof(rknn_input_range) == 33040);
  CHECK(offsetof(rknn_input_range, n_dims) == 33036);
  CHECK(sizeof(rknn_mem_size) == 64);
  CHECK(sizeof(rknn_tensor_mem) == 40);
  CHECK(sizeof(rknn_matmul_info) == 64);
  CHECK(sizeof(rknn_matmul_io_attr) == 996);
  CHECK(sizeof(rknn_custom_op_tensor) == 416);
  CHECK(sizeof(rknn_run_extend) == 24);
  CHECK(sizeof(rknn_sdk_version) == 512);
  CHECK(sizeof(rknn_custom_string) == 1024);
}

TEST_CASE("abi: query commands, including the aliased values") {
  CHECK(RKNN_QUERY_IN_OUT_NUM == 0);
  CHECK(RKNN_QUERY_NATIVE_INPUT_ATTR == 8);
  CHECK(RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR == RKNN_QUERY_NATIVE_INPUT_ATTR);
  CHECK(RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR == RKNN_QUERY_NATIVE_OUTPUT_ATTR);
  CHECK(RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR == 11);
  CHECK(RKNN_QUERY_DEVICE_MEM_INFO == 12);
  CHECK(RKNN_QUERY_INPUT_DYNAMIC_RANGE == 13);
  CHECK(RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR == 17);
  CHECK(RKNN_QUERY_CMD_MAX == 18);
}

TEST_CASE("abi: tensor types, formats, quantization, core masks, memory enums") {
  CHECK(RKNN_TENSOR_FLOAT32 == 0);
  CHECK(RKNN_TENSOR_BOOL == 9);
  CHECK(RKNN_TENSOR_INT4 == 10);
  CHECK(RKNN_TENSOR_BFLOAT16 == 11);
  CHECK(RKNN_TENSOR_TYPE_MAX == 12);
  CHECK(RKNN_TENSOR_NC1HWC2 == 2);
  CHECK(RKNN_TENSOR_FORMAT_MAX == 4);
  CHECK(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC == 2);
  CHECK(RKNN_NPU_CORE_0_1_2 == 7);
  CHECK(RKNN_NPU_CORE_ALL == 0xffff);
  CHECK(static_cast<long>(RKNN_NPU_CORE_UNDEFINED) == 0x10000);
  CHECK(RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN == 4);
  CHECK(RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM == 4);
  CHECK(RKNN_MEMORY_SYNC_BIDIRECTIONAL == 3);
}

TEST_CASE("abi: init flags") {
  CHECK(RKNN_FLAG_PRIOR_HIGH == 0);
  CHECK(RKNN_FLAG_COLLECT_PERF_MASK == 0x8);
  CHECK(RKNN_FLAG_MEM_ALLOC_OUTSIDE == 0x10);
  CHECK(RKNN_FLAG_COLLECT_MODEL_INFO_ONLY == 0x100);
  CHECK(RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY == 0x2000);
  CHECK(RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE == 0x8000);
  CHECK(RKNN_FLAG_MODEL_BUFFER_ZERO_COPY == 0x10000);
  CHECK(RKNN_MEM_FLAG_ALLOC_NO_CONTEXT == 0x20000);
}

TEST_CASE("abi: error codes, misspelt names included") {
  CHECK(RKNN_SUCC == 0);
  CHECK(RKNN_ERR_PARAM_INVALID == -5);
  CHECK(RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL == -11);
  CHECK(RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION == -12);
  CHECK(RKNN_ERR_TARGET_PLATFORM_UNMATCH == -13);
  CHECK(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE == -14);
}

TEST_CASE("abi: matmul enums") {
  CHECK(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 == 1);
  CHECK(RKNN_INT8_MM_INT4_TO_INT32 == 11);
  CHECK(RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 == 12);
  CHECK(RKNN_INT8_MM_INT4_TO_FLOAT16 == 15);
  CHECK(RKNN_QUANT_TYPE_PER_GROUP_SYM == 4);
  CHECK(RKNN_MM_LAYOUT_TP_NORM == 2);
  CHECK(std::string_view(get_matmul_type_string(RKNN_INT8_MM_INT4_TO_FLOAT16)) == "RKNN_INT8_MM_INT4_TO_FLOAT16");
}

TEST_CASE("abi: custom op defines") {
  CHECK(RKNN_CUSTOM_OP_MAX_STR_LEN == 64);
  CHECK(RKNN_CUSTOM_OP_MAX_VALUE_LEN == 32);
  CHECK(RKNN_TARGET_TYPE_GPU == 2);
  rknn_custom_op op;
  std::memset(&op, 0, sizeof op);
  CHECK(sizeof(op.op_type) == RKNN_MAX_NAME_LEN);
}

TEST_CASE("abi: the C++ enums carry the ABI values") {
  using namespace rknnxx;
  for (auto t : all_tensor_types)
    CHECK(std::string_view(get_type_string(static_cast<rknn_tensor_type>(t))) == name_of(t));
  CHECK(std::string_view(get_format_string(RKNN_TENSOR_NC1HWC2)) == name_of(TensorFormat::nc1hwc2));
  CHECK(std::string_view(get_qnt_type_string(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC)) == "AFFINE");
  CHECK(static_cast<int>(CoreMask::core_0_1) == RKNN_NPU_CORE_0_1);
  CHECK(static_cast<int>(QueryCmd::current_native_output_attr) == RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR);
  CHECK(static_cast<int>(Errc::incompatile_pre_compile_model) == RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL);
}
