#include "memory_plan.hpp"

#include "api_error.hpp"

#include "../engine/engine_error.hpp"

#include <algorithm>

namespace rknnxx::host {

void MemoryPlan::bind_board_weights(const std::shared_ptr<HostMem>& mem, size_t board_bytes) {
  if (mem->cpu_view().size() < board_bytes)
    fail(RKNN_ERR_PARAM_INVALID, "weight memory of {} bytes is smaller than the model's {} (RKNN_QUERY_MEM_SIZE)",
         mem->cpu_view().size(), board_bytes);
  weight_mem_ = mem;
}

void MemoryPlan::bind_weights(const std::shared_ptr<HostMem>& mem, Session& session) {
  try {
    session.use_weight_memory(mem->cpu_view());
  } catch (const EngineError& e) {
    fail(RKNN_ERR_PARAM_INVALID, "{} (see RKNN_QUERY_MEM_SIZE; check the mem's offset)", e.what());
  }
  weight_mem_ = mem;
}

void MemoryPlan::bind_internal(const std::shared_ptr<HostMem>& mem, Session& session, size_t needed) {
  if (mem->cpu_view().size() < needed)
    fail(RKNN_ERR_PARAM_INVALID, "internal memory of {} bytes is smaller than the model's {} (RKNN_QUERY_MEM_SIZE)",
         mem->cpu_view().size(), needed);
  try {
    session.use_arena(mem->cpu_view());
  } catch (const EngineError& e) {
    fail(RKNN_ERR_PARAM_INVALID, "internal memory: {} (check the mem's offset)", e.what());
  }
  internal_mem_ = mem;
}

size_t MemoryPlan::internal_bytes(Session& session, const LoadedModel& model, const ShapeChoice& current) {
  if (!internal_bytes_) {
    size_t most = session.stats().arena_bytes;
    if (model.dynamic()) {
      try {
        for (const ShapeChoice& choice : model.shape_set()) {
          session.prepare(input_infos(model, choice));
          most = std::max(most, session.stats().arena_bytes);
        }
        session.prepare(input_infos(model, current));  // back to the current shapes (a cached plan)
      } catch (const EngineError& e) {
        fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
      }
    }
    internal_bytes_ = most;
  }
  return *internal_bytes_;
}

void MemoryPlan::require_outside_memory() const {
  if ((flags_ & RKNN_FLAG_MEM_ALLOC_OUTSIDE) != 0 && (!weight_mem_ || !internal_mem_))
    fail(RKNN_ERR_FAIL,
         "the context was made with RKNN_FLAG_MEM_ALLOC_OUTSIDE: call rknn_set_weight_mem and "
         "rknn_set_internal_mem before rknn_run");
  if ((flags_ & RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE) != 0 && !internal_mem_)
    fail(RKNN_ERR_FAIL, "the context was made with RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE: call rknn_set_internal_mem first");
}

std::shared_ptr<HostMem> MemoryPlan::hold_weights() const {
  return weight_mem_ ? live_mem(*weight_mem_, "weight memory") : nullptr;
}

std::shared_ptr<HostMem> MemoryPlan::hold_internal(Session& session) const {
  if (!internal_mem_) return nullptr;
  auto mem = live_mem(*internal_mem_, "internal memory");
  session.use_arena(mem->cpu_view());
  return mem;
}

}  // namespace rknnxx::host
