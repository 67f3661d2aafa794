#pragma once
// The bodies of <rknnxx/runtime/context.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/context.hpp>

namespace rknnxx::detail {

// Value-initialized C structs (or enums) for one call of the C interface: a std::vector of each such type
// would cost every header-only translation unit its instantiation (docs/separate-compilation.md#compile-cost).
template <class T> class AbiArray {
public:
  explicit AbiArray(std::size_t n) : data_(new T[n]()), size_(n) {}
  AbiArray(const AbiArray&) = delete;
  AbiArray& operator=(const AbiArray&) = delete;
  ~AbiArray() { delete[] data_; }
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data_[i]; }

private:
  T* data_;
  std::size_t size_;
};

RKNNXX_DECL TensorInfo ContextOps::input_info(TensorRef t, AttrQuery q) const {
  return query_attr(true, input_index(t), q);
}

RKNNXX_DECL TensorInfo ContextOps::output_info(TensorRef t, AttrQuery q) const {
  return query_attr(false, output_index(t), q);
}

RKNNXX_DECL std::vector<TensorInfo> ContextOps::input_infos(AttrQuery q) const {
  std::vector<TensorInfo> v;
  for (std::uint32_t i = 0, n = num_inputs(); i < n; ++i) v.push_back(query_attr(true, i, q));
  return v;
}

RKNNXX_DECL std::vector<TensorInfo> ContextOps::output_infos(AttrQuery q) const {
  std::vector<TensorInfo> v;
  for (std::uint32_t i = 0, n = num_outputs(); i < n; ++i) v.push_back(query_attr(false, i, q));
  return v;
}

RKNNXX_DECL std::chrono::microseconds ContextOps::last_run_duration() const {
  rknn_perf_run p{};
  query(RKNN_QUERY_PERF_RUN, p, "rknn_query(RKNN_QUERY_PERF_RUN)");
  return std::chrono::microseconds(p.run_duration);
}

RKNNXX_DECL std::string ContextOps::perf_detail() const {
  rknn_perf_detail p{};
  query(RKNN_QUERY_PERF_DETAIL, p, "rknn_query(RKNN_QUERY_PERF_DETAIL)");
  return p.perf_data != nullptr ? std::string(p.perf_data, ::strnlen(p.perf_data, p.data_len)) : std::string();
}

RKNNXX_DECL MemSize ContextOps::mem_size() const {
  rknn_mem_size m{};
  query(RKNN_QUERY_MEM_SIZE, m, "rknn_query(RKNN_QUERY_MEM_SIZE)");
  return {m.total_weight_size, m.total_internal_size, m.total_dma_allocated_size, m.total_sram_size, m.free_sram_size};
}

RKNNXX_DECL SdkVersion ContextOps::sdk_version() const {
  rknn_sdk_version v{};
  query(RKNN_QUERY_SDK_VERSION, v, "rknn_query(RKNN_QUERY_SDK_VERSION)");
  SdkVersion s{std::string(v.api_version, ::strnlen(v.api_version, sizeof v.api_version)),
               std::string(v.drv_version, ::strnlen(v.drv_version, sizeof v.drv_version)),
               {}};
  s.api_version = Version::parse(s.api).value_or(Version{});
  return s;
}

RKNNXX_DECL std::string ContextOps::custom_string() const {
  rknn_custom_string c{};
  query(RKNN_QUERY_CUSTOM_STRING, c, "rknn_query(RKNN_QUERY_CUSTOM_STRING)");
  return {c.string, ::strnlen(c.string, sizeof c.string)};
}

RKNNXX_DECL const std::optional<ShapeSet<>>& ContextOps::shape_set() const {
  auto& s = use("rknnxx::Context::shape_set");
  probe_shapes(s);
  return s.shapes;
}

RKNNXX_DECL std::optional<std::size_t> ContextOps::current_shape_group() const {
  return use("rknnxx::Context::current_shape_group").group;
}

RKNNXX_DECL const std::vector<TensorInfo>& ContextOps::current_inputs() const {
  return use("rknnxx::Context::current_inputs").current_inputs;
}

RKNNXX_DECL const std::vector<TensorInfo>& ContextOps::current_outputs() const {
  return use("rknnxx::Context::current_outputs").current_outputs;
}

RKNNXX_DECL ShapeChange ContextOps::set_input_shapes(std::size_t group) {
  constexpr std::string_view call = "rknn_set_input_shapes";
  const auto& set = require_dynamic(call);
  if (group >= set.num_shapes())
    throw Error(
        Errc::param_invalid, std::string(call),
        detail::message("shape group {} is outside the model's {} groups:{}", group, set.num_shapes(), allowed_text()));
  return switch_to(group);
}

RKNNXX_DECL ShapeChange ContextOps::set_input_shapes(std::span<const Dims> dims, DimsOrder order) {
  constexpr std::string_view call = "rknn_set_input_shapes";
  const auto& set = require_dynamic(call);
  // Spans of vectors from data() and size(): cheaper to compile (docs/separate-compilation.md#compile-cost).
  std::vector<Dims> given;
  std::vector<Dims> swapped;  // NCHW read as NHWC: the hint below
  for (const Dims& d : dims) {
    given.push_back(order == DimsOrder::nchw ? nchw_to_nhwc(d) : d);
    swapped.push_back(nchw_to_nhwc(given.back()));
  }
  if (given.size() != set.num_inputs())
    throw Error(
        Errc::param_invalid, std::string(call),
        detail::message("{} shapes given for a model of {} inputs:{}", given.size(), set.num_inputs(), allowed_text()));
  if (auto g = set.find({given.data(), given.size()})) return switch_to(*g);
  std::string given_text;
  for (const auto& d : given) given_text += detail::message("{}{}", given_text.empty() ? "" : ", ", dims_text(d));
  // The classic mistake: NCHW dims labelled NHWC (rknn-superresolution#3).
  std::string hint;
  if (order == DimsOrder::runtime && set.contains({swapped.data(), swapped.size()})) {
    for (std::size_t i = 0; i < given.size(); ++i)
      if (given[i].rank() == 4 && !(swapped[i] == given[i]))
        hint += detail::message(
            "\n  input {} \"{}\": {} is in NCHW order (the model's framework order), but the runtime "
            "takes 4-D shapes in NHWC order: {}. Pass {} or use DimsOrder::nchw.",
            i, current_inputs_name(i), dims_text(given[i]), dims_text(swapped[i]), dims_text(swapped[i]));
  }
  throw Error(Errc::param_invalid, std::string(call),
              detail::message("shapes {} are not in the model's shape set; the allowed shapes are:{}{}", given_text,
                              allowed_text(), hint));
}

RKNNXX_DECL ShapeChange ContextOps::set_input_shapes(std::initializer_list<Dims> dims, DimsOrder order) {
  return set_input_shapes(std::span<const Dims>(dims.begin(), dims.size()), order);
}

RKNNXX_DECL void ContextOps::set_core_mask(CoreMask mask) {
  auto& s = use("rknn_set_core_mask");
  if (s.options.platform) {
    const auto& info = platform_info(*s.options.platform);
    if (!info.multi_core())
      throw Error(Errc::param_invalid, "rknn_set_core_mask",
                  detail::message("{} has one NPU core: it has no core mask to set", info.name));
    check_core_mask(*s.options.platform, mask);
  }
  s.check(s.require(s.api().rknn_set_core_mask, "rknn_set_core_mask")(s.handle, static_cast<rknn_core_mask>(mask)),
          "rknn_set_core_mask");
}

RKNNXX_DECL void ContextOps::set_batch_core_num(int cores) {
  auto& s = use("rknn_set_batch_core_num");
  const std::uint32_t max = s.options.platform ? platform_info(*s.options.platform).npu_cores : 3;
  if (cores < 1 || static_cast<std::uint32_t>(cores) > max)
    throw Error(Errc::param_invalid, "rknn_set_batch_core_num",
                detail::message("{} cores asked; {} has 1..{}", cores,
                                s.options.platform ? name_of(*s.options.platform) : std::string_view("an NPU"), max));
  s.check(s.require(s.api().rknn_set_batch_core_num, "rknn_set_batch_core_num")(s.handle, cores),
          "rknn_set_batch_core_num");
}

RKNNXX_DECL void ContextOps::run() {
  auto& s = use("rknn_run");
  std::string dropped, destroyed;
  const auto add = [](std::string& list, const std::string& label) {
    list += detail::message("{}{}", list.empty() ? "" : ", ", label);
  };
  for (const auto& b : s.bound)
    if (!b.life->alive) add(b.app_owned ? destroyed : dropped, b.label);
  if (!dropped.empty())
    throw Error(Errc::ctx_invalid, "rknn_run",
                detail::message("the zero-copy memory bound to {} went away with its IoBinding; bind new memory to "
                                "them (another IoBinding) before running",
                                dropped));
  if (!destroyed.empty())
    throw Error(
        Errc::ctx_invalid, "rknn_run",
        detail::message("the application's memory bound to {} was destroyed (or released to C code) by its Mem; "
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

RKNNXX_DECL void ContextOps::set_inputs(std::span<const InputData> inputs) {
  auto& s = use("rknn_inputs_set");
  if (inputs.size() != s.io.inputs)
    throw Error(Errc::param_invalid, "rknn_inputs_set",
                detail::message("{} inputs given, the model has {}", inputs.size(), s.io.inputs));
  AbiArray<rknn_input> abi(inputs.size());
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
                    detail::message("the {} view has dims {}, the current input shape is {} {}{}", name_of(in.format()),
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

RKNNXX_DECL bool ContextOps::converts_to_float(const TensorInfo& info) {
  const TensorType t = info.type();
  return t == TensorType::float16 || t == TensorType::int8 || t == TensorType::uint8 || t == TensorType::int16;
}

RKNNXX_DECL Outputs ContextOps::outputs(OutputType type) {
  AbiArray<OutputType> types(num_outputs());
  for (std::size_t i = 0; i < types.size(); ++i) types[i] = type;
  return outputs(std::span<const OutputType>(types.data(), types.size()));
}

RKNNXX_DECL Outputs ContextOps::outputs(std::span<const OutputType> types) {
  auto& s = use("rknn_outputs_get");
  if (types.size() != s.io.outputs)
    throw Error(Errc::param_invalid, "rknn_outputs_get",
                detail::message("{} output types given, the model has {} outputs", types.size(), s.io.outputs));
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
      infos[i] =
          types[i] == OutputType::float32 && converts_to_float(cur) ? cur.with(TensorType::float32, cur.format()) : cur;
    }
  }
  return Outputs(state_, std::move(outs), std::move(infos));
}

RKNNXX_DECL Mem ContextOps::create_mem(std::uint64_t size, MemAlloc flags) {
  auto& s = use("rknn_create_mem");
  rknn_tensor_mem* m = nullptr;
  if (flags == MemAlloc::default_flags && size <= UINT32_MAX)
    m = s.api().rknn_create_mem(s.handle, static_cast<std::uint32_t>(size));
  else m = s.require(s.api().rknn_create_mem2, "rknn_create_mem2")(s.handle, size, static_cast<std::uint64_t>(flags));
  if (m == nullptr)
    s.fail(Errc::malloc_fail, flags == MemAlloc::default_flags ? "rknn_create_mem" : "rknn_create_mem2",
           detail::message("{} bytes", size));
  return track(m);
}

RKNNXX_DECL Mem ContextOps::wrap_fd(int fd, void* virt, std::uint64_t size, std::int64_t offset) {
  constexpr std::string_view call = "rknn_create_mem_from_fd";
  auto& s = use(call);
  const auto refuse = [&](const std::string& why) {
    throw Error(Errc::param_invalid, std::string(call),
                detail::message("fd {}, {} bytes at offset {}: {}", fd, size, offset, why));
  };
  if (virt == nullptr) refuse("the virtual address is null (map the fd first)");
  if (const std::string problem = detail::fd_range_problem(fd, offset, size); !problem.empty()) refuse(problem);
  if (size > UINT32_MAX) refuse("the runtime's buffers hold at most 4 GiB - 1 bytes");
  if (offset > INT32_MAX) refuse("the runtime's offsets reach at most 2 GiB - 1");
  if (reinterpret_cast<std::uintptr_t>(virt) > UINTPTR_MAX - static_cast<std::uintptr_t>(offset) - size)
    refuse("the mapping's address plus offset and size overflows the address space");
  rknn_tensor_mem* m = s.require(s.api().rknn_create_mem_from_fd, call)(
      s.handle, fd, virt, static_cast<std::uint32_t>(size), static_cast<std::int32_t>(offset));
  if (m == nullptr)
    s.fail(Errc::param_invalid, call, detail::message("fd {}, {} bytes at offset {}", fd, size, offset));
  return track(m);
}

RKNNXX_DECL Mem ContextOps::wrap_phys(std::uint64_t phys, void* virt, std::uint32_t size) {
  auto& s = use("rknn_create_mem_from_phys");
  rknn_tensor_mem* m = s.api().rknn_create_mem_from_phys(s.handle, phys, virt, size);
  if (m == nullptr)
    s.fail(Errc::param_invalid, "rknn_create_mem_from_phys",
           detail::message("physical address {:#x}, {} bytes", phys, size));
  return track(m);
}

RKNNXX_DECL void ContextOps::set_weight_mem(const Mem& m) {
  auto& s = use("rknn_set_weight_mem");
  s.check(s.api().rknn_set_weight_mem(s.handle, own(m, "rknn_set_weight_mem")), "rknn_set_weight_mem");
}

RKNNXX_DECL void ContextOps::set_internal_mem(const Mem& m) {
  auto& s = use("rknn_set_internal_mem");
  s.check(s.api().rknn_set_internal_mem(s.handle, own(m, "rknn_set_internal_mem")), "rknn_set_internal_mem");
}

RKNNXX_DECL void ContextOps::set_io_mem(const Mem& m, const TensorInfo& attr) {
  auto& s = use("rknn_set_io_mem");
  rknn_tensor_attr a = attr.abi();
  s.check(s.api().rknn_set_io_mem(s.handle, own(m, "rknn_set_io_mem"), &a), "rknn_set_io_mem", attr.id());
}

RKNNXX_DECL void ContextOps::release_thread() noexcept {
  if (state_) state_->leave();
}

RKNNXX_DECL void ContextOps::initialize() {
  auto& s = *state_;
  if (state_->options.flags.has(InitFlag::collect_model_info_only)) return;  // such a context answers MEM_SIZE only
  if (!s.runtime->sdk_version()) s.runtime->record_sdk_version(sdk_version());
  rknn_input_output_num n{};
  query(RKNN_QUERY_IN_OUT_NUM, n, "rknn_query(RKNN_QUERY_IN_OUT_NUM)");
  s.io = {n.n_input, n.n_output};
  s.current_inputs = input_infos(AttrQuery::normal);
  s.current_outputs = output_infos(AttrQuery::normal);
}

RKNNXX_DECL void ContextOps::probe_shapes(ContextState& s) {
  if (s.shapes_probed) return;
  if (s.api().rknn_set_input_shapes != nullptr && s.io.inputs > 0) {
    AbiArray<rknn_input_range> ranges(s.io.inputs);
    bool dynamic = true;
    for (std::uint32_t i = 0; i < s.io.inputs && dynamic; ++i) {
      ranges[i].index = i;
      // A static model answers RKNN_ERR_MODEL_INVALID (rknn_model_zoo#271): not an error here.
      dynamic =
          s.api().rknn_query(s.handle, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &ranges[i], sizeof(rknn_input_range)) == 0 &&
          ranges[i].shape_number > 0;
    }
    if (dynamic) s.shapes = ShapeSet<>::from_ranges({ranges.data(), ranges.size()});
  }
  s.shapes_probed = true;
}

RKNNXX_DECL ContextState& ContextOps::use(std::string_view call) const {
  if (!state_)
    throw Error(Errc::ctx_invalid, std::string(call),
                "use of an empty rknnxx::Context (moved-from, reset or released)");
  state_->check_alive(call, "a reference to the context (ContextRef, IoBinding)");
  state_->enter(call);
  return *state_;
}

RKNNXX_DECL TensorInfo ContextOps::query_attr(bool input, std::uint32_t index, AttrQuery q) const {
  rknn_tensor_attr a{};
  a.index = index;
  const auto cmd = query_cmd(q, input);
  auto& s = use("rknn_query");
  s.check(s.api().rknn_query(s.handle, cmd, &a, sizeof a), detail::message("rknn_query({})", static_cast<int>(cmd)),
          input ? TensorId::input(index) : TensorId::output(index));
  return {a, input ? TensorIo::input : TensorIo::output};
}

RKNNXX_DECL std::uint32_t ContextOps::resolve(bool input, TensorRef t) const {
  auto& s = use(input ? "rknnxx::Context::input_index" : "rknnxx::Context::output_index");
  const auto& list = input ? s.current_inputs : s.current_outputs;
  const std::uint32_t count = input ? s.io.inputs : s.io.outputs;
  if (!t.by_name()) {
    if (t.index() >= count)
      throw Error(Errc::param_invalid, input ? "rknnxx::Context::input_index" : "rknnxx::Context::output_index",
                  detail::message("{} index {} is out of range: the model has {} {}", input ? "input" : "output",
                                  t.index(), count, input ? "inputs" : "outputs"));
    return t.index();
  }
  std::string names;
  for (const auto& info : list) {
    if (info.name() == t.name()) return info.index();
    names += detail::message("{}\"{}\"", names.empty() ? "" : ", ", info.name());
  }
  throw Error(Errc::param_invalid, input ? "rknnxx::Context::input_index" : "rknnxx::Context::output_index",
              detail::message("no {} is named \"{}\"; the {} are {}", input ? "input" : "output", t.name(),
                              input ? "inputs" : "outputs", names));
}

RKNNXX_DECL const ShapeSet<>& ContextOps::require_dynamic(std::string_view call) const {
  probe_shapes(use(call));
  if (!state_->shapes)
    throw Error(Errc::param_invalid, std::string(call),
                "the model has static shapes (RKNN_QUERY_INPUT_DYNAMIC_RANGE reports no shape set)");
  return *state_->shapes;
}

RKNNXX_DECL std::string ContextOps::allowed_text() const {
  std::string s;
  const auto& set = *state_->shapes;
  for (std::size_t g = 0; g < set.num_shapes(); ++g) {
    s += detail::message("\n  group {}:", g);
    for (std::size_t i = 0; i < set.num_inputs(); ++i)
      s += detail::message("{} \"{}\" {} {}", i ? "," : "", current_inputs_name(i),
                           set.shape(g, i).rank() == 4 ? "NHWC" : "UNDEFINED", dims_text(set.shape(g, i)));
  }
  return s;
}

RKNNXX_DECL ShapeChange ContextOps::switch_to(std::size_t group) {
  auto& s = use("rknn_set_input_shapes");
  AbiArray<rknn_tensor_attr> attrs(s.io.inputs);
  for (std::uint32_t i = 0; i < s.io.inputs; ++i) attrs[i] = s.current_inputs[i].abi();
  s.shapes->fill_input_attrs(group, {attrs.data(), attrs.size()});
  s.check(s.require(s.api().rknn_set_input_shapes, "rknn_set_input_shapes")(s.handle, s.io.inputs, attrs.data()),
          "rknn_set_input_shapes");
  s.current_inputs = input_infos(AttrQuery::current);
  s.current_outputs = output_infos(AttrQuery::current);
  if (s.group != group) ++s.generation;
  s.group = group;
  return {group, s.current_inputs, s.current_outputs, s.generation};
}

RKNNXX_DECL Mem ContextOps::track(rknn_tensor_mem* m) {
  state_->mems.push_back(m);
  return Mem(state_, m);
}

RKNNXX_DECL rknn_tensor_mem* ContextOps::own(const Mem& m, std::string_view call) const {
  rknn_tensor_mem* h = m.native_handle();
  if (m.state().get() != state_.get() && !m.state()->unbound)
    throw Error(Errc::param_invalid, std::string(call), "the memory was made by another context");
  return h;
}

}  // namespace rknnxx::detail

namespace rknnxx {

RKNNXX_DECL Context Context::from_file(const std::string& path, Options options) {
  return init(const_cast<char*>(path.c_str()), 0, options, nullptr, detail::message("model file {}", path));
}

RKNNXX_DECL Context Context::from_buffer(std::span<const std::byte> model, Options options) {
  if (model.empty()) throw Error(Errc::param_invalid, "rknn_init", "the model buffer is empty");
  if (model.size() > UINT32_MAX)
    throw Error(Errc::param_invalid, "rknn_init",
                detail::message("a model buffer of {} bytes exceeds 4 GiB", model.size()));
  return init(const_cast<std::byte*>(model.data()), static_cast<std::uint32_t>(model.size()), options, nullptr,
              detail::message("a model buffer of {} bytes", model.size()));
}

RKNNXX_DECL Context Context::from_model_memory(Mem model, Options options, std::uint32_t model_size) {
  rknn_tensor_mem* m = model.native_handle();
  rknn_init_extend ext{};
  ext.real_model_offset = 0;
  ext.real_model_size = model_size != 0 ? model_size : m->size;
  ext.model_buffer_fd = m->fd;
  ext.model_buffer_flags = m->flags;
  options.flags |= InitFlag::model_buffer_zero_copy;
  Context c = init(m->virt_addr, ext.real_model_size, options, &ext,
                   detail::message("zero-copy model memory of {} bytes", m->size));
  c.model_mem_ = std::move(model);
  return c;
}

RKNNXX_DECL Context Context::adopt(rknn_context handle, Options options) {
  if (handle == 0) throw Error(Errc::ctx_invalid, "rknnxx::Context::adopt", "the handle is 0: not a context");
  auto rt = options.runtime ? options.runtime : Runtime::load();
  Context c(detail::new_context_state(std::move(rt), handle), std::move(options));
  try {
    c.initialize();
  } catch (...) {
    c.state_->alive = false;
    c.state_.reset();  // not adopted: nothing is destroyed
    throw;
  }
  return c;
}

RKNNXX_DECL Context& Context::operator=(Context&& o) noexcept {
  if (this != &o) {
    destroy();
    take(std::move(o));
  }
  return *this;
}

RKNNXX_DECL rknn_context Context::release() {
  constexpr std::string_view call = "rknnxx::Context::release";
  auto& s = use(call);
  if (model_mem_)
    throw Error(Errc::param_invalid, std::string(call),
                "the context runs from zero-copy model memory this Context owns (from_model_memory): the C code "
                "could not keep it alive");
  if (!s.custom_ops.empty())
    throw Error(Errc::param_invalid, std::string(call),
                detail::message("{} C++ custom operator(s) are registered on the context: their callables live in this "
                                "Context",
                                s.custom_ops.size()));
  if (!s.mems.empty())
    throw Error(Errc::param_invalid, std::string(call),
                detail::message("{} runtime buffer(s) made through the context are still held by Mem or IoBinding "
                                "objects: reset them, or hand each to the C code with Mem::release(), first",
                                s.mems.size()));
  give_back_outputs(s);
  s.alive = false;
  s.released = true;
  const rknn_context handle = s.handle;
  state_.reset();
  return handle;
}

RKNNXX_DECL Context::Context(std::shared_ptr<detail::ContextState> state, Options options)
    : ContextOps(std::move(state)) {
  state_->options = std::move(options);
}

RKNNXX_DECL Context Context::init(void* model, std::uint32_t size, Options options, rknn_init_extend* ext,
                                  const std::string& what) {
  auto rt = options.runtime ? options.runtime : Runtime::load();
  rknn_context handle = 0;
  const int rc = rt->api().rknn_init(&handle, model, size, options.flags.value(), ext);
  if (rc < 0)
    throw Error(static_cast<Errc>(rc), "rknn_init",
                detail::with_runtime_message(
                    detail::message("{} on runtime {}{}", what, rt->path(),
                                    rt->sdk_version() ? detail::message(" (SDK {}, driver {})", rt->sdk_version()->api,
                                                                        rt->sdk_version()->driver)
                                                      : std::string()),
                    *rt, "rknn_init"));
  Context c(detail::new_context_state(rt, handle), options);
  c.initialize();
  return c;
}

RKNNXX_DECL void Context::take(Context&& o) noexcept {
  state_ = std::move(o.state_);
  model_mem_ = std::move(o.model_mem_);
  release_thread();  // a move hands the context over
}

RKNNXX_DECL void Context::give_back_outputs(detail::ContextState& s) noexcept {
  for (rknn_output& o : s.outputs)
    if (s.api().rknn_outputs_release != nullptr) (void)s.api().rknn_outputs_release(s.handle, 1, &o);
  s.outputs.clear();
}

RKNNXX_DECL void Context::destroy() noexcept {
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

RKNNXX_DECL Context detail::ContextOps::dup() const {
  auto& s = use("rknn_dup_context");
  rknn_context in = s.handle;
  rknn_context out = 0;
  s.check(s.require(s.api().rknn_dup_context, "rknn_dup_context")(&in, &out), "rknn_dup_context");
  Context c(detail::new_context_state(s.runtime, out), s.options);
  c.initialize();
  return c;
}

}  // namespace rknnxx
