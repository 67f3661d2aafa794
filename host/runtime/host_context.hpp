#pragma once
// One rknn_context of the host runtime: a loaded model (shared with dup'd contexts), the
// current input shapes of a dynamic model, inputs given with rknn_inputs_set, memory bound
// with rknn_set_io_mem, and the outputs of the last run. Every method mirrors one C
// function and fails with ApiError carrying the vendor's return code.
//
// One thread at a time: a context is not for two threads at once (as on a board), and sharing one
// silently mixes their data. Each call claims the context (ThreadClaim, an atomic owner); a call
// from another thread while it is claimed is refused with RKNN_ERR_CTX_INVALID and one log line.
// The claim lasts one call, or from rknn_inputs_set or rknn_run until the outputs are taken
// (rknn_outputs_get, or rknn_run itself when every output is bound memory): another thread's
// inputs or run in between would hand this thread's outputs to the wrong caller.

#include <rknnxx/abi/c_api.h>

#include "custom_ops.hpp"
#include "host_mem.hpp"
#include "loaded_model.hpp"
#include "../engine/session.hpp"
#include "tensor_codec.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host {

// The engine a context runs: the float session, or for a quantized model the w8a8 one
// (quantize::QuantizedSession, which owns its session). `->` reaches the session either way; run()
// goes through the quantized session's rounding of inputs.
class ContextSession {
public:
  ContextSession() = default;
  explicit ContextSession(std::unique_ptr<Session> plain);
  explicit ContextSession(std::unique_ptr<quantize::QuantizedSession> quantized);

  Session* operator->() const noexcept { return session_; }
  [[nodiscard]] std::vector<Tensor> run(std::span<const Tensor> inputs);
  // The weights as the board holds them: int8 (1 byte an element) or int4 (half a byte) where
  // quantized, as the engine keeps them elsewhere.
  [[nodiscard]] size_t board_weight_bytes() const;

private:
  std::unique_ptr<Session> plain_;
  std::unique_ptr<quantize::QuantizedSession> quantized_;
  Session* session_ = nullptr;
};

class HostContext {
public:
  static std::shared_ptr<HostContext> create(void* model, uint32_t size, uint32_t flags, rknn_init_extend* extend);
  HostContext(std::shared_ptr<const LoadedModel> model, uint32_t flags);
  ~HostContext();  // frees output buffers the caller never released, as rknn_destroy does on a board
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

  struct Binding {               // memory bound to one input or output with rknn_set_io_mem
    std::weak_ptr<HostMem> mem;  // not kept alive: rknn_destroy_mem frees it, and run then refuses
    BufferFormat format;
    bool pass_through = false;
  };

  void require_full_context(const char* what) const;
  [[nodiscard]] rknn_tensor_attr attr(bool input, uint32_t index, AttrKind kind, bool current) const;
  [[nodiscard]] ContextSession make_session() const;
  [[nodiscard]] std::size_t thread_share(std::size_t threads) const;
  [[nodiscard]] std::vector<TensorInfo> input_infos(const ShapeChoice& shapes) const;
  void plan_for_current_shapes();
  [[nodiscard]] size_t internal_bytes();
  [[nodiscard]] std::shared_ptr<HostMem> bind_internal_mem();
  [[nodiscard]] std::vector<Tensor> gather_inputs();
  [[nodiscard]] Tensor model_input(uint32_t index, std::span<const std::byte> bytes, const BufferFormat& format,
                                   bool pass_through) const;
  [[nodiscard]] BufferFormat output_format(uint32_t index, bool want_float) const;
  // Writes output `index` of the last run as `format` (int8 values q for a quantized output written INT8).
  void encode_output(uint32_t index, const BufferFormat& format, std::span<std::byte> target) const;
  void write_bound_outputs();
  [[nodiscard]] std::string perf_table() const;
  void check_function(Function f, const char* name) const;
  void check_index(bool input, uint32_t index) const;
  [[nodiscard]] std::shared_ptr<HostMem> live_mem(const std::weak_ptr<HostMem>& mem, std::string_view role) const;

  std::shared_ptr<const LoadedModel> model_;
  // Before session_, which runs custom nodes through it; a dup'd context starts with none registered.
  std::unique_ptr<CustomOps> custom_ops_ = std::make_unique<CustomOps>();
  uint32_t flags_ = 0;
  rknn_context handle_ = 0;
  std::atomic<uint64_t> user_{0};  // the claiming thread's token (ThreadClaim), 0 when free
  bool cycle_open_ = false;        // the claim outlives the call; only the claiming thread touches it

  ShapeChoice shapes_;                                       // the current input shapes (dynamic models)
  bool shapes_set_ = false;                                  // rknn_set_input_shapes was called
  ContextSession session_;                                   // the engine; plans again when shapes_ change
  std::vector<std::vector<int64_t>> output_shapes_;          // under shapes_
  std::vector<std::vector<int64_t>> initial_output_shapes_;  // under the model's initial (largest) shapes
  std::vector<Tensor> outputs_;                              // of the last run
  std::vector<std::optional<Tensor>> pending_inputs_;
  std::vector<std::optional<Binding>> input_bindings_;
  std::vector<std::optional<Binding>> output_bindings_;
  bool has_run_ = false;
  std::optional<std::weak_ptr<HostMem>> weight_mem_;    // holds the engine's constants (Session::use_weight_memory)
  std::optional<std::weak_ptr<HostMem>> internal_mem_;  // holds the engine's intermediates (Session::use_arena)
  std::optional<size_t> internal_bytes_;                // the largest arena over the shape set, once computed
  // Given out by outputs_get, freed by outputs_release, which takes no claim (a thread releases
  // its own buffers while another uses the context): the mutex guards the list alone.
  std::mutex output_buffers_mutex_;
  std::vector<void*> runtime_output_buffers_;
  int64_t last_run_us_ = 0;
  std::string perf_detail_;  // RKNN_QUERY_PERF_DETAIL's text, one buffer: valid until the next run
  rknn_core_mask core_mask_ = RKNN_NPU_CORE_AUTO;
};

}  // namespace rknnxx::host
