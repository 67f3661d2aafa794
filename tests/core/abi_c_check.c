/* A C11 program against the ABI headers: proves they are plain C and that C code written against
 * the vendor's documented identifiers compiles unchanged. Prints its own "N passed, N failed". */
#include <rknnxx/abi/c_api.h>
#include <rknnxx/abi/c_custom_op.h>
#include <rknnxx/abi/c_matmul_api.h>

#include <stdio.h>
#include <string.h>

/* _Generic does not evaluate its operand: the function is named, never referenced for linking. */
#define RKNNXX_SIGNATURE(fn, ret, args) _Static_assert(_Generic((fn), ret(*) args: 1, default: 0), "signature of " #fn)
#include "abi_signatures.inc"

static int passed, failed;
static void check(int ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("failed: %s\n", what);
  }
}

int main(void) {
  rknn_tensor_attr attr;
  rknn_input_range range;
  rknn_matmul_info info;
  rknn_custom_op op;
  memset(&attr, 0, sizeof attr);
  memset(&range, 0, sizeof range);
  memset(&info, 0, sizeof info);
  memset(&op, 0, sizeof op);
  attr.index = 0;
  attr.fmt = RKNN_TENSOR_NHWC;
  attr.type = RKNN_TENSOR_INT8;
  attr.qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  op.target = RKNN_TARGET_TYPE_CPU;
  check(sizeof attr == 376, "sizeof(rknn_tensor_attr) == 376");
  check(sizeof range == 33040, "sizeof(rknn_input_range) == 33040");
  check(sizeof info == 64, "sizeof(rknn_matmul_info) == 64");
  check(sizeof op == (sizeof(void*) == 8 ? 832u : 816u), "sizeof(rknn_custom_op)");
  check(strcmp(get_format_string(attr.fmt), "NHWC") == 0, "get_format_string(NHWC)");
  check(strcmp(get_type_string(attr.type), "INT8") == 0, "get_type_string(INT8)");
  check(strcmp(get_qnt_type_string(attr.qnt_type), "AFFINE") == 0, "get_qnt_type_string(AFFINE)");
  check(strcmp(get_type_string(RKNN_TENSOR_BFLOAT16), "BF16") == 0, "get_type_string(BF16)");
  check(strcmp(get_matmul_type_string(info.type), "RKNN_INT8_MM_INT8_TO_INT32") == 0, "get_matmul_type_string");
  check(RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR == RKNN_QUERY_NATIVE_OUTPUT_ATTR, "NC1HWC2 query alias");
  check(RKNN_NPU_CORE_UNDEFINED == 0x10000, "RKNN_NPU_CORE_UNDEFINED follows ALL");
  check(_Generic(rknn_init, int (*)(rknn_context*, void*, uint32_t, uint32_t, rknn_init_extend*): 1, default: 0),
        "rknn_init has the documented signature");
  check(_Generic(rknn_init, int (*)(rknn_context*, void*, uint32_t, uint32_t, void*): 1, default: 0) == 0,
        "a wrong signature is told apart (the check can fail)");
  printf("abi_c: %d passed, %d failed\n", passed, failed);
  return failed != 0;
}
