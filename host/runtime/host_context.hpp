#pragma once
// One rknn_context of the host runtime: a loaded model (shared with dup'd contexts), the
// current input shapes of a dynamic model, the engine planned for them, and the outputs of the
// last run. Every method mirrors one C function and fails with ApiError carrying the vendor's
// return code. The context orchestrates; the rooms do the work:
//   queries.cpp        rknn_query's answers (attributes, versions, sizes, perf)
//   io_state.hpp       inputs staged, memory bound to inputs and outputs, output buffers handed out
//   model_io.hpp       the type and layout rules of the model's inputs and outputs, and the conversions
//   memory_plan.hpp    weight and internal memory, MEM_SIZE, the cache emulation flags
//   perf_report.hpp    the last run's time and per-layer table
//   shape_choice.hpp   rknn_set_input_shapes's match against the shape set
//   context_session.hpp the engine (float or quantized)
//
// One thread at a time: a context is not for two threads at once (as on a board), and sharing one
// silently mixes their data. Each call claims the context (ThreadClaim, an atomic owner); a call
// from another thread while it is claimed is refused with RKNN_ERR_CTX_INVALID and one log line.
// The claim lasts one call, or from rknn_inputs_set or rknn_run until the outputs are taken
// (rknn_outputs_get, or rknn_run itself when every output is bound memory): another thread's
// inputs or run in between would hand this thread's outputs to the wrong caller.

#include <rknnxx/abi/c_api.h>

#include "context_session.hpp"
#include "custom_ops.hpp"
#include "host_mem.hpp"
#include "io_state.hpp"
#include "loaded_model.hpp"
#include "memory_plan.hpp"
#include "perf_report.hpp"

#include <atomic>
#include <memory>
#include <span>
#include <vector>

namespace rknnxx::host {

class HostContext {
public:
  static std::shared_ptr<HostContext> create(void* model, uint32_t size, uint32_t flags, rknn_init_extend* extend);
  HostContext(std::shared_ptr<const LoadedModel> model, uint32_t flags);
  HostContext(const HostContext&) = delete;
  HostContext& operator=(const HostContext&) = delete;

  [[nodiscard]] std::shared_ptr<HostContext> dup() const;
  void set_handle(rknn_context handle) noexcept { handle_ = handle; }

  void query(rknn_query_cmd cmd, void* info, uint32_t size);
  void inputs_set(std::span<rknn_input> inputs);
  void run(rknn_run_extend* extend);
  void outputs_get(std::span<rknn_output> outputs, rknn_output_extend* extend);
  void outputs_release(std::span<rknn_output> outputs);
  void set_io_mem(const std::shared_ptr<HostMem>& mem, const rknn_tensor_attr& attr);
  void set_weight_mem(const std::shared_ptr<HostMem>& mem);
  void set_internal_mem(const std::shared_ptr<HostMem>& mem);
  void set_input_shapes(std::span<rknn_tensor_attr> attrs);
  void set_core_mask(rknn_core_mask mask);
  void set_batch_core_num(int core_num);
  void register_custom_ops(std::span<const rknn_custom_op> ops);
  [[nodiscard]] std::unique_ptr<HostMem> wrap_mem(void* virt, uint32_t size, int32_t fd, int32_t offset, uint64_t phys,
                                                  uint32_t flags) const;

private:
  class ThreadClaim;  // host_context.cpp

  void answer_query(rknn_query_cmd cmd, void* info, uint32_t size);  // queries.cpp, under the claim
  void require_full_context(const char* what) const;
  [[nodiscard]] rknn_tensor_attr attr(bool input, uint32_t index, AttrKind kind, bool current) const;
  [[nodiscard]] ContextSession make_session() const;
  [[nodiscard]] std::size_t thread_share(std::size_t threads) const;
  void plan_for_current_shapes();
  [[nodiscard]] size_t internal_bytes();
  void check_function(Function f, const char* name) const;

  std::shared_ptr<const LoadedModel> model_;  // first: io_ refers to it
  // Before session_, which runs custom nodes through it; a dup'd context starts with none registered.
  std::unique_ptr<CustomOps> custom_ops_ = std::make_unique<CustomOps>();
  uint32_t flags_ = 0;
  rknn_context handle_ = 0;
  std::atomic<uint64_t> user_{0};  // the claiming thread's token (ThreadClaim), 0 when free
  bool cycle_open_ = false;        // the claim outlives the call; only the claiming thread touches it

  ShapeChoice shapes_;                               // the current input shapes (dynamic models)
  bool shapes_set_ = false;                          // rknn_set_input_shapes was called
  ContextSession session_;                           // the engine; plans again when shapes_ change
  std::vector<std::vector<int64_t>> output_shapes_;  // under shapes_; after a run, the shapes it made
  // Per output: its shape is decided by data while running; output_shapes_ holds the bound until a run
  // (docs/c-interface.md#run-time-output-shapes).
  std::vector<bool> run_time_shaped_;
  std::vector<std::vector<int64_t>> initial_output_shapes_;  // under the model's initial (largest) shapes
  std::vector<Tensor> outputs_;                              // of the last run: views into its arena
  std::shared_ptr<HostMem> outputs_memory_;                  // the internal memory outputs_ may view
  bool has_run_ = false;                                     // outputs_ hold a run under shapes_
  IoState io_;
  MemoryPlan memory_;
  PerfReport perf_;
  rknn_core_mask core_mask_ = RKNN_NPU_CORE_AUTO;
};

}  // namespace rknnxx::host
