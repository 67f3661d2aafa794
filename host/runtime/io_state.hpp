#pragma once
// A context's inputs and outputs as the caller gives and takes them: inputs staged with
// rknn_inputs_set, memory bound to an input or output with rknn_set_io_mem, and the buffers
// rknn_outputs_get hands out until rknn_outputs_release (or rknn_destroy) frees them. The
// conversions themselves are model_io.hpp's.

#include <rknnxx/abi/c_api.h>

#include "host_mem.hpp"
#include "loaded_model.hpp"
#include "tensor_codec.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace rknnxx::host {

class IoState {
public:
  explicit IoState(const LoadedModel& model);  // `model` outlives this
  ~IoState();  // frees output buffers the caller never released, as rknn_destroy does on a board
  IoState(const IoState&) = delete;
  IoState& operator=(const IoState&) = delete;

  // rknn_inputs_set for inputs of these shapes: every input converted now (the caller may reuse its
  // buffers at once), on `pool`'s threads. The latest of this and bind() gives an input its data.
  void stage_inputs(std::span<const rknn_input> inputs, const ShapeChoice& shapes, ThreadPool& pool);
  // rknn_set_io_mem: `attr` names the tensor (by name when it has one, else by index among the
  // inputs) and describes the memory. Checked now from the attributes alone, against the current
  // input shapes and, for an output, the last run's outputs (none before the first run).
  void bind(const std::shared_ptr<HostMem>& mem, const rknn_tensor_attr& attr, const ShapeChoice& shapes,
            std::span<const Tensor> last_outputs);
  // Data staged for other shapes does not fit the new ones.
  void drop_staged_inputs();

  // A run's inputs: bound memory read now (its NPU view when `emulate_cache`), staged ones copied.
  [[nodiscard]] std::vector<Tensor> gather_inputs(const ShapeChoice& shapes, bool emulate_cache) const;
  // A run's outputs into the memory bound to them.
  // Outputs whose shape was decided while running are written from the start of their memory, in
  // the binding's type, when they fit (docs/c-interface.md#run-time-output-shapes).
  void write_bound_outputs(std::span<const Tensor> outputs, const std::vector<bool>& run_time_shaped,
                           bool emulate_cache) const;
  [[nodiscard]] bool every_output_bound() const;

  // rknn_outputs_get: `values` (planned as `shapes`) into the caller's buffers, or into buffers
  // allocated here and kept until release().
  void hand_out(std::span<rknn_output> outputs, std::span<const Tensor> values,
                std::span<const std::vector<int64_t>> shapes);
  // rknn_outputs_release; takes no claim of the context (a thread releases its own buffers while
  // another uses the context), so the buffer list has a mutex of its own.
  void release(std::span<rknn_output> outputs);

private:
  struct Binding {               // memory bound to one input or output with rknn_set_io_mem
    std::weak_ptr<HostMem> mem;  // not kept alive: rknn_destroy_mem frees it, and run then refuses
    BufferFormat format;
    bool pass_through = false;
  };

  const LoadedModel& model_;
  std::vector<std::optional<Tensor>> staged_inputs_;
  std::vector<std::optional<Binding>> input_bindings_;
  std::vector<std::optional<Binding>> output_bindings_;
  std::mutex output_buffers_mutex_;  // guards runtime_output_buffers_ alone
  std::vector<void*> runtime_output_buffers_;
};

}  // namespace rknnxx::host
