/*
 * rknnxx: the matrix-multiplication C interface of the Rockchip NPU runtime, SDK v2.3.2.
 *
 * Declared by rknnxx from public facts (docs/c-interface.md, docs/matmul.md);
 * not the vendor's header. Identifiers are the vendor's so that C code written against the
 * documented interface compiles unchanged. Layouts are pinned for LP64 and 32-bit ARM.
 */
#ifndef RKNNXX_ABI_C_MATMUL_API_H
#define RKNNXX_ABI_C_MATMUL_API_H

#include <rknnxx/abi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef rknn_context rknn_matmul_ctx;

typedef enum _rknn_matmul_quant_type RKNNXX_ENUM_BASE {
  RKNN_QUANT_TYPE_PER_LAYER_SYM = 0,
  RKNN_QUANT_TYPE_PER_LAYER_ASYM = 1,
  RKNN_QUANT_TYPE_PER_CHANNEL_SYM = 2,
  RKNN_QUANT_TYPE_PER_CHANNEL_ASYM = 3,
  RKNN_QUANT_TYPE_PER_GROUP_SYM = 4,
  RKNN_QUANT_TYPE_PER_GROUP_ASYM = 5
} rknn_matmul_quant_type;

typedef struct _rknn_quant_params {
  char name[RKNN_MAX_NAME_LEN]; /* must equal io_attr.{A,B,C}.name */
  float* scale;
  int32_t scale_len;
  int32_t* zp;
  int32_t zp_len;
} rknn_quant_params;

/* A x B -> C element types; there are no values 13 or 14. */
typedef enum _rknn_matmul_type RKNNXX_ENUM_BASE {
  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 = 1,
  RKNN_INT8_MM_INT8_TO_INT32 = 2,
  RKNN_INT8_MM_INT8_TO_INT8 = 3,
  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 = 4,
  RKNN_FLOAT16_MM_INT8_TO_FLOAT32 = 5,
  RKNN_FLOAT16_MM_INT8_TO_FLOAT16 = 6,
  RKNN_FLOAT16_MM_INT4_TO_FLOAT32 = 7,
  RKNN_FLOAT16_MM_INT4_TO_FLOAT16 = 8,
  RKNN_INT8_MM_INT8_TO_FLOAT32 = 9,
  RKNN_INT4_MM_INT4_TO_INT16 = 10,
  RKNN_INT8_MM_INT4_TO_INT32 = 11,
  RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 = 12,
  RKNN_INT8_MM_INT4_TO_FLOAT16 = 15
} rknn_matmul_type;

typedef struct _rknn_matmul_tensor_attr {
  char name[RKNN_MAX_NAME_LEN];
  uint32_t n_dims;
  uint32_t dims[RKNN_MAX_DIMS];
  uint32_t size; /* bytes */
  rknn_tensor_type type;
} rknn_matmul_tensor_attr;

typedef struct _rknn_matmul_io_attr {
  rknn_matmul_tensor_attr A;
  rknn_matmul_tensor_attr B;
  rknn_matmul_tensor_attr C;
} rknn_matmul_io_attr;

typedef struct _rknn_matmul_shape {
  int32_t M;
  int32_t K;
  int32_t N;
} rknn_matmul_shape;

typedef enum RKNNXX_ENUM_BASE {
  RKNN_MM_LAYOUT_NORM = 0,
  RKNN_MM_LAYOUT_NATIVE = 1,
  RKNN_MM_LAYOUT_TP_NORM = 2 /* B only: stored transposed, N x K */
} rknn_matmul_layout;

typedef struct rknn_matmul_info_t {
  int32_t M;
  int32_t K;
  int32_t N;
  rknn_matmul_type type;
  int16_t B_layout;
  int16_t B_quant_type; /* an rknn_matmul_quant_type value */
  int16_t AC_layout;
  int16_t AC_quant_type; /* must be 0: A and C are per-layer only */
  int32_t iommu_domain_id;
  int16_t group_size;
  int8_t reserved[34];
} rknn_matmul_info;

int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr);
int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                     rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]);
int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr);
int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask);
int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params);
int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale);
int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape);
int rknn_matmul_run(rknn_matmul_ctx ctx);
int rknn_matmul_destroy(rknn_matmul_ctx ctx);
int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N, rknn_matmul_info* info);

/* Our own display helper (not exported by any runtime). */
static inline const char* get_matmul_type_string(rknn_matmul_type type) {
  switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32: return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32";
    case RKNN_INT8_MM_INT8_TO_INT32: return "RKNN_INT8_MM_INT8_TO_INT32";
    case RKNN_INT8_MM_INT8_TO_INT8: return "RKNN_INT8_MM_INT8_TO_INT8";
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16: return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32: return "RKNN_FLOAT16_MM_INT8_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16: return "RKNN_FLOAT16_MM_INT8_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32: return "RKNN_FLOAT16_MM_INT4_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16: return "RKNN_FLOAT16_MM_INT4_TO_FLOAT16";
    case RKNN_INT8_MM_INT8_TO_FLOAT32: return "RKNN_INT8_MM_INT8_TO_FLOAT32";
    case RKNN_INT4_MM_INT4_TO_INT16: return "RKNN_INT4_MM_INT4_TO_INT16";
    case RKNN_INT8_MM_INT4_TO_INT32: return "RKNN_INT8_MM_INT4_TO_INT32";
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16: return "RKNN_FLOAT16_MM_INT4_TO_BFLOAT16";
    case RKNN_INT8_MM_INT4_TO_FLOAT16: return "RKNN_INT8_MM_INT4_TO_FLOAT16";
    default: return "UNKNOW";
  }
}

/* ---- layout proofs (section 2.2) ------------------------------------------------------------ */
RKNNXX_ABI_ASSERT(sizeof(rknn_matmul_type) == 4 && sizeof(rknn_matmul_quant_type) == 4 &&
                      sizeof(rknn_matmul_layout) == 4,
                  "ABI: every matmul enum is 4 bytes");
RKNNXX_ABI_SIZE(rknn_matmul_ctx, 8, 4);

RKNNXX_ABI_SIZE(rknn_quant_params, 288, 272);
RKNNXX_ABI_FIELD(rknn_quant_params, name, 0, 0);
RKNNXX_ABI_FIELD(rknn_quant_params, scale, 256, 256);
RKNNXX_ABI_FIELD(rknn_quant_params, scale_len, 264, 260);
RKNNXX_ABI_FIELD(rknn_quant_params, zp, 272, 264);
RKNNXX_ABI_FIELD(rknn_quant_params, zp_len, 280, 268);

RKNNXX_ABI_SIZE(rknn_matmul_tensor_attr, 332, 332);
RKNNXX_ABI_FIELD(rknn_matmul_tensor_attr, name, 0, 0);
RKNNXX_ABI_FIELD(rknn_matmul_tensor_attr, n_dims, 256, 256);
RKNNXX_ABI_FIELD(rknn_matmul_tensor_attr, dims, 260, 260);
RKNNXX_ABI_FIELD(rknn_matmul_tensor_attr, size, 324, 324);
RKNNXX_ABI_FIELD(rknn_matmul_tensor_attr, type, 328, 328);

RKNNXX_ABI_SIZE(rknn_matmul_io_attr, 996, 996);
RKNNXX_ABI_FIELD(rknn_matmul_io_attr, A, 0, 0);
RKNNXX_ABI_FIELD(rknn_matmul_io_attr, B, 332, 332);
RKNNXX_ABI_FIELD(rknn_matmul_io_attr, C, 664, 664);

RKNNXX_ABI_SIZE(rknn_matmul_shape, 12, 12);
RKNNXX_ABI_FIELD(rknn_matmul_shape, M, 0, 0);
RKNNXX_ABI_FIELD(rknn_matmul_shape, K, 4, 4);
RKNNXX_ABI_FIELD(rknn_matmul_shape, N, 8, 8);

RKNNXX_ABI_SIZE(rknn_matmul_info, 64, 64);
RKNNXX_ABI_FIELD(rknn_matmul_info, M, 0, 0);
RKNNXX_ABI_FIELD(rknn_matmul_info, K, 4, 4);
RKNNXX_ABI_FIELD(rknn_matmul_info, N, 8, 8);
RKNNXX_ABI_FIELD(rknn_matmul_info, type, 12, 12);
RKNNXX_ABI_FIELD(rknn_matmul_info, B_layout, 16, 16);
RKNNXX_ABI_FIELD(rknn_matmul_info, B_quant_type, 18, 18);
RKNNXX_ABI_FIELD(rknn_matmul_info, AC_layout, 20, 20);
RKNNXX_ABI_FIELD(rknn_matmul_info, AC_quant_type, 22, 22);
RKNNXX_ABI_FIELD(rknn_matmul_info, iommu_domain_id, 24, 24);
RKNNXX_ABI_FIELD(rknn_matmul_info, group_size, 28, 28);
RKNNXX_ABI_FIELD(rknn_matmul_info, reserved, 30, 30);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RKNNXX_ABI_C_MATMUL_API_H */
