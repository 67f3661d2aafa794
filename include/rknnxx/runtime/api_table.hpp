#pragma once
// The C interface of a runtime as a table of function pointers, filled at run time by dlsym from
// whichever runtime the loader opened (vendor librknnrt.so / librknnmrt.so, or the host runtime).
// The pointer types are those of our own ABI declaration (rknnxx/abi), so a signature that drifts
// from it does not compile. Nothing here links against a runtime.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/abi/c_custom_op.h>
#include <rknnxx/abi/c_matmul_api.h>

#include <array>
#include <string_view>

namespace rknnxx {

// X(name, required): `required` functions exist in every runtime rknnxx supports (SDK >= 1.6.0,
// the first with rknn_mem_sync); the others may be missing (older SDKs, the RV110x runtime, the
// Android HIDL wrapper) and are null then; calling a null one is reported by Context as
// "not provided by the runtime".
#define RKNNXX_API_FUNCTIONS(X)                                                                                        \
  X(rknn_init, true)                                                                                                   \
  X(rknn_dup_context, false)                                                                                           \
  X(rknn_destroy, true)                                                                                                \
  X(rknn_query, true)                                                                                                  \
  X(rknn_inputs_set, false)                                                                                            \
  X(rknn_set_batch_core_num, false)                                                                                    \
  X(rknn_set_core_mask, false)                                                                                         \
  X(rknn_run, true)                                                                                                    \
  X(rknn_wait, false)                                                                                                  \
  X(rknn_outputs_get, false)                                                                                           \
  X(rknn_outputs_release, false)                                                                                       \
  X(rknn_create_mem_from_phys, true)                                                                                   \
  X(rknn_create_mem_from_fd, false)                                                                                    \
  X(rknn_create_mem_from_mb_blk, false)                                                                                \
  X(rknn_create_mem, true)                                                                                             \
  X(rknn_create_mem2, false)                                                                                           \
  X(rknn_destroy_mem, true)                                                                                            \
  X(rknn_set_weight_mem, true)                                                                                         \
  X(rknn_set_internal_mem, true)                                                                                       \
  X(rknn_set_io_mem, true)                                                                                             \
  X(rknn_set_input_shape, false)                                                                                       \
  X(rknn_set_input_shapes, false)                                                                                      \
  X(rknn_mem_sync, true)                                                                                               \
  X(rknn_matmul_create, false)                                                                                         \
  X(rknn_matmul_create_dynamic_shape, false)                                                                           \
  X(rknn_matmul_set_io_mem, false)                                                                                     \
  X(rknn_matmul_set_core_mask, false)                                                                                  \
  X(rknn_matmul_set_quant_params, false)                                                                               \
  X(rknn_matmul_get_quant_params, false)                                                                               \
  X(rknn_matmul_set_dynamic_shape, false)                                                                              \
  X(rknn_matmul_run, false)                                                                                            \
  X(rknn_matmul_destroy, false)                                                                                        \
  X(rknn_B_normal_layout_to_native_layout, false)                                                                      \
  X(rknn_register_custom_ops, false)                                                                                   \
  X(rknn_custom_op_get_op_attr, false)

// One pointer per function of the C interface, named as the function (rknn_init -> init is not
// done on purpose: grep finds every call of rknn_query as `api.rknn_query(`).
struct ApiTable {
#define RKNNXX_API_FIELD(name, required) decltype(&::name) name = nullptr;
  RKNNXX_API_FUNCTIONS(RKNNXX_API_FIELD)
#undef RKNNXX_API_FIELD

  // rknnxx extensions a runtime may export next to the C interface (docs/runtime-extensions.md):
  // the host runtime does, the vendor runtime does not (null then). Not part of entries().
  // The last error line the calling thread's rknn_* calls logged ("" when none failed).
  const char* (*rknnxx_host_last_error)() = nullptr;

  struct Entry {
    std::string_view name;
    bool required;
    void* slot;  // the address of the pointer field: write it with std::memcpy
  };
  static constexpr std::size_t size = 0
#define RKNNXX_API_COUNT(name, required) +1
      RKNNXX_API_FUNCTIONS(RKNNXX_API_COUNT)
#undef RKNNXX_API_COUNT
      ;
  // Every slot with its symbol name, for the loader to fill (function and object pointers have
  // the same size and representation on every POSIX platform: dlsym relies on it).
  static_assert(sizeof(void*) == sizeof(decltype(&::rknn_init)));
  [[nodiscard]] std::array<Entry, size> entries() noexcept {
    return {{
#define RKNNXX_API_ENTRY(name, required) Entry{#name, required, static_cast<void*>(&this->name)},
        RKNNXX_API_FUNCTIONS(RKNNXX_API_ENTRY)
#undef RKNNXX_API_ENTRY
    }};
  }
};

}  // namespace rknnxx
