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
// reference anchors 3.7). In debug builds (or with RKNNXX_THREAD_CHECKS=1) the first thread to
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
#include <rknnxx/runtime/context_state.hpp>
#include <rknnxx/runtime/custom_op.hpp>
#include <rknnxx/runtime/fd_range.hpp>
#include <rknnxx/runtime/flags.hpp>
#include <rknnxx/runtime/loader.hpp>
#include <rknnxx/runtime/mem.hpp>
#include <rknnxx/runtime/outputs.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/view.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rknnxx {

class Context;
class ContextRef;
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

  [[nodiscard]] TensorInfo input_info(TensorRef t, AttrQuery q = AttrQuery::normal) const {
    return query_attr(true, input_index(t), q);
  }
  [[nodiscard]] TensorInfo output_info(TensorRef t, AttrQuery q = AttrQuery::normal) const {
    return query_attr(false, output_index(t), q);
  }
  [[nodiscard]] std::vector<TensorInfo> input_infos(AttrQuery q = AttrQuery::normal) const {
    std::vector<TensorInfo> v;
    for (std::uint32_t i = 0, n = num_inputs(); i < n; ++i) v.push_back(query_attr(true, i, q));
    return v;
  }
  [[nodiscard]] std::vector<TensorInfo> output_infos(AttrQuery q = AttrQuery::normal) const {
    std::vector<TensorInfo> v;
    for (std::uint32_t i = 0, n = num_outputs(); i < n; ++i) v.push_back(query_attr(false, i, q));
    return v;
  }
  [[nodiscard]] std::uint32_t input_index(TensorRef t) const { return resolve(true, t); }
  [[nodiscard]] std::uint32_t output_index(TensorRef t) const { return resolve(false, t); }

  // The duration of the last run (RKNN_QUERY_PERF_RUN).
  [[nodiscard]] std::chrono::microseconds last_run_duration() const {
    rknn_perf_run p{};
    query(RKNN_QUERY_PERF_RUN, p, "rknn_query(RKNN_QUERY_PERF_RUN)");
    return std::chrono::microseconds(p.run_duration);
  }
  // Per-layer timings (RKNN_QUERY_PERF_DETAIL; needs InitFlag::collect_perf and a run).
  [[nodiscard]] std::string perf_detail() const {
    rknn_perf_detail p{};
    query(RKNN_QUERY_PERF_DETAIL, p, "rknn_query(RKNN_QUERY_PERF_DETAIL)");
    return p.perf_data != nullptr ? std::string(p.perf_data, ::strnlen(p.perf_data, p.data_len)) : std::string();
  }
  [[nodiscard]] MemSize mem_size() const {
    rknn_mem_size m{};
    query(RKNN_QUERY_MEM_SIZE, m, "rknn_query(RKNN_QUERY_MEM_SIZE)");
    return {m.total_weight_size, m.total_internal_size, m.total_dma_allocated_size, m.total_sram_size,
            m.free_sram_size};
  }
  [[nodiscard]] SdkVersion sdk_version() const {
    rknn_sdk_version v{};
    query(RKNN_QUERY_SDK_VERSION, v, "rknn_query(RKNN_QUERY_SDK_VERSION)");
    SdkVersion s{std::string(v.api_version, ::strnlen(v.api_version, sizeof v.api_version)),
                 std::string(v.drv_version, ::strnlen(v.drv_version, sizeof v.drv_version)),
                 {}};
    s.api_version = Version::parse(s.api).value_or(Version{});
    return s;
  }
  [[nodiscard]] std::string custom_string() const {
    rknn_custom_string c{};
    query(RKNN_QUERY_CUSTOM_STRING, c, "rknn_query(RKNN_QUERY_CUSTOM_STRING)");
    return {c.string, ::strnlen(c.string, sizeof c.string)};
  }

  // ---- dynamic shapes ---------------------------------------------------------------------
  // The model's shape set (dims in the runtime's order), or nullopt for a static-shape model.
  // Asked of the runtime on first use only: a static model answers the question with a warning
  // and an error line in the runtime's log (rknn_model_zoo#271), which an application that never
  // asks about shapes should not see.
  [[nodiscard]] const std::optional<ShapeSet<>>& shape_set() const {
    auto& s = use("rknnxx::Context::shape_set");
    probe_shapes(s);
    return s.shapes;
  }
  [[nodiscard]] bool is_dynamic() const { return shape_set().has_value(); }
  // The group chosen by the last set_input_shapes (nullopt before the first).
  [[nodiscard]] std::optional<std::size_t> current_shape_group() const {
    return use("rknnxx::Context::current_shape_group").group;
  }
  // Bumped by every switch to another group: bindings made for an older generation are stale.
  [[nodiscard]] std::uint64_t shape_generation() const { return use("rknnxx::Context::shape_generation").generation; }
  // The attributes of the current shape (for a static model, the only one).
  [[nodiscard]] const std::vector<TensorInfo>& current_inputs() const {
    return use("rknnxx::Context::current_inputs").current_inputs;
  }
  [[nodiscard]] const std::vector<TensorInfo>& current_outputs() const {
    return use("rknnxx::Context::current_outputs").current_outputs;
  }

  ShapeChange set_input_shapes(std::size_t group) {
    constexpr std::string_view call = "rknn_set_input_shapes";
    const auto& set = require_dynamic(call);
    if (group >= set.num_shapes())
      throw Error(
          Errc::param_invalid, std::string(call),
          fmt::format("shape group {} is outside the model's {} groups:{}", group, set.num_shapes(), allowed_text()));
    return switch_to(group);
  }
  ShapeChange set_input_shapes(std::span<const Dims> dims, DimsOrder order = DimsOrder::runtime) {
    constexpr std::string_view call = "rknn_set_input_shapes";
    const auto& set = require_dynamic(call);
    std::vector<Dims> given(dims.begin(), dims.end());
    if (order == DimsOrder::nchw)
      for (auto& d : given) d = nchw_to_nhwc(d);
    if (given.size() != set.num_inputs())
      throw Error(
          Errc::param_invalid, std::string(call),
          fmt::format("{} shapes given for a model of {} inputs:{}", given.size(), set.num_inputs(), allowed_text()));
    if (auto g = set.find(given)) return switch_to(*g);
    std::string given_text;
    for (const auto& d : given) given_text += fmt::format("{}{}", given_text.empty() ? "" : ", ", dims_text(d));
    // The classic mistake: NCHW dims labelled NHWC (rknn-superresolution#3).
    std::string hint;
    std::vector<Dims> swapped = given;
    for (auto& d : swapped) d = nchw_to_nhwc(d);
    if (order == DimsOrder::runtime && set.contains(swapped)) {
      for (std::size_t i = 0; i < given.size(); ++i)
        if (given[i].rank() == 4 && !(swapped[i] == given[i]))
          hint +=
              fmt::format("\n  input {} \"{}\": {} is in NCHW order (the model's framework order), but the runtime "
                          "takes 4-D shapes in NHWC order: {}. Pass {} or use DimsOrder::nchw.",
                          i, current_inputs_name(i), dims_text(given[i]), dims_text(swapped[i]), dims_text(swapped[i]));
    }
    throw Error(Errc::param_invalid, std::string(call),
                fmt::format("shapes {} are not in the model's shape set; the allowed shapes are:{}{}", given_text,
                            allowed_text(), hint));
  }
  ShapeChange set_input_shapes(std::initializer_list<Dims> dims, DimsOrder order = DimsOrder::runtime) {
    return set_input_shapes(std::span<const Dims>(dims.begin(), dims.size()), order);
  }

  // ---- cores ---------------------------------------------------------------------------------
  void set_core_mask(CoreMask mask) {
    auto& s = use("rknn_set_core_mask");
    if (s.options.platform) {
      const auto& info = platform_info(*s.options.platform);
      if (!info.multi_core())
        throw Error(Errc::param_invalid, "rknn_set_core_mask",
                    fmt::format("{} has one NPU core: it has no core mask to set", info.name));
      check_core_mask(*s.options.platform, mask);
    }
    s.check(s.require(s.api().rknn_set_core_mask, "rknn_set_core_mask")(s.handle, static_cast<rknn_core_mask>(mask)),
            "rknn_set_core_mask");
  }
  // Checked at compile time: CoreMaskFor<Platform::rk3566>{CoreMask::core_0_1} does not compile.
  template <Platform P> void set_core_mask(CoreMaskFor<P> mask) {
    static_assert(platform_traits<P>.multi_core(), "this platform has one NPU core: it has no core mask to set");
    set_core_mask(mask.value());
  }
  void set_batch_core_num(int cores) {
    auto& s = use("rknn_set_batch_core_num");
    const std::uint32_t max = s.options.platform ? platform_info(*s.options.platform).npu_cores : 3;
    if (cores < 1 || static_cast<std::uint32_t>(cores) > max)
      throw Error(Errc::param_invalid, "rknn_set_batch_core_num",
                  fmt::format("{} cores asked; {} has 1..{}", cores,
                              s.options.platform ? name_of(*s.options.platform) : std::string_view("an NPU"), max));
    s.check(s.require(s.api().rknn_set_batch_core_num, "rknn_set_batch_core_num")(s.handle, cores),
            "rknn_set_batch_core_num");
  }

  // ---- inference -------------------------------------------------------------------------------
  void run() {
    auto& s = use("rknn_run");
    std::string dropped, destroyed;
    const auto add = [](std::string& list, const std::string& label) {
      list += fmt::format("{}{}", list.empty() ? "" : ", ", label);
    };
    for (const auto& b : s.bound)
      if (!b.life->alive) add(b.app_owned ? destroyed : dropped, b.label);
    if (!dropped.empty())
      throw Error(Errc::ctx_invalid, "rknn_run",
                  fmt::format("the zero-copy memory bound to {} went away with its IoBinding; bind new memory to "
                              "them (another IoBinding) before running",
                              dropped));
    if (!destroyed.empty())
      throw Error(Errc::ctx_invalid, "rknn_run",
                  fmt::format("the application's memory bound to {} was destroyed (or released to C code) by its Mem; "
                              "bind new memory to them before running",
                              destroyed));
    if (s.has_bindings && s.bound_generation != s.generation)
      throw Error(Errc::param_invalid, "rknn_run",
                  "stale zero-copy binding: the input shapes changed after memory was bound with rknn_set_io_mem; "
                  "switch shapes through IoBinding::set_input_shapes or call IoBinding::rebind()");
    const int rc = s.api().rknn_run(s.handle, nullptr);
    if (rc < 0)  // an exception of a C++ custom operator is the better explanation
      for (const auto& op : s.custom_ops)
        if (std::string what = op->take_error(); !what.empty()) s.fail(static_cast<Errc>(rc), "rknn_run", what);
    s.check(rc, "rknn_run");
  }

  // ---- custom operators (docs/custom-operators.md) -----------------------------------------
  // The model's nodes of each op's type run through it from the next run on. Needs a model
  // converted with those op types in its config's custom_ops; an op type registered twice, or one
  // the runtime refuses, throws Error from rknn_register_custom_ops and registers none of `ops`.
  void register_custom_ops(std::vector<CustomOp> ops) {
    auto& s = use("rknn_register_custom_ops");
    auto reg = s.require(s.api().rknn_register_custom_ops, "rknn_register_custom_ops");
    if (ops.empty()) throw Error(Errc::param_invalid, "rknn_register_custom_ops", "no custom operators given");
    std::vector<std::shared_ptr<CustomOpBinding>> bindings;
    std::vector<rknn_custom_op> abi;
    for (CustomOp& op : ops) {
      bindings.push_back(std::make_shared<CustomOpBinding>(std::move(op), s.api().rknn_custom_op_get_op_attr));
      abi.push_back(bindings.back()->abi());
    }
    s.check(reg(s.handle, abi.data(), static_cast<std::uint32_t>(abi.size())), "rknn_register_custom_ops");
    s.custom_ops.insert(s.custom_ops.end(), bindings.begin(), bindings.end());
  }
  void register_custom_op(CustomOp op) {
    std::vector<CustomOp> ops;
    ops.push_back(std::move(op));
    register_custom_ops(std::move(ops));
  }

  // The general API: every input at once, from typed views; the runtime converts type and layout.
  void set_inputs(std::span<const InputData> inputs) {
    auto& s = use("rknn_inputs_set");
    if (inputs.size() != s.io.inputs)
      throw Error(Errc::param_invalid, "rknn_inputs_set",
                  fmt::format("{} inputs given, the model has {}", inputs.size(), s.io.inputs));
    std::vector<rknn_input> abi(inputs.size());
    for (std::uint32_t i = 0; i < inputs.size(); ++i) {
      const InputData& in = inputs[i];
      const TensorInfo& cur = s.current_inputs[i];
      if (!in.dense())
        throw Error(Errc::param_invalid, "rknn_inputs_set",
                    "rknn_inputs_set takes dense buffers; a strided view goes through IoBinding", cur.id());
      if (!in.pass_through()) {
        const Dims want = cur.dims();
        const bool four = want.rank() == 4;
        const Dims expected = four && in.format() == TensorFormat::nchw ? nhwc_to_nchw(want) : want;
        const bool fits = in.format() == TensorFormat::undefined || !four ? in.dims().elements() == want.elements()
                                                                          : in.dims() == expected;
        if (!fits)
          throw Error(Errc::param_invalid, "rknn_inputs_set",
                      fmt::format("the {} view has dims {}, the current input shape is {} {}{}", name_of(in.format()),
                                  dims_text(in.dims()), name_of(cur.format()), dims_text(want),
                                  is_dynamic() ? " (switch shapes with set_input_shapes first)" : ""),
                      cur.id());
      }
      if (in.bytes() > UINT32_MAX)
        throw Error(Errc::param_invalid, "rknn_inputs_set", "an input exceeds 4 GiB", cur.id());
      abi[i].index = i;
      abi[i].buf = const_cast<void*>(in.data());
      abi[i].size = static_cast<std::uint32_t>(in.bytes());
      abi[i].pass_through = in.pass_through() ? 1 : 0;
      abi[i].type = static_cast<rknn_tensor_type>(in.type());
      abi[i].fmt = static_cast<rknn_tensor_format>(in.format());
    }
    s.check(s.require(s.api().rknn_inputs_set, "rknn_inputs_set")(s.handle, static_cast<std::uint32_t>(abi.size()),
                                                                  abi.data()),
            "rknn_inputs_set");
  }
  template <class... V>
    requires(sizeof...(V) > 0 && (AnyTensorView<V> && ...))
  void set_inputs(const V&... views) {
    const InputData inputs[] = {InputData(views)...};
    set_inputs(std::span<const InputData>(inputs));
  }

  // want_float turns float16 and the quantized types into float32; other types (float32, a detector's
  // int64 labels) come as they are (docs/c-interface.md#outputs).
  static bool converts_to_float(const TensorInfo& info) {
    const TensorType t = info.type();
    return t == TensorType::float16 || t == TensorType::int8 || t == TensorType::uint8 || t == TensorType::int16;
  }

  // The outputs of the last run, as float32 (dequantized) or in the model's type; released when
  // the returned object goes.
  [[nodiscard]] Outputs outputs(OutputType type = OutputType::float32) {
    std::vector<OutputType> types(num_outputs(), type);
    return outputs(types);
  }
  // One choice per output (want_float is per output in the C interface).
  [[nodiscard]] Outputs outputs(std::span<const OutputType> types) {
    auto& s = use("rknn_outputs_get");
    if (types.size() != s.io.outputs)
      throw Error(Errc::param_invalid, "rknn_outputs_get",
                  fmt::format("{} output types given, the model has {} outputs", types.size(), s.io.outputs));
    std::vector<rknn_output> outs(s.io.outputs);
    std::vector<TensorInfo> infos;
    for (std::uint32_t i = 0; i < s.io.outputs; ++i) {
      const bool want_float = types[i] == OutputType::float32;
      outs[i].index = i;
      outs[i].want_float = want_float ? 1 : 0;
      const TensorInfo& cur = s.current_outputs[i];
      infos.push_back(want_float && converts_to_float(cur) ? cur.with(TensorType::float32, cur.format()) : cur);
    }
    s.check(s.require(s.api().rknn_outputs_get, "rknn_outputs_get")(s.handle, s.io.outputs, outs.data(), nullptr),
            "rknn_outputs_get");
    // An output whose shape the run decided (a detector's boxes) comes smaller than the bound the
    // attributes reported: its dims are the CURRENT ones after the run (docs/c-interface.md#run-time-output-shapes).
    for (std::uint32_t i = 0; i < s.io.outputs; ++i) {
      if (outs[i].size != infos[i].size()) {
        const TensorInfo cur = query_attr(false, i, AttrQuery::current);
        infos[i] = types[i] == OutputType::float32 && converts_to_float(cur)
            ? cur.with(TensorType::float32, cur.format())
            : cur;
      }
    }
    return Outputs(state_, std::move(outs), std::move(infos));
  }

  // ---- memory ----------------------------------------------------------------------------------
  [[nodiscard]] Mem create_mem(std::uint64_t size, MemAlloc flags = MemAlloc::default_flags) {
    auto& s = use("rknn_create_mem");
    rknn_tensor_mem* m = nullptr;
    if (flags == MemAlloc::default_flags && size <= UINT32_MAX)
      m = s.api().rknn_create_mem(s.handle, static_cast<std::uint32_t>(size));
    else m = s.require(s.api().rknn_create_mem2, "rknn_create_mem2")(s.handle, size, static_cast<std::uint64_t>(flags));
    if (m == nullptr)
      s.fail(Errc::malloc_fail, flags == MemAlloc::default_flags ? "rknn_create_mem" : "rknn_create_mem2",
             fmt::format("{} bytes", size));
    return track(m);
  }
  // Memory the application allocated: a dma-buf (a camera's or display's buffer, a DmaHeap
  // allocation), a memfd, or the fd of memory another context made. `virt` maps the fd from its
  // start; the tensor's `size` bytes start `offset` bytes into it (MemAccess::data() points
  // there). The Mem owns the runtime's descriptor only: the fd and the mapping stay the
  // application's and must outlive it. For a dma-buf, Mem::set_cpu_access_hook adds the kernel's
  // sync to every access window.
  [[nodiscard]] Mem wrap_fd(int fd, void* virt, std::uint64_t size, std::int64_t offset = 0) {
    constexpr std::string_view call = "rknn_create_mem_from_fd";
    auto& s = use(call);
    const auto refuse = [&](const std::string& why) {
      throw Error(Errc::param_invalid, std::string(call),
                  fmt::format("fd {}, {} bytes at offset {}: {}", fd, size, offset, why));
    };
    if (virt == nullptr) refuse("the virtual address is null (map the fd first)");
    if (const std::string problem = detail::fd_range_problem(fd, offset, size); !problem.empty()) refuse(problem);
    if (size > UINT32_MAX) refuse("the runtime's buffers hold at most 4 GiB - 1 bytes");
    if (offset > INT32_MAX) refuse("the runtime's offsets reach at most 2 GiB - 1");
    if (reinterpret_cast<std::uintptr_t>(virt) > UINTPTR_MAX - static_cast<std::uintptr_t>(offset) - size)
      refuse("the mapping's address plus offset and size overflows the address space");
    rknn_tensor_mem* m = s.require(s.api().rknn_create_mem_from_fd, call)(
        s.handle, fd, virt, static_cast<std::uint32_t>(size), static_cast<std::int32_t>(offset));
    if (m == nullptr) s.fail(Errc::param_invalid, call, fmt::format("fd {}, {} bytes at offset {}", fd, size, offset));
    return track(m);
  }
  [[nodiscard]] Mem wrap_phys(std::uint64_t phys, void* virt, std::uint32_t size) {
    auto& s = use("rknn_create_mem_from_phys");
    rknn_tensor_mem* m = s.api().rknn_create_mem_from_phys(s.handle, phys, virt, size);
    if (m == nullptr)
      s.fail(Errc::param_invalid, "rknn_create_mem_from_phys",
             fmt::format("physical address {:#x}, {} bytes", phys, size));
    return track(m);
  }
  void set_weight_mem(const Mem& m) {
    auto& s = use("rknn_set_weight_mem");
    s.check(s.api().rknn_set_weight_mem(s.handle, own(m, "rknn_set_weight_mem")), "rknn_set_weight_mem");
  }
  void set_internal_mem(const Mem& m) {
    auto& s = use("rknn_set_internal_mem");
    s.check(s.api().rknn_set_internal_mem(s.handle, own(m, "rknn_set_internal_mem")), "rknn_set_internal_mem");
  }
  // The low-level zero-copy bind (IoBinding does this for you).
  void set_io_mem(const Mem& m, const TensorInfo& attr) {
    auto& s = use("rknn_set_io_mem");
    rknn_tensor_attr a = attr.abi();
    s.check(s.api().rknn_set_io_mem(s.handle, own(m, "rknn_set_io_mem"), &a), "rknn_set_io_mem", attr.id());
  }

  // Hands the context over: the next call may come from any thread (see the thread rule above).
  void release_thread() noexcept {
    if (state_) state_->owner.store(nullptr, std::memory_order_release);
  }

protected:
  friend class rknnxx::IoBinding;
  ContextOps() noexcept = default;
  explicit ContextOps(std::shared_ptr<ContextState> state) noexcept : state_(std::move(state)) {}
  ContextOps(const ContextOps&) = default;
  ContextOps(ContextOps&&) noexcept = default;
  ContextOps& operator=(const ContextOps&) = default;
  ContextOps& operator=(ContextOps&&) noexcept = default;
  ~ContextOps() = default;

  static std::shared_ptr<ContextState> make_state(std::shared_ptr<const Runtime> rt, rknn_context handle) {
    auto s = std::make_shared<ContextState>();
    s->runtime = std::move(rt);
    s->handle = handle;
    return s;
  }

  // Reads what every later call needs: versions (checked once per runtime), counts, shape set,
  // the current attributes.
  void initialize() {
    auto& s = *state_;
    if (state_->options.flags.has(InitFlag::collect_model_info_only)) return;  // such a context answers MEM_SIZE only
    if (!s.runtime->sdk_version()) s.runtime->record_sdk_version(sdk_version());
    rknn_input_output_num n{};
    query(RKNN_QUERY_IN_OUT_NUM, n, "rknn_query(RKNN_QUERY_IN_OUT_NUM)");
    s.io = {n.n_input, n.n_output};
    s.current_inputs = input_infos(AttrQuery::normal);
    s.current_outputs = output_infos(AttrQuery::normal);
  }

  // Reads the shape set once (see shape_set()).
  static void probe_shapes(ContextState& s) {
    if (s.shapes_probed) return;
    if (s.api().rknn_set_input_shapes != nullptr && s.io.inputs > 0) {
      std::vector<rknn_input_range> ranges(s.io.inputs);
      bool dynamic = true;
      for (std::uint32_t i = 0; i < s.io.inputs && dynamic; ++i) {
        ranges[i].index = i;
        // A static model answers RKNN_ERR_MODEL_INVALID (rknn_model_zoo#271): not an error here.
        dynamic =
            s.api().rknn_query(s.handle, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &ranges[i], sizeof(rknn_input_range)) == 0 &&
            ranges[i].shape_number > 0;
      }
      if (dynamic) s.shapes = ShapeSet<>::from_ranges(ranges);
    }
    s.shapes_probed = true;
  }

  ContextState& use(std::string_view call) const {
    if (!state_)
      throw Error(Errc::ctx_invalid, std::string(call),
                  "use of an empty rknnxx::Context (moved-from, reset or released)");
    state_->check_alive(call, "a reference to the context (ContextRef, IoBinding)");
    state_->enter(call);
    return *state_;
  }

  template <class Info> void query(rknn_query_cmd cmd, Info& info, std::string_view call) const {
    auto& s = use(call);
    s.check(s.api().rknn_query(s.handle, cmd, &info, sizeof(Info)), call);
  }

  TensorInfo query_attr(bool input, std::uint32_t index, AttrQuery q) const {
    rknn_tensor_attr a{};
    a.index = index;
    const auto cmd = query_cmd(q, input);
    auto& s = use("rknn_query");
    s.check(s.api().rknn_query(s.handle, cmd, &a, sizeof a), fmt::format("rknn_query({})", static_cast<int>(cmd)),
            input ? TensorId::input(index) : TensorId::output(index));
    return {a, input ? TensorIo::input : TensorIo::output};
  }

  std::uint32_t resolve(bool input, TensorRef t) const {
    auto& s = use(input ? "rknnxx::Context::input_index" : "rknnxx::Context::output_index");
    const auto& list = input ? s.current_inputs : s.current_outputs;
    const std::uint32_t count = input ? s.io.inputs : s.io.outputs;
    if (!t.by_name()) {
      if (t.index() >= count)
        throw Error(Errc::param_invalid, input ? "rknnxx::Context::input_index" : "rknnxx::Context::output_index",
                    fmt::format("{} index {} is out of range: the model has {} {}", input ? "input" : "output",
                                t.index(), count, input ? "inputs" : "outputs"));
      return t.index();
    }
    std::string names;
    for (const auto& info : list) {
      if (info.name() == t.name()) return info.index();
      names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", info.name());
    }
    throw Error(Errc::param_invalid, input ? "rknnxx::Context::input_index" : "rknnxx::Context::output_index",
                fmt::format("no {} is named \"{}\"; the {} are {}", input ? "input" : "output", t.name(),
                            input ? "inputs" : "outputs", names));
  }

  const ShapeSet<>& require_dynamic(std::string_view call) const {
    probe_shapes(use(call));
    if (!state_->shapes)
      throw Error(Errc::param_invalid, std::string(call),
                  "the model has static shapes (RKNN_QUERY_INPUT_DYNAMIC_RANGE reports no shape set)");
    return *state_->shapes;
  }

  std::string current_inputs_name(std::size_t i) const { return std::string(state_->current_inputs.at(i).name()); }

  std::string allowed_text() const {
    std::string s;
    const auto& set = *state_->shapes;
    for (std::size_t g = 0; g < set.num_shapes(); ++g) {
      s += fmt::format("\n  group {}:", g);
      for (std::size_t i = 0; i < set.num_inputs(); ++i)
        s += fmt::format("{} \"{}\" {} {}", i ? "," : "", current_inputs_name(i),
                         set.shape(g, i).rank() == 4 ? "NHWC" : "UNDEFINED", dims_text(set.shape(g, i)));
    }
    return s;
  }

  ShapeChange switch_to(std::size_t group) {
    auto& s = use("rknn_set_input_shapes");
    std::vector<rknn_tensor_attr> attrs(s.io.inputs);
    for (std::uint32_t i = 0; i < s.io.inputs; ++i) attrs[i] = s.current_inputs[i].abi();
    s.shapes->fill_input_attrs(group, attrs);
    s.check(s.require(s.api().rknn_set_input_shapes, "rknn_set_input_shapes")(s.handle, s.io.inputs, attrs.data()),
            "rknn_set_input_shapes");
    s.current_inputs = input_infos(AttrQuery::current);
    s.current_outputs = output_infos(AttrQuery::current);
    if (s.group != group) ++s.generation;
    s.group = group;
    return {group, s.current_inputs, s.current_outputs, s.generation};
  }

  // Tracks memory made through the context, so that its destruction destroys it first.
  Mem track(rknn_tensor_mem* m) {
    state_->mems.push_back(m);
    return Mem(state_, m);
  }
  rknn_tensor_mem* own(const Mem& m, std::string_view call) const {
    rknn_tensor_mem* h = m.native_handle();
    if (m.state().get() != state_.get() && !m.state()->unbound)
      throw Error(Errc::param_invalid, std::string(call), "the memory was made by another context");
    return h;
  }

  std::shared_ptr<ContextState> state_;
};

}  // namespace detail

class Context : public detail::ContextOps {
public:
  using Options = ContextOptions;

  // An empty Context (as after a move, reset() or release()): every call but the assignments
  // refuses it.
  Context() noexcept = default;

  [[nodiscard]] static Context from_file(const std::string& path, Options options = {}) {
    return init(const_cast<char*>(path.c_str()), 0, options, nullptr, fmt::format("model file {}", path));
  }
  [[nodiscard]] static Context from_buffer(std::span<const std::byte> model, Options options = {}) {
    if (model.empty()) throw Error(Errc::param_invalid, "rknn_init", "the model buffer is empty");
    if (model.size() > UINT32_MAX)
      throw Error(Errc::param_invalid, "rknn_init",
                  fmt::format("a model buffer of {} bytes exceeds 4 GiB", model.size()));
    return init(const_cast<std::byte*>(model.data()), static_cast<std::uint32_t>(model.size()), options, nullptr,
                fmt::format("a model buffer of {} bytes", model.size()));
  }
  // Zero-copy model memory (RKNN_FLAG_MODEL_BUFFER_ZERO_COPY): the model already sits in runtime
  // memory, e.g. Mem::allocate_without_context(size) filled by the application. The Context keeps
  // the memory alive until it is destroyed, as the runtime requires.
  [[nodiscard]] static Context from_model_memory(Mem model, Options options = {}, std::uint32_t model_size = 0) {
    rknn_tensor_mem* m = model.native_handle();
    rknn_init_extend ext{};
    ext.real_model_offset = 0;
    ext.real_model_size = model_size != 0 ? model_size : m->size;
    ext.model_buffer_fd = m->fd;
    ext.model_buffer_flags = m->flags;
    options.flags |= InitFlag::model_buffer_zero_copy;
    Context c = init(m->virt_addr, ext.real_model_size, options, &ext,
                     fmt::format("zero-copy model memory of {} bytes", m->size));
    c.model_mem_ = std::move(model);
    return c;
  }
  // Takes ownership of a context C code made (rknn_init or rknn_dup_context on `options.runtime`,
  // null: Runtime::load()); the Context destroys it. On an Error (e.g. a handle the runtime does
  // not know) nothing is adopted and the handle stays the caller's.
  [[nodiscard]] static Context adopt(rknn_context handle, Options options = {}) {
    if (handle == 0) throw Error(Errc::ctx_invalid, "rknnxx::Context::adopt", "the handle is 0: not a context");
    auto rt = options.runtime ? options.runtime : Runtime::load();
    Context c(make_state(std::move(rt), handle), std::move(options));
    try {
      c.initialize();
    } catch (...) {
      c.state_->alive = false;
      c.state_.reset();  // not adopted: nothing is destroyed
      throw;
    }
    return c;
  }

  Context(Context&& o) noexcept { take(std::move(o)); }
  Context& operator=(Context&& o) noexcept {
    if (this != &o) {
      destroy();
      take(std::move(o));
    }
    return *this;
  }
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
  [[nodiscard]] rknn_context release() {
    constexpr std::string_view call = "rknnxx::Context::release";
    auto& s = use(call);
    if (model_mem_)
      throw Error(Errc::param_invalid, std::string(call),
                  "the context runs from zero-copy model memory this Context owns (from_model_memory): the C code "
                  "could not keep it alive");
    if (!s.custom_ops.empty())
      throw Error(Errc::param_invalid, std::string(call),
                  fmt::format("{} C++ custom operator(s) are registered on the context: their callables live in this "
                              "Context",
                              s.custom_ops.size()));
    if (!s.mems.empty())
      throw Error(Errc::param_invalid, std::string(call),
                  fmt::format("{} runtime buffer(s) made through the context are still held by Mem or IoBinding "
                              "objects: reset them, or hand each to the C code with Mem::release(), first",
                              s.mems.size()));
    give_back_outputs(s);
    s.alive = false;
    s.released = true;
    const rknn_context handle = s.handle;
    state_.reset();
    return handle;
  }

private:
  friend class detail::ContextOps;  // dup()
  friend class ContextRef;
  Context(std::shared_ptr<detail::ContextState> state, Options options) : ContextOps(std::move(state)) {
    state_->options = std::move(options);
  }

  static Context init(void* model, std::uint32_t size, Options options, rknn_init_extend* ext,
                      const std::string& what) {
    auto rt = options.runtime ? options.runtime : Runtime::load();
    rknn_context handle = 0;
    const int rc = rt->api().rknn_init(&handle, model, size, options.flags.value(), ext);
    if (rc < 0)
      throw Error(static_cast<Errc>(rc), "rknn_init",
                  detail::with_runtime_message(
                      fmt::format("{} on runtime {}{}", what, rt->path(),
                                  rt->sdk_version() ? fmt::format(" (SDK {}, driver {})", rt->sdk_version()->api,
                                                                  rt->sdk_version()->driver)
                                                    : std::string()),
                      *rt, "rknn_init"));
    Context c(make_state(rt, handle), options);
    c.initialize();
    return c;
  }

  void take(Context&& o) noexcept {
    state_ = std::move(o.state_);
    model_mem_ = std::move(o.model_mem_);
    release_thread();  // a move hands the context over
  }

  static void give_back_outputs(detail::ContextState& s) noexcept {
    for (rknn_output& o : s.outputs)
      if (s.api().rknn_outputs_release != nullptr) (void)s.api().rknn_outputs_release(s.handle, 1, &o);
    s.outputs.clear();
  }

  void destroy() noexcept {
    if (!state_) return;
    auto& s = *state_;
    for (rknn_tensor_mem* m : s.mems) (void)s.api().rknn_destroy_mem(s.handle, m);
    s.mems.clear();
    // Outputs still held by the application go back to the runtime with their context.
    give_back_outputs(s);
    s.alive = false;
    (void)s.api().rknn_destroy(s.handle);
    state_.reset();
    model_mem_.reset();
  }

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

inline Context detail::ContextOps::dup() const {
  auto& s = use("rknn_dup_context");
  rknn_context in = s.handle;
  rknn_context out = 0;
  s.check(s.require(s.api().rknn_dup_context, "rknn_dup_context")(&in, &out), "rknn_dup_context");
  Context c(make_state(s.runtime, out), s.options);
  c.initialize();
  return c;
}

}  // namespace rknnxx
