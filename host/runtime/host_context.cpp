#include "host_context.hpp"

#include "api_error.hpp"
#include "registry.hpp"

#include "../engine/engine_error.hpp"
#include "../engine/float16.hpp"
#include "../engine/thread_pool.hpp"
#include "../quantize/qnt8_section.hpp"

#include <rknnxx/core/layout.hpp>
#include <rknnxx/version.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace rknnxx::host {

namespace {

constexpr std::string_view mirrored_sdk = "2.3.2";

std::vector<std::byte> read_file(const char* path) {
  try {
    return read_model_file_bytes(path);
  } catch (const ModelFileError& e) {
    fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
  }
}

template <class Info> Info& info_as(void* info, uint32_t size, rknn_query_cmd cmd) {
  if (size < sizeof(Info))
    fail(RKNN_ERR_PARAM_INVALID, "query {}: info size {} is smaller than the {} bytes of its struct",
         static_cast<int>(cmd), size, sizeof(Info));
  return *static_cast<Info*>(info);
}

void copy_string(char* target, size_t capacity, std::string_view text) {
  const size_t n = std::min(capacity - 1, text.size());
  std::memcpy(target, text.data(), n);
  target[n] = '\0';
}

// NCHW dims from an attr's NHWC dims (4-D) or as given (other ranks).
std::vector<int64_t> onnx_dims(const rknn_tensor_attr& attr) {
  std::vector<int64_t> dims(attr.dims, attr.dims + std::min<uint32_t>(attr.n_dims, RKNN_MAX_DIMS));
  if (dims.size() == 4) return {dims[0], dims[3], dims[1], dims[2]};
  return dims;
}

std::vector<int64_t> attr_dims(const rknn_tensor_attr& attr) {
  return {attr.dims, attr.dims + std::min<uint32_t>(attr.n_dims, RKNN_MAX_DIMS)};
}

BufferFormat format_of(const rknn_tensor_attr& attr) {
  BufferFormat format;
  format.type = attr.type;
  format.fmt = attr.fmt;
  format.dims.assign(attr.dims, attr.dims + std::min<uint32_t>(attr.n_dims, RKNN_MAX_DIMS));
  format.w_stride = attr.w_stride;
  format.h_stride = attr.h_stride;
  return format;
}

void round_to_float16(Tensor& t) {
  if (t.dtype() != DataType::float32) return;
  round_to_half(t.data<float>(), static_cast<size_t>(t.elements()));
}

// A quantized output as the NPU writes it: the integers q (the engine holds scale * (q - zero_point)).
Tensor quantized_values(const Tensor& values, const quantize::AffineParams& params) {
  Tensor q(DataType::int8, values.shape());
  const auto from = values.values<float>();
  auto* to = q.data<int8_t>();
  for (size_t i = 0; i < from.size(); ++i) to[i] = static_cast<int8_t>(params.quantize(from[i]));
  return q;
}

}  // namespace

// ---- the engine of a context -------------------------------------------------------------

ContextSession::ContextSession(std::unique_ptr<Session> plain) : plain_(std::move(plain)), session_(plain_.get()) {}

ContextSession::ContextSession(std::unique_ptr<quantize::QuantizedSession> quantized)
    : quantized_(std::move(quantized)), session_(&quantized_->session()) {}

std::vector<Tensor> ContextSession::run(std::span<const Tensor> inputs) {
  return quantized_ ? quantized_->run(inputs) : plain_->run(inputs);
}

size_t ContextSession::board_weight_bytes() const {
  size_t bytes = session_->weight_bytes();
  if (!quantized_) return bytes;
  // The engine keeps the quantized weights as float32 grid values; the board keeps one byte each
  // (int8), or half a byte (int4, w4a16; two to a byte, a tensor of odd size rounded up).
  const Graph& graph = session_->graph();
  for (const auto& [name, weights] : quantized_->weights())
    if (const auto id = graph.find(name))
      if (const Tensor* constant = graph.constant(*id)) {
        const auto elements = static_cast<size_t>(constant->elements());
        const bool int4 = !weights.params.empty() && weights.params.front().range == quantize::int4_range;
        bytes -= constant->bytes() - (int4 ? (elements + 1) / 2 : elements);
      }
  return bytes;
}

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
    : model_(std::move(model)), flags_(flags) {
  shapes_ = model_->initial_shapes();
  pending_inputs_.resize(model_->inputs().size());
  input_bindings_.resize(model_->inputs().size());
  output_bindings_.resize(model_->outputs().size());
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

HostContext::~HostContext() {
  for (void* buffer : runtime_output_buffers_) std::free(buffer);
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

void HostContext::check_index(bool input, uint32_t index) const {
  const size_t count = input ? model_->inputs().size() : model_->outputs().size();
  if (index >= count)
    fail(RKNN_ERR_PARAM_INVALID, "{} index {} is out of range: the model has {} {}", input ? "input" : "output", index,
         count, input ? "inputs" : "outputs");
}

// The engine's view of one choice of input shapes.
std::vector<TensorInfo> HostContext::input_infos(const ShapeChoice& shapes) const {
  std::vector<TensorInfo> infos;
  for (size_t i = 0; i < shapes.size(); ++i) infos.push_back({model_->inputs()[i].dtype, shapes[i]});
  return infos;
}

void HostContext::plan_for_current_shapes() {
  try {
    session_->prepare(input_infos(shapes_));
    output_shapes_.clear();
    for (const TensorInfo& info : session_->output_infos()) output_shapes_.push_back(info.shape);
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
           i, model_->outputs()[i].name, dims_string(output_shapes_[i]), e.message());
    }
  }
  outputs_.clear();
  has_run_ = false;
}

// ---- queries -----------------------------------------------------------------------------

rknn_tensor_attr HostContext::attr(bool input, uint32_t index, AttrKind kind, bool current) const {
  check_index(input, index);
  if (input) return model_->attr(true, index, (current ? shapes_ : model_->initial_shapes())[index], kind);
  return model_->attr(false, index, (current ? output_shapes_ : initial_output_shapes_).at(index), kind);
}

void HostContext::query(rknn_query_cmd cmd, void* info, uint32_t size) {
  ThreadClaim claim(*this);
  const PlatformInfo& platform = model_->platform_info();
  if (cmd != RKNN_QUERY_MEM_SIZE) require_full_context("rknn_query");
  const auto command = static_cast<QueryCmd>(cmd);
  if (static_cast<uint32_t>(cmd) >= RKNN_QUERY_CMD_MAX)
    fail(RKNN_ERR_PARAM_INVALID, "query command {} is not a rknn_query_cmd", static_cast<int>(cmd));
  if (!platform.supports(command))
    fail(RKNN_ERR_PARAM_INVALID, "query command {} is not supported on {}", static_cast<int>(cmd), platform.name);

  auto tensor_query = [&](bool input, AttrKind kind, bool current) {
    auto& out = info_as<rknn_tensor_attr>(info, size, cmd);
    out = attr(input, out.index, kind, current);
  };
  switch (cmd) {
    case RKNN_QUERY_IN_OUT_NUM: {
      auto& out = info_as<rknn_input_output_num>(info, size, cmd);
      out.n_input = static_cast<uint32_t>(model_->inputs().size());
      out.n_output = static_cast<uint32_t>(model_->outputs().size());
      return;
    }
    case RKNN_QUERY_INPUT_ATTR: return tensor_query(true, AttrKind::normal, false);
    case RKNN_QUERY_OUTPUT_ATTR: return tensor_query(false, AttrKind::normal, false);
    case RKNN_QUERY_NATIVE_INPUT_ATTR: return tensor_query(true, AttrKind::native, false);
    case RKNN_QUERY_NATIVE_OUTPUT_ATTR: return tensor_query(false, AttrKind::native, false);
    case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR: return tensor_query(true, AttrKind::native_nhwc, false);
    case RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR: return tensor_query(false, AttrKind::native_nhwc, false);
    case RKNN_QUERY_CURRENT_INPUT_ATTR: return tensor_query(true, AttrKind::normal, true);
    case RKNN_QUERY_CURRENT_OUTPUT_ATTR: return tensor_query(false, AttrKind::normal, true);
    case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR: return tensor_query(true, AttrKind::native, true);
    case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR: return tensor_query(false, AttrKind::native, true);
    case RKNN_QUERY_PERF_RUN: {
      info_as<rknn_perf_run>(info, size, cmd).run_duration = last_run_us_;
      return;
    }
    case RKNN_QUERY_PERF_DETAIL: {
      auto& out = info_as<rknn_perf_detail>(info, size, cmd);
      if ((flags_ & RKNN_FLAG_COLLECT_PERF_MASK) == 0)
        fail(RKNN_ERR_PARAM_INVALID, "RKNN_QUERY_PERF_DETAIL needs RKNN_FLAG_COLLECT_PERF_MASK at rknn_init");
      if (!has_run_) fail(RKNN_ERR_PARAM_INVALID, "RKNN_QUERY_PERF_DETAIL before the first rknn_run");
      // The context's one buffer (NUL-terminated), valid until the next rknn_run or rknn_destroy:
      // repeated queries hand out the same text and keep no copies.
      out.perf_data = perf_detail_.data();
      out.data_len = perf_detail_.size();
      return;
    }
    case RKNN_QUERY_SDK_VERSION: {
      auto& out = info_as<rknn_sdk_version>(info, size, cmd);
      copy_string(out.api_version, sizeof out.api_version,
                  fmt::format("{} (rknnxx host runtime {}, mirrors the vendor C API {})", mirrored_sdk, version_string,
                              mirrored_sdk));
      copy_string(out.drv_version, sizeof out.drv_version,
                  fmt::format("rknnxx-host {} (CPU, no NPU driver)", version_string));
      return;
    }
    case RKNN_QUERY_MEM_SIZE: {
      auto& out = info_as<rknn_mem_size>(info, size, cmd);
      out = {};
      // What the engine keeps: float32 weights also for a float16 model, so twice the board's figure there;
      // a quantized model's weights one byte each (half a byte for w4a16), as on the board.
      out.total_weight_size = static_cast<uint32_t>(session_.board_weight_bytes());
      out.total_internal_size = static_cast<uint32_t>(internal_bytes());
      out.total_dma_allocated_size = uint64_t{out.total_weight_size} + out.total_internal_size;
      return;
    }
    case RKNN_QUERY_CUSTOM_STRING: {
      auto& out = info_as<rknn_custom_string>(info, size, cmd);
      copy_string(out.string, sizeof out.string, model_->file().custom_string.value_or(""));
      return;
    }
    case RKNN_QUERY_DEVICE_MEM_INFO: {
      auto& out = info_as<rknn_tensor_mem>(info, size, cmd);
      out = {};
      out.fd = -1;
      out.size = static_cast<uint32_t>(session_.board_weight_bytes());
      return;
    }
    case RKNN_QUERY_INPUT_DYNAMIC_RANGE: {
      auto& out = info_as<rknn_input_range>(info, size, cmd);
      check_index(true, out.index);
      if (!model_->dynamic()) {
        // As the board does (rknn_model_zoo#271): a warning, and MODEL_INVALID for a static model.
        log_warning("rknn_query: RKNN_QUERY_INPUT_DYNAMIC_RANGE on a static-shape model");
        throw ApiError(RKNN_ERR_MODEL_INVALID, "the model has no dynamic shape set");
      }
      const uint32_t index = out.index;
      const auto& set = model_->shape_set();
      const auto& first = set.front()[index];
      out.shape_number = static_cast<uint32_t>(set.size());
      out.fmt = first.size() == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
      copy_string(out.name, sizeof out.name, model_->inputs()[index].name);
      out.n_dims = static_cast<uint32_t>(first.size());
      for (size_t s = 0; s < set.size(); ++s) {
        const auto& d = set[s][index];
        const std::vector<int64_t> shown = d.size() == 4 ? std::vector<int64_t>{d[0], d[2], d[3], d[1]} : d;
        for (size_t k = 0; k < shown.size() && k < RKNN_MAX_DIMS; ++k)
          out.dyn_range[s][k] = static_cast<uint32_t>(shown[k]);
      }
      return;
    }
    default: break;
  }
  fail(RKNN_ERR_PARAM_INVALID, "query command {} is not supported by the host runtime", static_cast<int>(cmd));
}

// ---- inputs ------------------------------------------------------------------------------

Tensor HostContext::model_input(uint32_t index, std::span<const std::byte> bytes, const BufferFormat& format,
                                bool pass_through) const {
  const IoTensor& tensor = model_->inputs()[index];
  const auto& dims = shapes_[index];
  const rknn_tensor_type model_type = model_->runtime_type(tensor.dtype);
  if (pass_through) {
    // Unchanged bytes: they must already be the model's type in its native layout (docs/c-interface.md#input-conversions).
    const rknn_tensor_attr native = model_->attr(true, index, dims, AttrKind::native);
    if (format.type != model_type)
      fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): pass_through data must be the model's type {}, given {}", index,
           tensor.name, name_of(static_cast<TensorType>(model_type)), name_of(static_cast<TensorType>(format.type)));
    if (format.fmt != native.fmt && !(dims.size() == 4 && format.fmt == RKNN_TENSOR_NHWC))
      fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): pass_through data must be in the native layout {}, given {}",
           index, tensor.name, name_of(static_cast<TensorFormat>(native.fmt)),
           name_of(static_cast<TensorFormat>(format.fmt)));
  } else {
    // The vendor's table of types rknn_inputs_set converts from (docs/c-interface.md#input-conversions).
    const bool float_model_input = model_type == RKNN_TENSOR_FLOAT16 || model_type == RKNN_TENSOR_FLOAT32 ||
        model_->quantization(true, index).has_value();
    const bool accepted = format.type == model_type ||
        (float_model_input &&
         (format.type == RKNN_TENSOR_UINT8 || format.type == RKNN_TENSOR_FLOAT32 ||
          format.type == RKNN_TENSOR_FLOAT16 || format.type == RKNN_TENSOR_INT8));
    if (!accepted)
      fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): the model's {} input does not take {} data", index, tensor.name,
           name_of(static_cast<TensorType>(model_type)), name_of(static_cast<TensorType>(format.type)));
    if (format.fmt == RKNN_TENSOR_NC1HWC2)
      fail(RKNN_ERR_INPUT_INVALID, "input {} ('{}'): NC1HWC2 data is only taken with pass_through", index, tensor.name);
  }
  const DataType engine_type = tensor.dtype == DataType::float16 ? DataType::float32 : tensor.dtype;
  Tensor value(engine_type, dims);
  static const Normalization none;
  const bool normalize = !pass_through && dims.size() == 4 && format.fmt != RKNN_TENSOR_UNDEFINED;
  decode(bytes, format, normalize ? model_->normalization(index) : none, value);
  if (model_->float16_model()) round_to_float16(value);  // the NPU holds the input as float16
  if (const auto& params = model_->quantization(true, index)) {
    // The engine computes on real values: pass_through data are the integers q as they are; other
    // data are normalized values, quantized to the input's parameters (what the NPU reads).
    auto values = value.values<float>();
    if (pass_through)
      for (float& v : values) v = params->dequantize(static_cast<int32_t>(v));
    else quantize::fake_quantize(values, *params);
  }
  return value;
}

void HostContext::inputs_set(std::span<rknn_input> inputs) {
  ThreadClaim claim(*this);
  require_full_context("rknn_inputs_set");
  check_function(Function::inputs_set, "rknn_inputs_set");
  if (inputs.size() != model_->inputs().size())
    fail(RKNN_ERR_PARAM_INVALID, "n_inputs is {}, the model has {} inputs", inputs.size(), model_->inputs().size());
  std::vector<std::optional<Tensor>> staged(model_->inputs().size());
  for (const rknn_input& input : inputs) {
    check_index(true, input.index);
    if (staged[input.index]) fail(RKNN_ERR_PARAM_INVALID, "input {} is given twice", input.index);
    if (input.buf == nullptr) fail(RKNN_ERR_PARAM_INVALID, "input {}: buf is NULL", input.index);
    const auto& dims = shapes_[input.index];
    BufferFormat format;
    format.type = input.type;
    format.fmt = input.fmt;
    if (input.pass_through) {
      format = format_of(model_->attr(true, input.index, dims, AttrKind::native));
      format.type = input.type;
    } else if (dims.size() == 4 && input.fmt == RKNN_TENSOR_NHWC) {
      format.dims = {static_cast<uint32_t>(dims[0]), static_cast<uint32_t>(dims[2]), static_cast<uint32_t>(dims[3]),
                     static_cast<uint32_t>(dims[1])};
    } else {
      for (int64_t d : dims) format.dims.push_back(static_cast<uint32_t>(d));
    }
    const size_t needed = format.required_bytes();
    if (input.size < needed)
      fail(RKNN_ERR_PARAM_INVALID,
           "input {}: size {} is smaller than the {} bytes of {} data (check rknn_input.type: "
           "0 means FLOAT32)",
           input.index, input.size, needed, format.describe());
    staged[input.index] = model_input(input.index, {static_cast<const std::byte*>(input.buf), input.size}, format,
                                      input.pass_through != 0);
  }
  // The latest of rknn_inputs_set and rknn_set_io_mem gives an input its data.
  for (size_t i = 0; i < staged.size(); ++i) {
    pending_inputs_[i] = std::move(staged[i]);
    input_bindings_[i].reset();
  }
  cycle_open_ = true;  // these inputs are this thread's until it has taken the outputs
}

std::shared_ptr<HostMem> HostContext::live_mem(const std::weak_ptr<HostMem>& mem, std::string_view role) const {
  auto live = mem.lock();
  if (!live) fail(RKNN_ERR_PARAM_INVALID, "the memory bound to {} was destroyed; bind live memory again", role);
  return live;
}

std::vector<Tensor> HostContext::gather_inputs() {
  const bool emulate_cache = (flags_ & RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE) != 0;
  std::vector<Tensor> values;
  for (uint32_t i = 0; i < model_->inputs().size(); ++i) {
    if (const auto& binding = input_bindings_[i]) {
      const std::string role = fmt::format("input {}", i);
      const auto mem = live_mem(binding->mem, role);
      auto bytes = mem->device_view(emulate_cache);
      try {
        values.push_back(model_input(i, bytes, binding->format, binding->pass_through));
      } catch (const ApiError& e) {
        fail(e.code(),
             "{} ('{}'), bound with rknn_set_io_mem: {} (after rknn_set_input_shapes, bind again with the "
             "CURRENT attributes)",
             role, model_->inputs()[i].name, e.what());
      }
    } else if (pending_inputs_[i]) {
      values.push_back(pending_inputs_[i]->clone());
    } else {
      fail(RKNN_ERR_INPUT_INVALID,
           "input {} ('{}') has no data: call rknn_inputs_set or bind memory with "
           "rknn_set_io_mem first",
           i, model_->inputs()[i].name);
    }
  }
  return values;
}

// ---- run and outputs ---------------------------------------------------------------------

void HostContext::run(rknn_run_extend* extend) {
  ThreadClaim claim(*this);
  cycle_open_ = false;  // a failed run ends this thread's turn; a successful one opens it again below
  require_full_context("rknn_run");
  (void)extend;  // the documentation says it must be NULL at present; frame ids are not tracked
  if ((flags_ & RKNN_FLAG_MEM_ALLOC_OUTSIDE) != 0 && (!weight_mem_ || !internal_mem_))
    fail(RKNN_ERR_FAIL,
         "the context was made with RKNN_FLAG_MEM_ALLOC_OUTSIDE: call rknn_set_weight_mem and "
         "rknn_set_internal_mem before rknn_run");
  if ((flags_ & RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE) != 0 && !internal_mem_)
    fail(RKNN_ERR_FAIL, "the context was made with RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE: call rknn_set_internal_mem first");
  std::vector<Tensor> inputs = gather_inputs();
  // Held until the run is done, even if another thread destroys them meanwhile.
  const auto weights = weight_mem_ ? live_mem(*weight_mem_, "weight memory") : nullptr;
  const auto internal = bind_internal_mem();  // refuses memory destroyed since rknn_set_internal_mem
  custom_ops_->require_registered(session_->graph());
  const auto start = std::chrono::steady_clock::now();
  try {
    outputs_ = session_.run(inputs);
  } catch (const EngineError& e) {
    fail(RKNN_ERR_FAIL, "{}", e.what());
  }
  last_run_us_ =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  if (model_->float16_model())
    for (Tensor& t : outputs_) round_to_float16(t);  // the NPU writes float16
  has_run_ = true;
  if ((flags_ & RKNN_FLAG_COLLECT_PERF_MASK) != 0) perf_detail_ = perf_table();
  write_bound_outputs();
  // The outputs are this thread's until rknn_outputs_get, unless bound memory already holds them all.
  cycle_open_ = std::any_of(output_bindings_.begin(), output_bindings_.end(), [](const auto& b) { return !b; });
}

void HostContext::register_custom_ops(std::span<const rknn_custom_op> ops) {
  ThreadClaim claim(*this);
  require_full_context("rknn_register_custom_ops");
  check_function(Function::register_custom_ops, "rknn_register_custom_ops");
  custom_ops_->add(ops);
}

// The per-layer table of RKNN_QUERY_PERF_DETAIL, one line a step of the last run.
std::string HostContext::perf_table() const {
  std::string table =
      fmt::format("{:<5} {:<22} {:<22} {:>10}  {}\n", "ID", "OpType", "OutputShape", "Time(us)", "Node");
  double total = 0;
  int id = 0;
  for (const StepTime& step : session_->last_profile()) {
    table += fmt::format("{:<5} {:<22} {:<22} {:>10.1f}  {}\n", id++, step.op_type, dims_string(step.output_shape),
                         step.microseconds, step.node);
    total += step.microseconds;
  }
  table += fmt::format("Total operator time per frame (us): {:.1f}; rknn_run (us): {} on {} CPU threads\n", total,
                       last_run_us_, session_->threads());
  return table;
}

void HostContext::write_bound_outputs() {
  const bool emulate_cache = (flags_ & RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE) != 0;
  for (uint32_t i = 0; i < output_bindings_.size(); ++i) {
    const auto& binding = output_bindings_[i];
    if (!binding) continue;
    const auto mem = live_mem(binding->mem, fmt::format("output {}", i));
    try {
      encode_output(i, binding->format, mem->device_view(emulate_cache));
    } catch (const ApiError& e) {
      fail(e.code(),
           "output {} ('{}'), bound with rknn_set_io_mem: {} (after rknn_set_input_shapes, bind again with "
           "the CURRENT attributes)",
           i, model_->outputs()[i].name, e.what());
    }
  }
}

BufferFormat HostContext::output_format(uint32_t index, bool want_float) const {
  BufferFormat format = format_of(model_->attr(false, index, output_shapes_[index], AttrKind::normal));
  if (want_float &&
      (format.type == RKNN_TENSOR_FLOAT16 || format.type == RKNN_TENSOR_INT8 || format.type == RKNN_TENSOR_UINT8 ||
       format.type == RKNN_TENSOR_INT16))
    format.type = RKNN_TENSOR_FLOAT32;
  format.w_stride = 0;
  return format;
}

void HostContext::encode_output(uint32_t index, const BufferFormat& format, std::span<std::byte> target) const {
  const auto& params = model_->quantization(false, index);
  if (params && format.type == RKNN_TENSOR_INT8) encode(quantized_values(outputs_[index], *params), format, target);
  else encode(outputs_[index], format, target);
}

void HostContext::outputs_get(std::span<rknn_output> outputs, rknn_output_extend* extend) {
  ThreadClaim claim(*this);
  cycle_open_ = false;  // whatever happens, this thread's turn ends here
  require_full_context("rknn_outputs_get");
  check_function(Function::outputs_get, "rknn_outputs_get");
  (void)extend;
  if (!has_run_) fail(RKNN_ERR_OUTPUT_INVALID, "no results: call rknn_run first");
  if (outputs.size() > model_->outputs().size())
    fail(RKNN_ERR_PARAM_INVALID, "n_outputs is {}, the model has {} outputs", outputs.size(), model_->outputs().size());
  for (rknn_output& output : outputs) {
    check_index(false, output.index);
    const BufferFormat format = output_format(output.index, output.want_float != 0);
    const size_t needed = format.required_bytes();
    if (output.is_prealloc) {
      if (output.buf == nullptr)
        fail(RKNN_ERR_PARAM_INVALID, "output {}: is_prealloc is set but buf is NULL", output.index);
      if (output.size < needed)
        fail(RKNN_ERR_PARAM_INVALID, "output {}: size {} is smaller than the {} bytes of {}", output.index, output.size,
             needed, format.describe());
      encode_output(output.index, format, {static_cast<std::byte*>(output.buf), needed});
    } else {
      if (needed > std::numeric_limits<uint32_t>::max())
        fail(RKNN_ERR_OUTPUT_INVALID, "output {}: {} bytes of {} do not fit rknn_output.size (32-bit)", output.index,
             needed, format.describe());
      void* buffer = std::malloc(needed);
      if (buffer == nullptr) throw std::bad_alloc();
      {
        std::lock_guard lock(output_buffers_mutex_);
        runtime_output_buffers_.push_back(buffer);
      }
      encode_output(output.index, format, {static_cast<std::byte*>(buffer), needed});
      output.buf = buffer;
      output.size = static_cast<uint32_t>(needed);
    }
  }
}

void HostContext::outputs_release(std::span<rknn_output> outputs) {
  std::lock_guard lock(output_buffers_mutex_);
  for (rknn_output& output : outputs) {
    if (output.is_prealloc || output.buf == nullptr) continue;
    auto found = std::find(runtime_output_buffers_.begin(), runtime_output_buffers_.end(), output.buf);
    if (found == runtime_output_buffers_.end())
      fail(RKNN_ERR_PARAM_INVALID,
           "output {}: buf {} was not given out by rknn_outputs_get of this context (released "
           "twice?)",
           output.index, output.buf);
    std::free(*found);
    runtime_output_buffers_.erase(found);
    output.buf = nullptr;
  }
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
  // The attr names its tensor: by name when it has one (as queried attrs do), else by index
  // among the inputs.
  const std::string_view name(attr.name, strnlen(attr.name, RKNN_MAX_NAME_LEN));
  bool input = true;
  uint32_t index = attr.index;
  if (!name.empty()) {
    auto find = [&](const std::vector<IoTensor>& list) -> std::optional<uint32_t> {
      for (uint32_t i = 0; i < list.size(); ++i)
        if (list[i].name == name) return i;
      return std::nullopt;
    };
    if (auto i = find(model_->inputs())) {
      input = true;
      index = *i;
    } else if (auto o = find(model_->outputs())) {
      input = false;
      index = *o;
    } else {
      fail(RKNN_ERR_PARAM_INVALID, "attr.name '{}' is neither an input nor an output of the model", name);
    }
    if (index != attr.index)
      fail(RKNN_ERR_PARAM_INVALID, "attr.name '{}' is {} {}, but attr.index is {}", name, input ? "input" : "output",
           index, attr.index);
  } else {
    check_index(true, index);
  }
  const std::string role = fmt::format("{} {} ('{}')", input ? "input" : "output", index,
                                       (input ? model_->inputs() : model_->outputs())[index].name);
  BufferFormat format = format_of(attr);
  if (format.dims.empty()) fail(RKNN_ERR_PARAM_INVALID, "{}: attr.n_dims is 0", role);
  const size_t needed = format.required_bytes();
  if (mem->cpu_view().size() < needed)
    fail(RKNN_ERR_PARAM_INVALID,
         "{}: memory of {} bytes is smaller than the {} bytes of {} (allocate "
         "size_with_stride)",
         role, mem->cpu_view().size(), needed, format.describe());
  if (input) {
    // Validate now what can be: the layout against the current shape, and the type.
    std::vector<std::byte> probe(needed);
    (void)model_input(index, probe, format, attr.pass_through != 0);
    input_bindings_[index] = Binding{mem, format, attr.pass_through != 0};
    pending_inputs_[index].reset();
  } else {
    const rknn_tensor_type model_type = model_->runtime_type(model_->outputs()[index].dtype);
    // A float output may also be written FLOAT32 (a quantized one dequantized), as rknn_outputs_get's want_float.
    const bool float_output = model_type == RKNN_TENSOR_FLOAT16 || model_type == RKNN_TENSOR_FLOAT32 ||
        model_->quantization(false, index).has_value();
    if (format.type != model_type && !(float_output && format.type == RKNN_TENSOR_FLOAT32))
      fail(RKNN_ERR_PARAM_INVALID, "{}: the model's {} output cannot be written as {}", role,
           name_of(static_cast<TensorType>(model_type)), name_of(static_cast<TensorType>(format.type)));
    if (has_run_) {
      std::vector<std::byte> probe(needed);
      encode_output(index, format, probe);
    }
    output_bindings_[index] = Binding{mem, format, false};
  }
}

void HostContext::set_weight_mem(const std::shared_ptr<HostMem>& mem) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_weight_mem");
  // The weights are loaded from the model again, as the board loads them into the memory it
  // is given: memory bound before, perhaps destroyed since, is never read. The engine checks
  // the memory's size (RKNN_QUERY_MEM_SIZE's total_weight_size) and alignment.
  if (model_->quantized()) {
    // The board keeps int8 weights there (RKNN_QUERY_MEM_SIZE's figure); the engine computes with
    // float32 copies of the same grid values, so it only checks the memory's size and keeps it bound.
    const size_t needed = session_.board_weight_bytes();
    if (mem->cpu_view().size() < needed)
      fail(RKNN_ERR_PARAM_INVALID, "weight memory of {} bytes is smaller than the model's {} (RKNN_QUERY_MEM_SIZE)",
           mem->cpu_view().size(), needed);
    weight_mem_ = mem;
    return;
  }
  auto session = make_session();
  try {
    session->use_weight_memory(mem->cpu_view());
  } catch (const EngineError& e) {
    fail(RKNN_ERR_PARAM_INVALID, "{} (see RKNN_QUERY_MEM_SIZE; check the mem's offset)", e.what());
  }
  session_ = std::move(session);
  weight_mem_ = mem;
  plan_for_current_shapes();
}

void HostContext::set_internal_mem(const std::shared_ptr<HostMem>& mem) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_internal_mem");
  const size_t internal = internal_bytes();
  if (mem->cpu_view().size() < internal)
    fail(RKNN_ERR_PARAM_INVALID, "internal memory of {} bytes is smaller than the model's {} (RKNN_QUERY_MEM_SIZE)",
         mem->cpu_view().size(), internal);
  try {
    session_->use_arena(mem->cpu_view());
  } catch (const EngineError& e) {
    fail(RKNN_ERR_PARAM_INVALID, "internal memory: {} (check the mem's offset)", e.what());
  }
  internal_mem_ = mem;
}

// The engine keeps its intermediates in the caller's internal memory, as the NPU does: several
// contexts run one after another may share one buffer (rknn_internal_mem_reuse_demo).
std::shared_ptr<HostMem> HostContext::bind_internal_mem() {
  if (!internal_mem_) return nullptr;
  auto mem = live_mem(*internal_mem_, "internal memory");
  session_->use_arena(mem->cpu_view());
  return mem;
}

// RKNN_QUERY_MEM_SIZE's total_internal_size: enough for every shape of a dynamic model,
// since the board's demos size the internal memory before rknn_set_input_shapes.
size_t HostContext::internal_bytes() {
  if (!internal_bytes_) {
    size_t most = session_->stats().arena_bytes;
    if (model_->dynamic()) {
      try {
        for (const ShapeChoice& choice : model_->shape_set()) {
          session_->prepare(input_infos(choice));
          most = std::max(most, session_->stats().arena_bytes);
        }
        session_->prepare(input_infos(shapes_));  // back to the current shapes (a cached plan)
      } catch (const EngineError& e) {
        fail(RKNN_ERR_MODEL_INVALID, "{}", e.what());
      }
    }
    internal_bytes_ = most;
  }
  return *internal_bytes_;
}

// ---- dynamic shapes and cores ------------------------------------------------------------

void HostContext::set_input_shapes(std::span<rknn_tensor_attr> attrs) {
  ThreadClaim claim(*this);
  require_full_context("rknn_set_input_shapes");
  check_function(Function::set_input_shapes, "rknn_set_input_shapes");
  if (attrs.size() != model_->inputs().size())
    fail(RKNN_ERR_PARAM_INVALID, "n_inputs is {}, the model has {} inputs", attrs.size(), model_->inputs().size());
  ShapeChoice wanted(attrs.size());
  for (const rknn_tensor_attr& a : attrs) {
    check_index(true, a.index);
    const uint32_t n = std::min<uint32_t>(a.n_dims, RKNN_MAX_DIMS);
    const rknn_tensor_format expected_fmt = n == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
    if (a.fmt != expected_fmt)
      fail(RKNN_ERR_PARAM_INVALID, "input {}: fmt must be {} for a {}-D shape, given {}", a.index,
           name_of(static_cast<TensorFormat>(expected_fmt)), n, name_of(static_cast<TensorFormat>(a.fmt)));
    wanted[a.index] = onnx_dims(a);
  }
  const auto& set = model_->dynamic() ? model_->shape_set() : std::vector<ShapeChoice>{model_->initial_shapes()};
  const auto match = std::find(set.begin(), set.end(), wanted);
  if (match == set.end()) {
    std::string allowed;
    for (const ShapeChoice& choice : set) {
      allowed += "\n  ";
      for (size_t i = 0; i < choice.size(); ++i) {
        const auto& d = choice[i];
        allowed += fmt::format("{}{} {}", i ? ", " : "", d.size() == 4 ? "NHWC" : "UNDEFINED",
                               dims_string(d.size() == 4 ? std::vector<int64_t>{d[0], d[2], d[3], d[1]} : d));
      }
    }
    std::string hint;
    for (const rknn_tensor_attr& a : attrs) {
      const auto given = attr_dims(a);
      for (const ShapeChoice& choice : set)
        if (given.size() == 4 && choice[a.index] == given)
          hint = fmt::format("\n  input {}: dims {} are this shape in NCHW order; NHWC wants {}", a.index,
                             dims_string(given), dims_string({given[0], given[2], given[3], given[1]}));
    }
    std::string given_text;
    for (size_t i = 0; i < attrs.size(); ++i)
      given_text += fmt::format("{}{}", i ? ", " : "", dims_string(attr_dims(attrs[i])));
    fail(RKNN_ERR_FAIL, "shapes {} are not in the model's shape set; the supported shapes are:{}{}", given_text,
         allowed, hint);
  }
  if (wanted != shapes_ || !shapes_set_) {
    shapes_ = wanted;
    plan_for_current_shapes();
    // Data given for the old shapes does not fit the new ones.
    for (auto& pending : pending_inputs_) pending.reset();
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
