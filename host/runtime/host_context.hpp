#pragma once
// One rknn_context of the host runtime: a loaded model (shared with dup'd contexts), the
// current input shapes of a dynamic model, inputs given with rknn_inputs_set, memory bound
// with rknn_set_io_mem, and the outputs of the last run. Every method mirrors one C
// function and fails with ApiError carrying the vendor's return code.

#include <rknnxx/abi/c_api.h>

#include "host_mem.hpp"
#include "loaded_model.hpp"
#include "../engine/session.hpp"
#include "tensor_codec.hpp"

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::host {

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
  void set_io_mem(HostMem& mem, const rknn_tensor_attr& attr);
  void set_weight_mem(HostMem& mem);
  void set_internal_mem(HostMem& mem);
  void set_input_shapes(std::span<rknn_tensor_attr> attrs);
  void set_core_mask(rknn_core_mask mask);
  void set_batch_core_num(int core_num);
  [[nodiscard]] std::unique_ptr<HostMem> wrap_mem(void* virt, uint32_t size, int32_t fd, int32_t offset, uint64_t phys,
                                                  uint32_t flags) const;

 private:
  struct Binding {  // memory bound to one input or output with rknn_set_io_mem
    rknn_tensor_mem* mem = nullptr;
    uint64_t serial = 0;  // tells a freed-and-reallocated descriptor from the one bound
    BufferFormat format;
    bool pass_through = false;
  };

  void require_full_context(const char* what) const;
  [[nodiscard]] rknn_tensor_attr attr(bool input, uint32_t index, AttrKind kind, bool current) const;
  [[nodiscard]] std::unique_ptr<Session> make_session() const;
  [[nodiscard]] std::vector<TensorInfo> input_infos(const ShapeChoice& shapes) const;
  void plan_for_current_shapes();
  [[nodiscard]] size_t internal_bytes();
  void bind_internal_mem();
  [[nodiscard]] std::vector<Tensor> gather_inputs();
  [[nodiscard]] Tensor model_input(uint32_t index, std::span<const std::byte> bytes, const BufferFormat& format,
                                   bool pass_through) const;
  [[nodiscard]] BufferFormat output_format(uint32_t index, bool want_float) const;
  void write_bound_outputs();
  [[nodiscard]] std::string perf_table() const;
  void check_function(Function f, const char* name) const;
  void check_index(bool input, uint32_t index) const;
  [[nodiscard]] HostMem& live_mem(rknn_tensor_mem* mem, uint64_t serial, std::string_view role) const;

  std::shared_ptr<const LoadedModel> model_;
  uint32_t flags_ = 0;
  rknn_context handle_ = 0;
  mutable std::mutex mutex_;  // a context is not for two threads at once; this keeps misuse from corrupting it

  ShapeChoice shapes_;                      // the current input shapes (dynamic models)
  bool shapes_set_ = false;                 // rknn_set_input_shapes was called
  std::unique_ptr<Session> session_;        // the engine; plans again when shapes_ change
  std::vector<std::vector<int64_t>> output_shapes_;  // under shapes_
  std::vector<std::vector<int64_t>> initial_output_shapes_;  // under the model's initial (largest) shapes
  std::vector<Tensor> outputs_;             // of the last run
  std::vector<std::optional<Tensor>> pending_inputs_;
  std::vector<std::optional<Binding>> input_bindings_;
  std::vector<std::optional<Binding>> output_bindings_;
  bool has_run_ = false;
  struct MemRef {
    rknn_tensor_mem* mem = nullptr;
    uint64_t serial = 0;
  };
  std::optional<MemRef> weight_mem_;    // holds the engine's constants (Session::use_weight_memory)
  std::optional<MemRef> internal_mem_;  // holds the engine's intermediates (Session::use_arena)
  std::optional<size_t> internal_bytes_;  // the largest arena over the shape set, once computed
  std::vector<void*> runtime_output_buffers_;  // given out by outputs_get, freed by outputs_release
  int64_t last_run_us_ = 0;
  std::string perf_detail_;
  std::vector<std::vector<char>> perf_detail_strings_;  // kept alive: the query hands out pointers
  rknn_core_mask core_mask_ = RKNN_NPU_CORE_AUTO;
};

} // namespace rknnxx::host
