/*
 * rknnxx: the C interface of the Rockchip NPU runtime (librknnrt.so / librknnmrt.so), SDK v2.3.2.
 *
 * Declared by rknnxx from public facts (identifier names, numeric values, field order and measured
 * byte layouts, written down in docs/c-interface.md); it is not the vendor's header and
 * contains none of its text. The identifiers are the vendor's, because C programs written against
 * the documented interface must compile against this header unchanged.
 *
 * Usable from C11 and C++. Every struct layout is pinned below with static assertions for LP64
 * (aarch64, x86-64) and for 32-bit ARM (__arm__, where rknn_context is 32 bits): a mismatch with
 * the runtime's ABI does not compile.
 */
#ifndef RKNNXX_ABI_C_API_H
#define RKNNXX_ABI_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ABI self-check machinery -------------------------------------------------------------- */
#ifdef __cplusplus
#define RKNNXX_ABI_ASSERT(cond, what) static_assert(cond, what)
#else
#define RKNNXX_ABI_ASSERT(cond, what) _Static_assert(cond, what)
#endif

/* The two ABIs whose layouts were measured; elsewhere only the ABI-independent facts are checked. */
#if defined(__arm__) && !defined(__aarch64__)
#define RKNNXX_ABI_A32 1
#define RKNNXX_ABI_PICK(lp64, a32) (a32)
#elif defined(__LP64__) || defined(_LP64)
#define RKNNXX_ABI_LP64 1
#define RKNNXX_ABI_PICK(lp64, a32) (lp64)
#endif

#ifdef RKNNXX_ABI_PICK
/* Pins one field: its offset on LP64 and on 32-bit ARM. */
#define RKNNXX_ABI_FIELD(type, field, lp64, a32)                                                                       \
  RKNNXX_ABI_ASSERT(offsetof(type, field) == RKNNXX_ABI_PICK(lp64, a32), "ABI: offset of " #type "." #field)
#define RKNNXX_ABI_SIZE(type, lp64, a32)                                                                               \
  RKNNXX_ABI_ASSERT(sizeof(type) == RKNNXX_ABI_PICK(lp64, a32), "ABI: sizeof(" #type ")")
#else
#define RKNNXX_ABI_FIELD(type, field, lp64, a32) RKNNXX_ABI_ASSERT(1, "unmeasured ABI")
#define RKNNXX_ABI_SIZE(type, lp64, a32) RKNNXX_ABI_ASSERT(1, "unmeasured ABI")
#endif

/* In C++ every enum gets, explicitly, the underlying type C gives it (unsigned int: no value is
 * negative). Same size and ABI; and any value a C caller passes is then a valid value of the enum
 * type, so an implementation that checks it reads no out-of-range enum (undefined behaviour). */
#ifdef __cplusplus
#define RKNNXX_ENUM_BASE : unsigned int
#else
#define RKNNXX_ENUM_BASE
#endif

/* ---- basic types and limits (docs/c-interface.md) ------------------------------------------------ */
#if defined(__arm__) && !defined(__aarch64__)
typedef uint32_t rknn_context;
#else
typedef uint64_t rknn_context;
#endif

#define RKNN_MAX_DIMS 16
#define RKNN_MAX_NUM_CHANNEL 15
#define RKNN_MAX_NAME_LEN 256
#define RKNN_MAX_DYNAMIC_SHAPE_NUM 512

/* ---- return codes (section 3.1); the misspelt names are the runtime's own ---------------------- */
#define RKNN_SUCC 0
#define RKNN_ERR_FAIL -1
#define RKNN_ERR_TIMEOUT -2
#define RKNN_ERR_DEVICE_UNAVAILABLE -3
#define RKNN_ERR_MALLOC_FAIL -4
#define RKNN_ERR_PARAM_INVALID -5
#define RKNN_ERR_MODEL_INVALID -6
#define RKNN_ERR_CTX_INVALID -7
#define RKNN_ERR_INPUT_INVALID -8
#define RKNN_ERR_OUTPUT_INVALID -9
#define RKNN_ERR_DEVICE_UNMATCH -10
#define RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL -11
#define RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION -12
#define RKNN_ERR_TARGET_PLATFORM_UNMATCH -13

/* ---- flags of rknn_init (section 3.2) ------------------------------------------------------- */
#define RKNN_FLAG_PRIOR_HIGH 0x00000000
#define RKNN_FLAG_PRIOR_MEDIUM 0x00000001
#define RKNN_FLAG_PRIOR_LOW 0x00000002
#define RKNN_FLAG_ASYNC_MASK 0x00000004
#define RKNN_FLAG_COLLECT_PERF_MASK 0x00000008
#define RKNN_FLAG_MEM_ALLOC_OUTSIDE 0x00000010
#define RKNN_FLAG_SHARE_WEIGHT_MEM 0x00000020
#define RKNN_FLAG_FENCE_IN_OUTSIDE 0x00000040
#define RKNN_FLAG_FENCE_OUT_OUTSIDE 0x00000080
#define RKNN_FLAG_COLLECT_MODEL_INFO_ONLY 0x00000100
#define RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE 0x00000200
#define RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU 0x00000400
#define RKNN_FLAG_ENABLE_SRAM 0x00000800
#define RKNN_FLAG_SHARE_SRAM 0x00001000
#define RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY 0x00002000
#define RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE 0x00004000
#define RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE 0x00008000
#define RKNN_FLAG_MODEL_BUFFER_ZERO_COPY 0x00010000
/* A flag for rknn_create_mem2's alloc_flags, not for rknn_init: allows ctx == 0. */
#define RKNN_MEM_FLAG_ALLOC_NO_CONTEXT 0x00020000

/* ---- enums (sections 3.3 to 3.8); every one is a plain 4-byte C enum ---------------------- */
typedef enum _rknn_query_cmd RKNNXX_ENUM_BASE {
  RKNN_QUERY_IN_OUT_NUM = 0,
  RKNN_QUERY_INPUT_ATTR = 1,
  RKNN_QUERY_OUTPUT_ATTR = 2,
  RKNN_QUERY_PERF_DETAIL = 3,
  RKNN_QUERY_PERF_RUN = 4,
  RKNN_QUERY_SDK_VERSION = 5,
  RKNN_QUERY_MEM_SIZE = 6,
  RKNN_QUERY_CUSTOM_STRING = 7,
  RKNN_QUERY_NATIVE_INPUT_ATTR = 8,
  RKNN_QUERY_NATIVE_OUTPUT_ATTR = 9,
  RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR = 8,  /* alias of NATIVE_INPUT_ATTR */
  RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR = 9, /* alias of NATIVE_OUTPUT_ATTR */
  RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR = 10,
  RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR = 11,
  RKNN_QUERY_DEVICE_MEM_INFO = 12,
  RKNN_QUERY_INPUT_DYNAMIC_RANGE = 13,
  RKNN_QUERY_CURRENT_INPUT_ATTR = 14,
  RKNN_QUERY_CURRENT_OUTPUT_ATTR = 15,
  RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR = 16,
  RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR = 17,
  RKNN_QUERY_CMD_MAX = 18
} rknn_query_cmd;

typedef enum _rknn_tensor_type RKNNXX_ENUM_BASE {
  RKNN_TENSOR_FLOAT32 = 0,
  RKNN_TENSOR_FLOAT16 = 1,
  RKNN_TENSOR_INT8 = 2,
  RKNN_TENSOR_UINT8 = 3,
  RKNN_TENSOR_INT16 = 4,
  RKNN_TENSOR_UINT16 = 5,
  RKNN_TENSOR_INT32 = 6,
  RKNN_TENSOR_UINT32 = 7,
  RKNN_TENSOR_INT64 = 8,
  RKNN_TENSOR_BOOL = 9,
  RKNN_TENSOR_INT4 = 10,
  RKNN_TENSOR_BFLOAT16 = 11,
  RKNN_TENSOR_TYPE_MAX = 12
} rknn_tensor_type;

typedef enum _rknn_tensor_qnt_type RKNNXX_ENUM_BASE {
  RKNN_TENSOR_QNT_NONE = 0,
  RKNN_TENSOR_QNT_DFP = 1,
  RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC = 2,
  RKNN_TENSOR_QNT_MAX = 3
} rknn_tensor_qnt_type;

typedef enum _rknn_tensor_format RKNNXX_ENUM_BASE {
  RKNN_TENSOR_NCHW = 0,
  RKNN_TENSOR_NHWC = 1,
  RKNN_TENSOR_NC1HWC2 = 2,
  RKNN_TENSOR_UNDEFINED = 3,
  RKNN_TENSOR_FORMAT_MAX = 4
} rknn_tensor_format;

typedef enum _rknn_core_mask RKNNXX_ENUM_BASE {
  RKNN_NPU_CORE_AUTO = 0,
  RKNN_NPU_CORE_0 = 1,
  RKNN_NPU_CORE_1 = 2,
  RKNN_NPU_CORE_2 = 4,
  RKNN_NPU_CORE_0_1 = 3,
  RKNN_NPU_CORE_0_1_2 = 7,
  RKNN_NPU_CORE_ALL = 0xffff,
  RKNN_NPU_CORE_UNDEFINED = 0x10000 /* follows ALL */
} rknn_core_mask;

typedef enum _rknn_tensor_mem_flags RKNNXX_ENUM_BASE {
  RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE = 1,
  RKNN_TENSOR_MEMORY_FLAGS_FROM_FD = 2,
  RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS = 3,
  RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN = 4
} rknn_tensor_mem_flags;

typedef enum _rknn_mem_alloc_flags RKNNXX_ENUM_BASE {
  RKNN_FLAG_MEMORY_FLAGS_DEFAULT = 0,
  RKNN_FLAG_MEMORY_CACHEABLE = 1,
  RKNN_FLAG_MEMORY_NON_CACHEABLE = 2,
  RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM = 4
} rknn_mem_alloc_flags;

typedef enum _rknn_mem_sync_mode RKNNXX_ENUM_BASE {
  RKNN_MEMORY_SYNC_TO_DEVICE = 1,
  RKNN_MEMORY_SYNC_FROM_DEVICE = 2,
  RKNN_MEMORY_SYNC_BIDIRECTIONAL = 3
} rknn_mem_sync_mode;

/* ---- structs (section 2.1), natural alignment, no packing ---------------------------------- */
typedef struct _rknn_input_output_num {
  uint32_t n_input;
  uint32_t n_output;
} rknn_input_output_num;

typedef struct _rknn_tensor_attr {
  uint32_t index; /* set by the caller before rknn_query */
  uint32_t n_dims;
  uint32_t dims[RKNN_MAX_DIMS];
  char name[RKNN_MAX_NAME_LEN];
  uint32_t n_elems;
  uint32_t size; /* bytes without stride padding */
  rknn_tensor_format fmt;
  rknn_tensor_type type;
  rknn_tensor_qnt_type qnt_type;
  int8_t fl;
  int32_t zp;
  float scale;
  uint32_t w_stride;         /* read-only; 0 means equal to the width */
  uint32_t size_with_stride; /* bytes including stride padding */
  uint8_t pass_through;
  uint32_t h_stride; /* written by the caller; 0 means equal to the height */
} rknn_tensor_attr;

typedef struct _rknn_input_range {
  uint32_t index;
  uint32_t shape_number;
  rknn_tensor_format fmt;
  char name[RKNN_MAX_NAME_LEN];
  uint32_t dyn_range[RKNN_MAX_DYNAMIC_SHAPE_NUM][RKNN_MAX_DIMS]; /* [shape][dim] */
  uint32_t n_dims;
} rknn_input_range;

typedef struct _rknn_perf_detail {
  char* perf_data; /* owned by the runtime: never free it */
  uint64_t data_len;
} rknn_perf_detail;

typedef struct _rknn_perf_run {
  int64_t run_duration; /* microseconds */
} rknn_perf_run;

typedef struct _rknn_sdk_version {
  char api_version[256];
  char drv_version[256];
} rknn_sdk_version;

typedef struct _rknn_mem_size {
  uint32_t total_weight_size;
  uint32_t total_internal_size;
  uint64_t total_dma_allocated_size;
  uint32_t total_sram_size;
  uint32_t free_sram_size;
  uint32_t reserved[10];
} rknn_mem_size;

typedef struct _rknn_custom_string {
  char string[1024];
} rknn_custom_string;

typedef struct _rknn_tensor_memory {
  void* virt_addr;
  uint64_t phys_addr;
  int32_t fd;
  int32_t offset;
  uint32_t size;
  uint32_t flags;
  void* priv_data;
} rknn_tensor_mem;

typedef struct _rknn_input {
  uint32_t index;
  void* buf;
  uint32_t size;
  uint8_t pass_through;
  rknn_tensor_type type;
  rknn_tensor_format fmt;
} rknn_input;

typedef struct _rknn_output {
  uint8_t want_float;
  uint8_t is_prealloc;
  uint32_t index;
  void* buf;
  uint32_t size;
} rknn_output;

typedef struct _rknn_init_extend {
  rknn_context ctx;
  int32_t real_model_offset;
  uint32_t real_model_size;
  int32_t model_buffer_fd;
  uint32_t model_buffer_flags;
  uint8_t reserved[112];
} rknn_init_extend;

typedef struct _rknn_run_extend {
  uint64_t frame_id;
  int32_t non_block;
  int32_t timeout_ms;
  int32_t fence_fd;
} rknn_run_extend;

typedef struct _rknn_output_extend {
  uint64_t frame_id;
} rknn_output_extend;

/* ---- functions (section 1.1); int results are RKNN_SUCC or a negative RKNN_ERR_* ------------- */
int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag, rknn_init_extend* extend);
int rknn_dup_context(rknn_context* context_in, rknn_context* context_out);
int rknn_destroy(rknn_context context);
int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size);
int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]);
int rknn_set_batch_core_num(rknn_context context, int core_num);
int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask);
int rknn_run(rknn_context context, rknn_run_extend* extend);
int rknn_wait(rknn_context context, rknn_run_extend* extend);
int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[], rknn_output_extend* extend);
int rknn_outputs_release(rknn_context context, uint32_t n_ouputs, rknn_output outputs[]);
rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr, void* virt_addr, uint32_t size);
rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr, uint32_t size, int32_t offset);
rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk, int32_t offset);
rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size);
rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags);
int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem);
int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem);
int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem);
int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr);
int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr);
int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]);
int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode);

/* ---- display names (our own helpers; not exported by any runtime) --------------------------- */
static inline const char* get_type_string(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32: return "FP32";
    case RKNN_TENSOR_FLOAT16: return "FP16";
    case RKNN_TENSOR_INT8: return "INT8";
    case RKNN_TENSOR_UINT8: return "UINT8";
    case RKNN_TENSOR_INT16: return "INT16";
    case RKNN_TENSOR_UINT16: return "UINT16";
    case RKNN_TENSOR_INT32: return "INT32";
    case RKNN_TENSOR_UINT32: return "UINT32";
    case RKNN_TENSOR_INT64: return "INT64";
    case RKNN_TENSOR_BOOL: return "BOOL";
    case RKNN_TENSOR_INT4: return "INT4";
    case RKNN_TENSOR_BFLOAT16: return "BF16";
    default: return "UNKNOW";
  }
}

static inline const char* get_qnt_type_string(rknn_tensor_qnt_type type) {
  switch (type) {
    case RKNN_TENSOR_QNT_NONE: return "NONE";
    case RKNN_TENSOR_QNT_DFP: return "DFP";
    case RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC: return "AFFINE";
    default: return "UNKNOW";
  }
}

static inline const char* get_format_string(rknn_tensor_format fmt) {
  switch (fmt) {
    case RKNN_TENSOR_NCHW: return "NCHW";
    case RKNN_TENSOR_NHWC: return "NHWC";
    case RKNN_TENSOR_NC1HWC2: return "NC1HWC2";
    case RKNN_TENSOR_UNDEFINED: return "UNDEFINED";
    default: return "UNKNOW";
  }
}

/* ---- layout proofs (section 2.1, measured with clang -fdump-record-layouts) ---------------- */
RKNNXX_ABI_ASSERT(sizeof(rknn_query_cmd) == 4 && sizeof(rknn_tensor_type) == 4 && sizeof(rknn_core_mask) == 4 &&
                      sizeof(rknn_tensor_format) == 4 && sizeof(rknn_tensor_qnt_type) == 4 &&
                      sizeof(rknn_mem_sync_mode) == 4 && sizeof(rknn_tensor_mem_flags) == 4 &&
                      sizeof(rknn_mem_alloc_flags) == 4,
                  "ABI: every enum is 4 bytes");
RKNNXX_ABI_SIZE(rknn_context, 8, 4);

RKNNXX_ABI_SIZE(rknn_input_output_num, 8, 8);
RKNNXX_ABI_FIELD(rknn_input_output_num, n_input, 0, 0);
RKNNXX_ABI_FIELD(rknn_input_output_num, n_output, 4, 4);

RKNNXX_ABI_SIZE(rknn_tensor_attr, 376, 376);
RKNNXX_ABI_FIELD(rknn_tensor_attr, index, 0, 0);
RKNNXX_ABI_FIELD(rknn_tensor_attr, n_dims, 4, 4);
RKNNXX_ABI_FIELD(rknn_tensor_attr, dims, 8, 8);
RKNNXX_ABI_FIELD(rknn_tensor_attr, name, 72, 72);
RKNNXX_ABI_FIELD(rknn_tensor_attr, n_elems, 328, 328);
RKNNXX_ABI_FIELD(rknn_tensor_attr, size, 332, 332);
RKNNXX_ABI_FIELD(rknn_tensor_attr, fmt, 336, 336);
RKNNXX_ABI_FIELD(rknn_tensor_attr, type, 340, 340);
RKNNXX_ABI_FIELD(rknn_tensor_attr, qnt_type, 344, 344);
RKNNXX_ABI_FIELD(rknn_tensor_attr, fl, 348, 348);
RKNNXX_ABI_FIELD(rknn_tensor_attr, zp, 352, 352);
RKNNXX_ABI_FIELD(rknn_tensor_attr, scale, 356, 356);
RKNNXX_ABI_FIELD(rknn_tensor_attr, w_stride, 360, 360);
RKNNXX_ABI_FIELD(rknn_tensor_attr, size_with_stride, 364, 364);
RKNNXX_ABI_FIELD(rknn_tensor_attr, pass_through, 368, 368);
RKNNXX_ABI_FIELD(rknn_tensor_attr, h_stride, 372, 372);

RKNNXX_ABI_SIZE(rknn_input_range, 33040, 33040);
RKNNXX_ABI_FIELD(rknn_input_range, index, 0, 0);
RKNNXX_ABI_FIELD(rknn_input_range, shape_number, 4, 4);
RKNNXX_ABI_FIELD(rknn_input_range, fmt, 8, 8);
RKNNXX_ABI_FIELD(rknn_input_range, name, 12, 12);
RKNNXX_ABI_FIELD(rknn_input_range, dyn_range, 268, 268);
RKNNXX_ABI_FIELD(rknn_input_range, n_dims, 33036, 33036);

RKNNXX_ABI_SIZE(rknn_perf_detail, 16, 16);
RKNNXX_ABI_FIELD(rknn_perf_detail, perf_data, 0, 0);
RKNNXX_ABI_FIELD(rknn_perf_detail, data_len, 8, 8);

RKNNXX_ABI_SIZE(rknn_perf_run, 8, 8);
RKNNXX_ABI_FIELD(rknn_perf_run, run_duration, 0, 0);

RKNNXX_ABI_SIZE(rknn_sdk_version, 512, 512);
RKNNXX_ABI_FIELD(rknn_sdk_version, api_version, 0, 0);
RKNNXX_ABI_FIELD(rknn_sdk_version, drv_version, 256, 256);

RKNNXX_ABI_SIZE(rknn_mem_size, 64, 64);
RKNNXX_ABI_FIELD(rknn_mem_size, total_weight_size, 0, 0);
RKNNXX_ABI_FIELD(rknn_mem_size, total_internal_size, 4, 4);
RKNNXX_ABI_FIELD(rknn_mem_size, total_dma_allocated_size, 8, 8);
RKNNXX_ABI_FIELD(rknn_mem_size, total_sram_size, 16, 16);
RKNNXX_ABI_FIELD(rknn_mem_size, free_sram_size, 20, 20);
RKNNXX_ABI_FIELD(rknn_mem_size, reserved, 24, 24);

RKNNXX_ABI_SIZE(rknn_custom_string, 1024, 1024);
RKNNXX_ABI_FIELD(rknn_custom_string, string, 0, 0);

RKNNXX_ABI_SIZE(rknn_tensor_mem, 40, 40);
RKNNXX_ABI_FIELD(rknn_tensor_mem, virt_addr, 0, 0);
RKNNXX_ABI_FIELD(rknn_tensor_mem, phys_addr, 8, 8);
RKNNXX_ABI_FIELD(rknn_tensor_mem, fd, 16, 16);
RKNNXX_ABI_FIELD(rknn_tensor_mem, offset, 20, 20);
RKNNXX_ABI_FIELD(rknn_tensor_mem, size, 24, 24);
RKNNXX_ABI_FIELD(rknn_tensor_mem, flags, 28, 28);
RKNNXX_ABI_FIELD(rknn_tensor_mem, priv_data, 32, 32);

RKNNXX_ABI_SIZE(rknn_input, 32, 24);
RKNNXX_ABI_FIELD(rknn_input, index, 0, 0);
RKNNXX_ABI_FIELD(rknn_input, buf, 8, 4);
RKNNXX_ABI_FIELD(rknn_input, size, 16, 8);
RKNNXX_ABI_FIELD(rknn_input, pass_through, 20, 12);
RKNNXX_ABI_FIELD(rknn_input, type, 24, 16);
RKNNXX_ABI_FIELD(rknn_input, fmt, 28, 20);

RKNNXX_ABI_SIZE(rknn_output, 24, 16);
RKNNXX_ABI_FIELD(rknn_output, want_float, 0, 0);
RKNNXX_ABI_FIELD(rknn_output, is_prealloc, 1, 1);
RKNNXX_ABI_FIELD(rknn_output, index, 4, 4);
RKNNXX_ABI_FIELD(rknn_output, buf, 8, 8);
RKNNXX_ABI_FIELD(rknn_output, size, 16, 12);

RKNNXX_ABI_SIZE(rknn_init_extend, 136, 132);
RKNNXX_ABI_FIELD(rknn_init_extend, ctx, 0, 0);
RKNNXX_ABI_FIELD(rknn_init_extend, real_model_offset, 8, 4);
RKNNXX_ABI_FIELD(rknn_init_extend, real_model_size, 12, 8);
RKNNXX_ABI_FIELD(rknn_init_extend, model_buffer_fd, 16, 12);
RKNNXX_ABI_FIELD(rknn_init_extend, model_buffer_flags, 20, 16);
RKNNXX_ABI_FIELD(rknn_init_extend, reserved, 24, 20);

RKNNXX_ABI_SIZE(rknn_run_extend, 24, 24);
RKNNXX_ABI_FIELD(rknn_run_extend, frame_id, 0, 0);
RKNNXX_ABI_FIELD(rknn_run_extend, non_block, 8, 8);
RKNNXX_ABI_FIELD(rknn_run_extend, timeout_ms, 12, 12);
RKNNXX_ABI_FIELD(rknn_run_extend, fence_fd, 16, 16);

RKNNXX_ABI_SIZE(rknn_output_extend, 8, 8);
RKNNXX_ABI_FIELD(rknn_output_extend, frame_id, 0, 0);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RKNNXX_ABI_C_API_H */
