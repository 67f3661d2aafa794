#pragma once
// Context: move-only RAII over an rknn_context, on whichever runtime the loader opened.
//
//   auto ctx = Context::from_file("model.rknn");                  // or from_buffer, from_model_memory
//   ctx.input_info(0).dims(); ctx.output_info("logits", AttrQuery::native);
//   ctx.set_input_shapes(1);                                      // dynamic shapes: a group of the set
//   ctx.set_inputs(nhwc_view(rgb.data(), {1, 3, h, w}));          // general API: type and layout deduced
//   ctx.run();
//   auto out = ctx.outputs();                                     // released at end of scope
//   ctx.native_handle()                                           // the rknn_context, for interop
//
// Thread rule: one thread uses a context at a time (the runtime's contexts are not thread-safe;
// docs/c-interface.md#threads). In debug builds (or with RKNNXX_THREAD_CHECKS=1) the first thread to
// use a Context owns it until it calls release_thread() (a move also hands it over); a call from
// any other thread throws Error(RKNN_ERR_CTX_INVALID). Use one Context per thread (dup()) to scale.
//
// Ownership: Context owns its rknn_context (move-only; destroyed with it, or now by reset());
// ContextRef is a copyable non-owning reference to it (what IoBinding holds), which follows the
// context when the Context object moves. Context::adopt(handle) takes over a context C code made;
// Context::release() hands the handle back to C code without destroying anything.
//
// Children: ContextRef, Mem, Outputs and IoBinding share the context's state; when the Context is
// destroyed it destroys their memory first, and any later use of them throws instead of touching
// freed memory. After release() (refused while they hold memory) they refuse every use the same way.

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/platform.hpp>
#include <rknnxx/core/shape_set.hpp>
#include <rknnxx/core/std_light.hpp>  // std::chrono::microseconds, std::shared_ptr
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/context_state.hpp>
#include <rknnxx/runtime/fd_range.hpp>
#include <rknnxx/runtime/flags.hpp>
#include <rknnxx/runtime/loader.hpp>
#include <rknnxx/runtime/mem.hpp>
#include <rknnxx/runtime/outputs.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/view.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rknnxx {

class Context;
class ContextRef;
class CustomOp;  // runtime/custom_op.hpp, which register_custom_op callers include
class IoBinding;

struct MemSize {
  std::uint32_t total_weight_size = 0;
  std::uint32_t total_internal_size = 0;
  std::uint64_t total_dma_allocated_size = 0;
  std::uint32_t total_sram_size = 0;
  std::uint32_t free_sram_size = 0;
};

// A tensor named by its index or by its name.
class TensorRef {
public:
  template <std::integral I> constexpr TensorRef(I index) noexcept
      : index_(static_cast<std::uint32_t>(index)) {}                                      // NOLINT
  constexpr TensorRef(const char* name) noexcept : name_(name), by_name_(true) {}         // NOLINT
  constexpr TensorRef(std::string_view name) noexcept : name_(name), by_name_(true) {}    // NOLINT
  constexpr TensorRef(const std::string& name) noexcept : name_(name), by_name_(true) {}  // NOLINT
  [[nodiscard]] constexpr bool by_name() const noexcept { return by_name_; }
  [[nodiscard]] constexpr std::uint32_t index() const noexcept { return index_; }
  [[nodiscard]] constexpr std::string_view name() const noexcept { return name_; }

private:
  std::uint32_t index_ = 0;
  std::string_view name_;
  bool by_name_ = false;
};

// How set_input_shapes reads 4-D dims: as the runtime reports them (NHWC), or in the model's
// framework order (NCHW, as the toolkit's dynamic_input lists them).
enum class DimsOrder : std::uint8_t { runtime, nchw };

// The result of a shape switch: the group, and the attributes of the current shape.
struct ShapeChange {
  std::size_t group = 0;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::uint64_t generation = 0;
};

// One input of rknn_inputs_set, from a typed view (element type and layout deduced).
class InputData {
public:
  template <class T, class L>
  InputData(const TensorView<T, L>& v, bool pass_through = false)  // NOLINT: views convert implicitly
      : data_(v.data()), bytes_(bytes_for<std::remove_const_t<T>>(v.span_size())),
        type_(tensor_type_of<std::remove_const_t<T>>), format_(L::format), dims_(v.dims()),
        dense_(v.mapping().is_exhaustive()), pass_through_(pass_through) {}

  [[nodiscard]] const void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] TensorType type() const noexcept { return type_; }
  [[nodiscard]] TensorFormat format() const noexcept { return format_; }
  [[nodiscard]] const Dims& dims() const noexcept { return dims_; }
  [[nodiscard]] bool dense() const noexcept { return dense_; }
  [[nodiscard]] bool pass_through() const noexcept { return pass_through_; }

private:
  const void* data_;
  std::size_t bytes_;
  TensorType type_;
  TensorFormat format_;
  Dims dims_;
  bool dense_;
  bool pass_through_;
};

namespace detail {

// The operations on a context, shared by the owning Context and the non-owning ContextRef: both
// hold the context's state, so a ContextRef keeps working when the Context object moves and
// refuses (Error, RKNN_ERR_CTX_INVALID) once the Context is destroyed, reset or released.
class ContextOps {
public:
  using Options = ContextOptions;

  // A second context for the same model sharing its weights (rknn_dup_context), e.g. one per thread.
  [[nodiscard]] Context dup() const;

  [[nodiscard]] rknn_context native_handle() const { return use("rknnxx::Context::native_handle").handle; }
  [[nodiscard]] const Runtime& runtime() const { return *use("rknnxx::Context::runtime").runtime; }
  [[nodiscard]] InitFlags flags() const { return use("rknnxx::Context::flags").options.flags; }

  // ---- queries ------------------------------------------------------------------------------
  [[nodiscard]] IoCount io_count() const { return use("rknnxx::Context::io_count").io; }
  [[nodiscard]] std::uint32_t num_inputs() const { return io_count().inputs; }
  [[nodiscard]] std::uint32_t num_outputs() const { return io_count().outputs; }

  [[nodiscard]] TensorInfo input_info(TensorRef t, AttrQuery q = AttrQuery::normal) const;
  [[nodiscard]] TensorInfo output_info(TensorRef t, AttrQuery q = AttrQuery::normal) const;
  [[nodiscard]] std::vector<TensorInfo> input_infos(AttrQuery q = AttrQuery::normal) const;
  [[nodiscard]] std::vector<TensorInfo> output_infos(AttrQuery q = AttrQuery::normal) const;
  [[nodiscard]] std::uint32_t input_index(TensorRef t) const { return resolve(true, t); }
  [[nodiscard]] std::uint32_t output_index(TensorRef t) const { return resolve(false, t); }

  // The duration of the last run (RKNN_QUERY_PERF_RUN).
  [[nodiscard]] std::chrono::microseconds last_run_duration() const;
  // Per-layer timings (RKNN_QUERY_PERF_DETAIL; needs InitFlag::collect_perf and a run).
  [[nodiscard]] std::string perf_detail() const;
  [[nodiscard]] MemSize mem_size() const;
  [[nodiscard]] SdkVersion sdk_version() const;
  [[nodiscard]] std::string custom_string() const;

  // ---- dynamic shapes ---------------------------------------------------------------------
  // The model's shape set (dims in the runtime's order), or nullopt for a static-shape model.
  // Asked of the runtime on first use only: a static model answers the question with a warning
  // and an error line in the runtime's log (rknn_model_zoo#271), which an application that never
  // asks about shapes should not see.
  [[nodiscard]] const std::optional<ShapeSet<>>& shape_set() const;
  [[nodiscard]] bool is_dynamic() const { return shape_set().has_value(); }
  // The group chosen by the last set_input_shapes (nullopt before the first).
  [[nodiscard]] std::optional<std::size_t> current_shape_group() const;
  // Bumped by every switch to another group: bindings made for an older generation are stale.
  [[nodiscard]] std::uint64_t shape_generation() const { return use("rknnxx::Context::shape_generation").generation; }
  // The attributes of the current shape (for a static model, the only one).
  [[nodiscard]] const std::vector<TensorInfo>& current_inputs() const;
  [[nodiscard]] const std::vector<TensorInfo>& current_outputs() const;

  ShapeChange set_input_shapes(std::size_t group);
  ShapeChange set_input_shapes(std::span<const Dims> dims, DimsOrder order = DimsOrder::runtime);
  ShapeChange set_input_shapes(std::initializer_list<Dims> dims, DimsOrder order = DimsOrder::runtime);

  // ---- cores ---------------------------------------------------------------------------------
  void set_core_mask(CoreMask mask);
  // Checked at compile time: CoreMaskFor<Platform::rk3566>{CoreMask::core_0_1} does not compile.
  template <Platform P> void set_core_mask(CoreMaskFor<P> mask) {
    static_assert(platform_traits<P>.multi_core(), "this platform has one NPU core: it has no core mask to set");
    set_core_mask(mask.value());
  }
  void set_batch_core_num(int cores);

  // ---- inference -------------------------------------------------------------------------------
  void run();

  // ---- custom operators (docs/custom-operators.md) -----------------------------------------
  // The model's nodes of each op's type run through it from the next run on. Needs a model
  // converted with those op types in its config's custom_ops; an op type registered twice, or one
  // the runtime refuses, throws Error from rknn_register_custom_ops and registers none of `ops`.
  // Defined in runtime/impl/custom_op.hpp, which <rknnxx/runtime/custom_op.hpp> brings to every caller (a
  // caller has a CustomOp); declared RKNNXX_DECL so that they are inline wherever they are declared.
  RKNNXX_DECL void register_custom_ops(std::vector<CustomOp> ops);
  RKNNXX_DECL void register_custom_op(CustomOp op);

  // The general API: every input at once, from typed views; the runtime converts type and layout.
  void set_inputs(std::span<const InputData> inputs);
  template <class... V>
    requires(sizeof...(V) > 0 && (AnyTensorView<V> && ...))
  void set_inputs(const V&... views) {
    const InputData inputs[] = {InputData(views)...};
    set_inputs(std::span<const InputData>(inputs));
  }

  // want_float turns float16 and the quantized types into float32; other types (float32, a detector's
  // int64 labels) come as they are (docs/c-interface.md#outputs).
  static bool converts_to_float(const TensorInfo& info);

  // The outputs of the last run, as float32 (dequantized) or in the model's type; released when
  // the returned object goes.
  [[nodiscard]] Outputs outputs(OutputType type = OutputType::float32);
  // One choice per output (want_float is per output in the C interface).
  [[nodiscard]] Outputs outputs(std::span<const OutputType> types);

  // ---- memory ----------------------------------------------------------------------------------
  [[nodiscard]] Mem create_mem(std::uint64_t size, MemAlloc flags = MemAlloc::default_flags);
  // Memory the application allocated: a dma-buf (a camera's or display's buffer, a DmaHeap
  // allocation), a memfd, or the fd of memory another context made. `virt` maps the fd from its
  // start; the tensor's `size` bytes start `offset` bytes into it (MemAccess::data() points
  // there). The Mem owns the runtime's descriptor only: the fd and the mapping stay the
  // application's and must outlive it. For a dma-buf, Mem::set_cpu_access_hook adds the kernel's
  // sync to every access window.
  [[nodiscard]] Mem wrap_fd(int fd, void* virt, std::uint64_t size, std::int64_t offset = 0);
  [[nodiscard]] Mem wrap_phys(std::uint64_t phys, void* virt, std::uint32_t size);
  void set_weight_mem(const Mem& m);
  void set_internal_mem(const Mem& m);
  // The low-level zero-copy bind (IoBinding does this for you).
  void set_io_mem(const Mem& m, const TensorInfo& attr);

  // Hands the context over: the next call may come from any thread (see the thread rule above).
  void release_thread() noexcept;

protected:
  friend class rknnxx::IoBinding;
  ContextOps() noexcept = default;
  explicit ContextOps(std::shared_ptr<ContextState> state) noexcept : state_(std::move(state)) {}
  ContextOps(const ContextOps&) = default;
  ContextOps(ContextOps&&) noexcept = default;
  ContextOps& operator=(const ContextOps&) = default;
  ContextOps& operator=(ContextOps&&) noexcept = default;
  ~ContextOps() = default;

  // Reads what every later call needs: versions (checked once per runtime), counts, shape set,
  // the current attributes.
  void initialize();

  // Reads the shape set once (see shape_set()).
  static void probe_shapes(ContextState& s);

  ContextState& use(std::string_view call) const;

  template <class Info> void query(rknn_query_cmd cmd, Info& info, std::string_view call) const {
    auto& s = use(call);
    s.check(s.api().rknn_query(s.handle, cmd, &info, sizeof(Info)), call);
  }

  TensorInfo query_attr(bool input, std::uint32_t index, AttrQuery q) const;

  std::uint32_t resolve(bool input, TensorRef t) const;

  const ShapeSet<>& require_dynamic(std::string_view call) const;

  std::string current_inputs_name(std::size_t i) const { return std::string(state_->current_inputs.at(i).name()); }

  std::string allowed_text() const;

  ShapeChange switch_to(std::size_t group);

  // Tracks memory made through the context, so that its destruction destroys it first.
  Mem track(rknn_tensor_mem* m);
  rknn_tensor_mem* own(const Mem& m, std::string_view call) const;

  std::shared_ptr<ContextState> state_;
};

}  // namespace detail

class Context : public detail::ContextOps {
public:
  using Options = ContextOptions;

  // An empty Context (as after a move, reset() or release()): every call but the assignments
  // refuses it.
  Context() noexcept = default;

  [[nodiscard]] static Context from_file(const std::string& path, Options options = {});
  [[nodiscard]] static Context from_buffer(std::span<const std::byte> model, Options options = {});
  // Zero-copy model memory (RKNN_FLAG_MODEL_BUFFER_ZERO_COPY): the model already sits in runtime
  // memory, e.g. Mem::allocate_without_context(size) filled by the application. The Context keeps
  // the memory alive until it is destroyed, as the runtime requires.
  [[nodiscard]] static Context from_model_memory(Mem model, Options options = {}, std::uint32_t model_size = 0);
  // Takes ownership of a context C code made (rknn_init or rknn_dup_context on `options.runtime`,
  // null: Runtime::load()); the Context destroys it. On an Error (e.g. a handle the runtime does
  // not know) nothing is adopted and the handle stays the caller's.
  [[nodiscard]] static Context adopt(rknn_context handle, Options options = {});

  Context(Context&& o) noexcept { take(std::move(o)); }
  Context& operator=(Context&& o) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() { destroy(); }

  // False when empty (moved from, reset or released).
  [[nodiscard]] explicit operator bool() const noexcept { return state_ != nullptr; }
  // A non-owning reference (Context also converts to ContextRef implicitly).
  [[nodiscard]] ContextRef ref() const noexcept;

  // Destroys the context now (with the memory and outputs its children still hold); the Context
  // becomes empty and its children refuse every later use.
  void reset() noexcept { destroy(); }

  // Hands the handle to C code, which destroys it (rknn_destroy); nothing is destroyed here and
  // the Context becomes empty. Outputs still held go back to the runtime first; ContextRef,
  // Outputs and IoBinding objects refuse every later use. Refused (Error, nothing changes) while
  // C++ objects hold runtime memory made through the context (reset each Mem and IoBinding, or
  // hand a Mem to the C code with Mem::release()), while C++ custom operators are registered on
  // it (their callables live here), and for a context running from model memory this Context owns.
  [[nodiscard]] rknn_context release();

private:
  friend class detail::ContextOps;  // dup()
  friend class ContextRef;
  Context(std::shared_ptr<detail::ContextState> state, Options options);

  static Context init(void* model, std::uint32_t size, Options options, rknn_init_extend* ext, const std::string& what);

  void take(Context&& o) noexcept;

  static void give_back_outputs(detail::ContextState& s) noexcept;

  void destroy() noexcept;

  Mem model_mem_;
};

// A non-owning reference to a Context's runtime context: copyable, every operation of Context
// but the ownership ones. It follows the context when the Context object moves; once the
// Context is destroyed, reset or released, every call throws Error (RKNN_ERR_CTX_INVALID).
class ContextRef : public detail::ContextOps {
public:
  ContextRef(const Context& ctx) noexcept : ContextOps(ctx.state_) {}  // NOLINT: a Context converts implicitly
  ContextRef(const ContextRef&) = default;
  ContextRef(ContextRef&&) noexcept = default;
  ContextRef& operator=(const ContextRef&) = default;
  ContextRef& operator=(ContextRef&&) noexcept = default;
  ~ContextRef() = default;

  // False when the referenced Context was empty, or has since been destroyed, reset or released.
  [[nodiscard]] explicit operator bool() const noexcept { return state_ != nullptr && state_->alive; }
};

inline ContextRef Context::ref() const noexcept { return ContextRef(*this); }

}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/runtime/impl/context.hpp>
#endif
