#pragma once
// Where a context's engine keeps its bytes, and what RKNN_QUERY_MEM_SIZE says about them: the
// weight and internal memory given from outside (rknn_set_weight_mem, rknn_set_internal_mem), the
// internal size over every shape of a dynamic model, the context flags that make the caller give
// that memory (RKNN_FLAG_MEM_ALLOC_OUTSIDE, RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE), and those that turn on
// the cache emulation of host_mem.hpp (RKNN_FLAG_DISABLE_FLUSH_*_MEM_CACHE).
//
// Bound memory is not kept alive (weak_ptr): rknn_destroy_mem frees it, and the next run refuses.
// A run holds it (shared_ptr) until it is done, even if another thread destroys it meanwhile.

#include <rknnxx/abi/c_api.h>

#include "context_session.hpp"
#include "host_mem.hpp"

#include <cstdint>
#include <memory>
#include <optional>

namespace rknnxx::host {

class MemoryPlan {
public:
  explicit MemoryPlan(uint32_t flags) noexcept : flags_(flags) {}

  // Weights the board keeps as integers (a quantized model): `mem` is only checked against the
  // board's size and kept bound; the engine computes with float32 copies of the same grid values.
  void bind_board_weights(const std::shared_ptr<HostMem>& mem, size_t board_bytes);
  // The engine's constants moved into `mem` for `session` (made afresh: memory bound before, perhaps
  // destroyed since, is never read). The engine checks size and alignment.
  void bind_weights(const std::shared_ptr<HostMem>& mem, Session& session);
  // The engine's intermediates in `mem` from now on; `needed` is internal_bytes().
  void bind_internal(const std::shared_ptr<HostMem>& mem, Session& session, size_t needed);

  // RKNN_QUERY_MEM_SIZE's total_internal_size: enough for every shape of a dynamic model, since the
  // board's demos size the internal memory before rknn_set_input_shapes. Computed once; `session`
  // ends planned for `current` again.
  [[nodiscard]] size_t internal_bytes(Session& session, const LoadedModel& model, const ShapeChoice& current);

  // Before a run: the memory the flags require has been given.
  void require_outside_memory() const;
  // For the length of a run: the weight memory, and the internal memory bound to `session` again
  // (several contexts run one after another may share one buffer, as on the NPU). Null where none
  // is bound; refused when bound memory was destroyed.
  [[nodiscard]] std::shared_ptr<HostMem> hold_weights() const;
  [[nodiscard]] std::shared_ptr<HostMem> hold_internal(Session& session) const;

  // The NPU's own view of bound input (output) memory, reached only through rknn_mem_sync.
  [[nodiscard]] bool emulate_input_cache() const noexcept {
    return (flags_ & RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE) != 0;
  }
  [[nodiscard]] bool emulate_output_cache() const noexcept {
    return (flags_ & RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE) != 0;
  }

private:
  uint32_t flags_ = 0;
  std::optional<std::weak_ptr<HostMem>> weight_mem_;    // holds the engine's constants (Session::use_weight_memory)
  std::optional<std::weak_ptr<HostMem>> internal_mem_;  // holds the engine's intermediates (Session::use_arena)
  std::optional<size_t> internal_bytes_;                // the largest arena over the shape set, once computed
};

}  // namespace rknnxx::host
