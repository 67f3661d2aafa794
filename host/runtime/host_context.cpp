#include "host_context.hpp"

#include "api_error.hpp"
#include "model_io.hpp"
#include "registry.hpp"
#include "shape_choice.hpp"

#include "../engine/engine_error.hpp"
#include "../engine/thread_pool.hpp"
#include "../quantize/qnt8_section.hpp"

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/layout.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>

namespace rknnxx::host {

namespace {

std::vector<std::byte> read_file(const char* path) {
  try {
    return read_model_file_bytes(path);
  } catch (const ModelFileError& e) {
    fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
  }
}

}  // namespace

// ---- one thread at a time ---------------------------------------------------------------

// Claims the context for the calling thread for one call (and keeps the claim while cycle_open_),
// or refuses. An atomic compare-and-swap, so that it costs next to nothing in every build.
class HostContext::ThreadClaim {
public:
  explicit ThreadClaim(HostContext& context) : context_(context) {
    uint64_t user = 0;
    if (context_.user_.compare_exchange_strong(user, token(), std::memory_order_acquire)) return;
    if (user == token()) return;  // this thread's open cycle (inputs set or run, outputs not yet taken)
    fail(RKNN_ERR_CTX_INVALID,
         "context {:#x} is in use by another thread (in a call, or between its "
         "rknn_inputs_set/rknn_run and rknn_outputs_get): a context serves one thread at a time; give each thread "
         "its own (rknn_dup_context or rknn_init)",
         static_cast<uint64_t>(context_.handle_));
  }
  ~ThreadClaim() {
    if (!context_.cycle_open_) context_.user_.store(0, std::memory_order_release);
  }
  ThreadClaim(const ThreadClaim&) = delete;
  ThreadClaim& operator=(const ThreadClaim&) = delete;

private:
  // Unique per thread over the process's life (a thread id may be reused, this is not).
  static uint64_t token() noexcept {
    static std::atomic<uint64_t> next{1};
    thread_local const uint64_t mine = next.fetch_add(1, std::memory_order_relaxed);
    return mine;
  }
  HostContext& context_;
};

// ---- creation ----------------------------------------------------------------------------

std::shared_ptr<HostContext> HostContext::create(void* model, uint32_t size, uint32_t flags, rknn_init_extend* extend) {
  std::shared_ptr<const LoadedModel> loaded;
  if ((flags & RKNN_FLAG_SHARE_WEIGHT_MEM) != 0) {
    if (extend == nullptr) fail(RKNN_ERR_PARAM_INVALID, "RKNN_FLAG_SHARE_WEIGHT_MEM needs extend->ctx");
    loaded = registry().context(extend->ctx)->model_;
    if (loaded->dynamic()) fail(RKNN_ERR_MODEL_INVALID, "dynamic-shape models cannot share weights (as on the board)");
  }
  if ((flags & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) != 0 && extend == nullptr)
    fail(RKNN_ERR_PARAM_INVALID, "RKNN_FLAG_MODEL_BUFFER_ZERO_COPY needs extend with the model memory's fd and size");
  if (!loaded) {
    if (size == 0) {
      loaded = LoadedModel::load(read_file(static_cast<const char*>(model)));
    } else {
      const bool zero_copy = (flags & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) != 0;
      if (zero_copy && extend->real_model_offset < 0)
        fail(RKNN_ERR_PARAM_INVALID, "real_model_offset {} is negative", extend->real_model_offset);
      const size_t offset = zero_copy ? static_cast<size_t>(extend->real_model_offset) : 0;
      const size_t length =
          (flags & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) && extend->real_model_size > 0 ? extend->real_model_size : size;
      if (offset > size || length > size - offset)
        fail(RKNN_ERR_PARAM_INVALID, "real_model_offset {} + real_model_size {} exceed the buffer's {} bytes", offset,
             length, size);
      loaded = LoadedModel::load({static_cast<const std::byte*>(model) + offset, length});
    }
  }
  auto context = std::make_shared<HostContext>(std::move(loaded), flags);
  log_info("rknn_init: {} model for {}, {} inputs, {} outputs{}",
           context->model_->quantized()           ? toolkit::spelling(context->model_->file().quantization->dtype)
               : context->model_->float16_model() ? "float16"
                                                  : "float32",
           context->model_->platform_info().name, context->model_->inputs().size(), context->model_->outputs().size(),
           context->model_->dynamic() ? ", dynamic shapes" : "");
  return context;
}

HostContext::HostContext(std::shared_ptr<const LoadedModel> model, uint32_t flags)
    : model_(std::move(model)), flags_(flags), io_(*model_), memory_(flags) {
  shapes_ = model_->initial_shapes();
  // A dummy context (RKNN_FLAG_COLLECT_MODEL_INFO_ONLY) plans too: its MEM_SIZE sizes the
  // memory the real context will be given.
  session_ = make_session();
  plan_for_current_shapes();
  initial_output_shapes_ = output_shapes_;
}

ContextSession HostContext::make_session() const {
  SessionOptions options;
  // threads: the engine's default (all cores, or RKNNXX_HOST_THREADS)
  options.float16_activations = model_->float16_model();
  options.profile = (flags_ & RKNN_FLAG_COLLECT_PERF_MASK) != 0;
  try {
    ContextSession session = model_->file().quantization
        ? ContextSession(std::make_unique<quantize::QuantizedSession>(
              quantize::inference_graph(model_->onnx()), model_->activation_table(),
              model_->file().quantization->method, options, quantize::weight_range(model_->file().quantization->dtype),
              quantize::clip_ratios(*model_->file().quantization)))
        : ContextSession(std::make_unique<Session>(Graph(model_->onnx(), model_->custom_ops()), options));
    session->limit_threads(thread_share(default_thread_count()));
    session->set_custom_op_runner([ops = custom_ops_.get(), graph = &session->graph()](
                                      const Node& node, KernelContext& kernel) { ops->run(*graph, node, kernel); });
    return session;
  } catch (const EngineError& e) {
    fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
  } catch (const std::invalid_argument& e) {  // weights the quantizer cannot split as the method asks
    fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
  }
}

// A core mask gives the context the same share of the CPU threads as of the NPU's cores: 1 of 3
// cores on RK3588 is a third of the threads (at least one); AUTO and ALL are all of them
// (docs/runtime-extensions.md#threads).
std::size_t HostContext::thread_share(std::size_t threads) const {
  const std::uint32_t cores = model_->platform_info().npu_cores;
  const std::uint32_t all = (1U << cores) - 1;
  const auto mask = static_cast<std::uint32_t>(core_mask_);
  if (mask == RKNN_NPU_CORE_AUTO || (mask & all) == all || cores <= 1) return threads;
  const auto chosen = static_cast<std::size_t>(std::popcount(mask & all));
  return std::max<std::size_t>(1, (threads * chosen + cores - 1) / cores);
}

std::shared_ptr<HostContext> HostContext::dup() const {
  // Reads only what never changes (the model and the flags): no claim needed.
  check_function(Function::dup_context, "rknn_dup_context");
  if (model_->dynamic()) fail(RKNN_ERR_MODEL_INVALID, "dynamic-shape models cannot be duplicated (as on the board)");
  return std::make_shared<HostContext>(model_, flags_);
}

void HostContext::check_function(Function f, const char* name) const {
  if (!model_->platform_info().supports(f))
    fail(RKNN_ERR_FAIL, "{} is not available on {} (the model's target platform)", name, model_->platform_info().name);
}

void HostContext::require_full_context(const char* what) const {
  if ((flags_ & RKNN_FLAG_COLLECT_MODEL_INFO_ONLY) != 0)
    fail(RKNN_ERR_CTX_INVALID,
         "{} on a context made with RKNN_FLAG_COLLECT_MODEL_INFO_ONLY, which only answers "
         "RKNN_QUERY_MEM_SIZE",
         what);
}

void HostContext::plan_for_current_shapes() {
  try {
    session_->prepare(input_infos(*model_, shapes_));
    output_shapes_.clear();
    for (const TensorInfo& info : session_->output_infos()) output_shapes_.push_back(info.shape);
    run_time_shaped_.clear();
    const auto kinds = session_->output_shape_kinds();
    for (uint32_t i = 0; i < kinds.size(); ++i) {
      run_time_shaped_.push_back(kinds[i] != OutputShapeKind::planned);
      // What OUTPUT_ATTR reports is what a program allocates: a run-time shape needs a bound.
      if (kinds[i] == OutputShapeKind::unbounded)
        fail(RKNN_ERR_MODEL_INVALID,
             "output {} ('{}') has a shape decided while running with no bound the runtime could report "
             "(docs/c-interface.md#run-time-output-shapes)",
             i, model_->outputs()[i].name);
    }
  } catch (const EngineError& e) {
    fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
  }
  // Outputs the runtime cannot describe (rknn_tensor_attr's sizes are 32-bit) are refused here,
  // before a run would make them.
  for (uint32_t i = 0; i < output_shapes_.size(); ++i) {
    try {
      (void)model_->attr(false, i, output_shapes_[i], AttrKind::normal);
    } catch (const rknnxx::Error& e) {
      fail(RKNN_ERR_MODEL_INVALID,
           "output {} ('{}') has shape {}, more than the runtime can describe (at most 4 GiB "
           "per tensor: rknn_tensor_attr's sizes are 32-bit): {}",
           i, model_->outputs()[i].name, dims_text(output_shapes_[i]), e.message());
    }
  }
  outputs_.clear();
  has_run_ = false;
}

size_t HostContext::internal_bytes() { return memory_.internal_bytes(*session_, *model_, shapes_); }

void HostContext::query(rknn_query_cmd cmd, void* info, uint32_t size) {
  ThreadClaim claim(*this);
  answer_query(cmd, info, size);
}

// ---- inputs, run and outputs -------------------------------------------------------------

void HostContext::inputs_set(std::span<rknn_input> inputs) {
  ThreadClaim claim(*this);
  const ComputeSlot slot;  // the conversions compute on this thread, within the process's threads
  require_full_context("rknn_inputs_set");
  check_function(Function::inputs_set, "rknn_inputs_set");
  ThreadPool pool(thread_share(default_thread_count()));  // the context's share, as its runs have
  io_.stage_inputs(inputs, shapes_, pool);
  cycle_open_ = true;  // these inputs are this thread's until it has taken the outputs
}

void HostContext::run(rknn_run_extend* extend) {
  ThreadClaim claim(*this);
  const ComputeSlot slot;  // the conversions compute on this thread, within the process's threads
  cycle_open_ = false;     // a failed run ends this thread's turn; a successful one opens it again below
  require_full_context("rknn_run");
  (void)extend;  // the documentation says it must be NULL at present; frame ids are not tracked
  memory_.require_outside_memory();
  std::vector<Tensor> inputs = io_.gather_inputs(shapes_, memory_.emulate_input_cache());
  // The last run's outputs, and the hold on the memory they view, go first: memory destroyed since
  // that run is refused below rather than kept alive by them.
  outputs_.clear();
  outputs_memory_.reset();
  has_run_ = false;
  // Held until the run is done, even if another thread destroys them meanwhile.
  const auto weights = memory_.hold_weights();
  const auto internal = memory_.hold_internal(*session_);  // refuses memory destroyed since bound
  custom_ops_->require_registered(session_->graph());
  const auto start = std::chrono::steady_clock::now();
  try {
    // The outputs stay where the engine wrote them until rknn_outputs_get encodes them from there
    // (and the internal memory they may live in stays held as long).
    const auto views = session_.run_views(inputs);
    outputs_.assign(views.begin(), views.end());
    outputs_memory_ = internal;
  } catch (const EngineError& e) {
    fail(RKNN_ERR_FAIL, "{}", e.what());
  }
  const auto run_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  if (model_->float16_model())
    for (Tensor& t : outputs_) round_to_float16(t);  // the NPU writes float16
  // A shape decided while running is what CURRENT_OUTPUT_ATTR and rknn_outputs_get give from now on
  // (docs/c-interface.md#run-time-output-shapes); the engine checked it against the bound.
  for (uint32_t i = 0; i < outputs_.size() && i < run_time_shaped_.size(); ++i)
    if (run_time_shaped_[i]) output_shapes_[i] = outputs_[i].shape();
  has_run_ = true;
  perf_.record(*session_, run_us, (flags_ & RKNN_FLAG_COLLECT_PERF_MASK) != 0);
  io_.write_bound_outputs(outputs_, run_time_shaped_, memory_.emulate_output_cache());
  // The outputs are this thread's until rknn_outputs_get, unless bound memory already holds them all.
  cycle_open_ = !io_.every_output_bound();
}

void HostContext::outputs_get(std::span<rknn_output> outputs, rknn_output_extend* extend) {
  ThreadClaim claim(*this);
  const ComputeSlot slot;  // the conversions compute on this thread, within the process's threads
  cycle_open_ = false;     // whatever happens, this thread's turn ends here
  require_full_context("rknn_outputs_get");
  check_function(Function::outputs_get, "rknn_outputs_get");
  (void)extend;
  if (!has_run_) fail(RKNN_ERR_OUTPUT_INVALID, "no results: call rknn_run first");
  io_.hand_out(outputs, outputs_, output_shapes_);
}

void HostContext::outputs_release(std::span<rknn_output> outputs) { io_.release(outputs); }

void HostContext::register_custom_ops(std::span<const rknn_custom_op> ops) {
  ThreadClaim claim(*this);
  require_full_context("rknn_register_custom_ops");
  check_function(Function::register_custom_ops, "rknn_register_custom_ops");
  custom_ops_->add(ops);
}

// ---- zero-copy memory --------------------------------------------------------------------

std::unique_ptr<HostMem> HostContext::wrap_mem(void* virt, uint32_t size, int32_t fd, int32_t offset, uint64_t phys,
                                               uint32_t flags) const {
  if (flags == RKNN_TENSOR_MEMORY_FLAGS_FROM_FD)
    check_function(Function::create_mem_from_fd, "rknn_create_mem_from_fd");
  return HostMem::wrap(handle_, virt, size, fd, offset, phys, flags);
}

void HostContext::set_io_mem(const std::shared_ptr<HostMem>& mem, const rknn_tensor_attr& attr) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_io_mem");
  io_.bind(mem, attr, shapes_, has_run_ ? std::span<const Tensor>(outputs_) : std::span<const Tensor>());
}

void HostContext::set_weight_mem(const std::shared_ptr<HostMem>& mem) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_weight_mem");
  if (model_->quantized()) return memory_.bind_board_weights(mem, session_.board_weight_bytes());
  // The weights are loaded from the model again, as the board loads them into the memory it is given.
  auto session = make_session();
  memory_.bind_weights(mem, *session.operator->());
  session_ = std::move(session);
  plan_for_current_shapes();
}

void HostContext::set_internal_mem(const std::shared_ptr<HostMem>& mem) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_internal_mem");
  memory_.bind_internal(mem, *session_, internal_bytes());
}

// ---- dynamic shapes and cores ------------------------------------------------------------

void HostContext::set_input_shapes(std::span<rknn_tensor_attr> attrs) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_input_shapes");
  check_function(Function::set_input_shapes, "rknn_set_input_shapes");
  ShapeChoice wanted = choose_shapes(*model_, attrs);
  if (wanted != shapes_ || !shapes_set_) {
    shapes_ = std::move(wanted);
    plan_for_current_shapes();
    io_.drop_staged_inputs();  // data given for the old shapes does not fit the new ones
  }
  shapes_set_ = true;
}

void HostContext::set_core_mask(rknn_core_mask mask) {
  ThreadClaim claim(*this);
  const PlatformInfo& platform = model_->platform_info();
  if (!platform.multi_core())
    fail(RKNN_ERR_FAIL, "{} has a single NPU core: core masks are for RK3588 and RK3576", platform.name);
  if (!platform.valid_core_mask(static_cast<CoreMask>(mask)))
    fail(RKNN_ERR_PARAM_INVALID, "core mask {:#x} is not valid on {} ({} cores)", static_cast<uint32_t>(mask),
         platform.name, platform.npu_cores);
  core_mask_ = mask;
  session_->limit_threads(thread_share(default_thread_count()));
}

void HostContext::set_batch_core_num(int core_num) {
  ThreadClaim claim(*this);
  const PlatformInfo& platform = model_->platform_info();
  check_function(Function::set_batch_core_num, "rknn_set_batch_core_num");
  if (core_num < 1 || static_cast<uint32_t>(core_num) > platform.npu_cores)
    fail(RKNN_ERR_PARAM_INVALID, "core_num {} is outside 1..{} on {}", core_num, platform.npu_cores, platform.name);
}

}  // namespace rknnxx::host
