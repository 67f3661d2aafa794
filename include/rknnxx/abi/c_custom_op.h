/*
 * rknnxx: the custom-operator C interface of the Rockchip NPU runtime, SDK v2.3.2.
 *
 * Declared by rknnxx from public facts (docs/c-interface.md);
 * not the vendor's header. Identifiers are the vendor's (including the misspelt
 * rknn_custom_op_interal_context) so that C code written against the documented interface
 * compiles unchanged. Layouts are pinned for LP64 and 32-bit ARM.
 */
#ifndef RKNNXX_ABI_C_CUSTOM_OP_H
#define RKNNXX_ABI_C_CUSTOM_OP_H

#include <rknnxx/abi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by an op's init callback: use RKNN's own implementation of the op type instead. */
#define RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE -14

#define RKNN_CUSTOM_OP_MAX_STR_LEN 64
#define RKNN_CUSTOM_OP_MAX_VALUE_LEN 32
#define RKNN_CUSTOM_OP_EXPORT __attribute__((visibility("default")))

#if defined(__arm__) && !defined(__aarch64__)
typedef uint32_t rknn_custom_op_interal_context;
#else
typedef uint64_t rknn_custom_op_interal_context;
#endif

typedef enum _rknn_target_type RKNNXX_ENUM_BASE {
  RKNN_TARGET_TYPE_CPU = 1,
  RKNN_TARGET_TYPE_GPU = 2,
  RKNN_TARGET_TYPE_MAX = 3
} rknn_target_type;

/* OpenCL objects as opaque pointers: cast them to cl_context, cl_command_queue, cl_kernel. */
typedef struct _rknn_gpu_op_context {
  void* cl_context;
  void* cl_command_queue;
  void* cl_kernel;
} rknn_gpu_op_context;

typedef struct _rknn_custom_op_context {
  rknn_target_type target;
  rknn_custom_op_interal_context internal_ctx;
  rknn_gpu_op_context gpu_ctx;
  void* priv_data;
} rknn_custom_op_context;

typedef struct _rknn_custom_op_tensor {
  rknn_tensor_attr attr;
  rknn_tensor_mem mem; /* data at mem.virt_addr + mem.offset */
} rknn_custom_op_tensor;

typedef struct _rknn_custom_op_attr {
  char name[RKNN_MAX_NAME_LEN];
  rknn_tensor_type dtype;
  uint32_t n_elems;
  void* data;
} rknn_custom_op_attr;

typedef struct _rknn_custom_op {
  uint32_t version;
  rknn_target_type target;
  char op_type[RKNN_MAX_NAME_LEN];
  char cl_kernel_name[RKNN_MAX_NAME_LEN];
  char* cl_kernel_source; /* source text if cl_source_size > 0, else a file path */
  uint64_t cl_source_size;
  char cl_build_options[RKNN_MAX_NAME_LEN];
  int (*init)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
              rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  int (*prepare)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                 rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  int (*compute)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                 rknn_custom_op_tensor* outputs, uint32_t n_outputs);
  int (*compute_native)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                        rknn_custom_op_tensor* outputs, uint32_t n_outputs); /* unsupported: NULL */
  int (*destroy)(rknn_custom_op_context* op_ctx);
} rknn_custom_op;

/* The entry point a custom-op plugin library exports (get_rknn_custom_op in the demos). */
typedef rknn_custom_op* (*get_custom_op_func)(void);

int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num);
void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name, rknn_custom_op_attr* op_attr);

/* ---- layout proofs (section 2.3) ------------------------------------------------------------ */
RKNNXX_ABI_ASSERT(sizeof(rknn_target_type) == 4, "ABI: rknn_target_type is 4 bytes");
RKNNXX_ABI_SIZE(rknn_custom_op_interal_context, 8, 4);

RKNNXX_ABI_SIZE(rknn_gpu_op_context, 24, 12);
RKNNXX_ABI_FIELD(rknn_gpu_op_context, cl_context, 0, 0);
RKNNXX_ABI_FIELD(rknn_gpu_op_context, cl_command_queue, 8, 4);
RKNNXX_ABI_FIELD(rknn_gpu_op_context, cl_kernel, 16, 8);

RKNNXX_ABI_SIZE(rknn_custom_op_context, 48, 24);
RKNNXX_ABI_FIELD(rknn_custom_op_context, target, 0, 0);
RKNNXX_ABI_FIELD(rknn_custom_op_context, internal_ctx, 8, 4);
RKNNXX_ABI_FIELD(rknn_custom_op_context, gpu_ctx, 16, 8);
RKNNXX_ABI_FIELD(rknn_custom_op_context, priv_data, 40, 20);

RKNNXX_ABI_SIZE(rknn_custom_op_tensor, 416, 416);
RKNNXX_ABI_FIELD(rknn_custom_op_tensor, attr, 0, 0);
RKNNXX_ABI_FIELD(rknn_custom_op_tensor, mem, 376, 376);

RKNNXX_ABI_SIZE(rknn_custom_op_attr, 272, 268);
RKNNXX_ABI_FIELD(rknn_custom_op_attr, name, 0, 0);
RKNNXX_ABI_FIELD(rknn_custom_op_attr, dtype, 256, 256);
RKNNXX_ABI_FIELD(rknn_custom_op_attr, n_elems, 260, 260);
RKNNXX_ABI_FIELD(rknn_custom_op_attr, data, 264, 264);

RKNNXX_ABI_SIZE(rknn_custom_op, 832, 816);
RKNNXX_ABI_FIELD(rknn_custom_op, version, 0, 0);
RKNNXX_ABI_FIELD(rknn_custom_op, target, 4, 4);
RKNNXX_ABI_FIELD(rknn_custom_op, op_type, 8, 8);
RKNNXX_ABI_FIELD(rknn_custom_op, cl_kernel_name, 264, 264);
RKNNXX_ABI_FIELD(rknn_custom_op, cl_kernel_source, 520, 520);
RKNNXX_ABI_FIELD(rknn_custom_op, cl_source_size, 528, 528);
RKNNXX_ABI_FIELD(rknn_custom_op, cl_build_options, 536, 536);
RKNNXX_ABI_FIELD(rknn_custom_op, init, 792, 792);
RKNNXX_ABI_FIELD(rknn_custom_op, prepare, 800, 796);
RKNNXX_ABI_FIELD(rknn_custom_op, compute, 808, 800);
RKNNXX_ABI_FIELD(rknn_custom_op, compute_native, 816, 804);
RKNNXX_ABI_FIELD(rknn_custom_op, destroy, 824, 808);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RKNNXX_ABI_C_CUSTOM_OP_H */
