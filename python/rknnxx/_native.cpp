// rknnxx._native: the Python extension over rknnxx::Context (docs/python.md). The Pythonic API
// (rknnxx/__init__.py) and the Lite2 interface (rknnlite/api) are pure Python over this module.
//
// Threads: the GIL is released while the runtime works. A Context may be used from any Python
// thread (Lite2 scripts make RKNNLite objects in one thread and run them in a pool), so the
// library's one-owner-thread check is compiled out (RKNNXX_THREAD_CHECKS=0, python/meson.build)
// and each Context is guarded by a mutex instead: calls on one Context from several threads
// are serialized, never interleaved. Lock order: the mutex is only taken with the GIL released,
// and nothing that needs the GIL runs while it is held.

#include <rknnxx/core/fmt_core.hpp>
#include <rknnxx/rknn.hpp>
#include <rknnxx/version.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace py = pybind11;

namespace rknnxx::python {
namespace {

// rknnxx.Error: a RuntimeError carrying the runtime's code (an int), its macro name, the call and
// the message. Created once at import; the module keeps it for the interpreter's life.
PyObject* error_type = nullptr;

void raise_error(const Error& e) {
  py::object exc = py::reinterpret_borrow<py::object>(error_type)(std::string(e.what()));
  exc.attr("code") = e.code().value();
  exc.attr("code_name") = std::string(errc_name(e.errc()));
  exc.attr("call") = e.call();
  exc.attr("message") = e.message();
  PyErr_SetObject(error_type, exc.ptr());
}

[[noreturn]] void bad_argument(std::string_view call, std::string message) {
  throw Error(Errc::param_invalid, std::string(call), std::move(message));
}

// ---- numpy <-> tensor types --------------------------------------------------------------------

// The numpy spelling of a tensor type; types numpy lacks keep the runtime's name.
std::string dtype_name(TensorType t) {
  switch (t) {
    case TensorType::float32: return "float32";
    case TensorType::float16: return "float16";
    case TensorType::int8: return "int8";
    case TensorType::uint8: return "uint8";
    case TensorType::int16: return "int16";
    case TensorType::uint16: return "uint16";
    case TensorType::int32: return "int32";
    case TensorType::uint32: return "uint32";
    case TensorType::int64: return "int64";
    case TensorType::boolean: return "bool";
    case TensorType::int4: return "int4";
    case TensorType::bfloat16: return "bfloat16";
  }
  return std::string(name_of(t));
}

bool has_numpy_dtype(TensorType t) { return t != TensorType::int4 && t != TensorType::bfloat16; }

std::optional<TensorType> tensor_type_of_dtype(const py::dtype& d) {
  const auto size = d.itemsize();
  switch (d.kind()) {
    case 'f':
      return size == 4 ? std::optional(TensorType::float32)
          : size == 2  ? std::optional(TensorType::float16)
                       : std::nullopt;
    case 'i':
      return size == 1 ? std::optional(TensorType::int8)
          : size == 2  ? std::optional(TensorType::int16)
          : size == 4  ? std::optional(TensorType::int32)
          : size == 8  ? std::optional(TensorType::int64)
                       : std::nullopt;
    case 'u':
      return size == 1 ? std::optional(TensorType::uint8)
          : size == 2  ? std::optional(TensorType::uint16)
          : size == 4  ? std::optional(TensorType::uint32)
                       : std::nullopt;
    case 'b': return TensorType::boolean;
    default: return std::nullopt;
  }
}

TensorFormat parse_format(const std::string& s, std::string_view call) {
  if (s == "nhwc" || s == "NHWC") return TensorFormat::nhwc;
  if (s == "nchw" || s == "NCHW") return TensorFormat::nchw;
  if (s.empty() || s == "undefined" || s == "UNDEFINED") return TensorFormat::undefined;
  bad_argument(call, fmt::format("data format \"{}\" is not one of 'nhwc', 'nchw' or 'undefined'", s));
}

// One input array, held (and kept alive) while the runtime reads it.
struct HeldInput {
  py::array array;  // C-contiguous, of a tensor type
  TensorType type = TensorType::float32;
  TensorFormat format = TensorFormat::undefined;
  Dims dims;
  bool pass_through = false;
};

HeldInput hold_input(const py::handle& given, std::size_t index, const std::string& format, bool pass_through) {
  constexpr std::string_view call = "rknnxx.Context.run";
  py::array a = py::array::ensure(given, py::array::c_style);
  if (!a) {
    PyErr_Clear();
    bad_argument(call,
                 fmt::format("input {} is a {}, not an array", index,
                             std::string(py::str(py::type::of(given).attr("__name__")))));
  }
  // Python floats make float64 arrays: the runtime has no float64 tensors, and float32 holds the
  // values an NPU model takes.
  if (a.dtype().kind() == 'f' && a.dtype().itemsize() == 8)
    a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
  const auto type = tensor_type_of_dtype(a.dtype());
  if (!type)
    bad_argument(call,
                 fmt::format("input {} has numpy dtype {}, which is no tensor type (use float32, float16, int8, "
                             "uint8, int16, uint16, int32, uint32, int64 or bool)",
                             index, std::string(py::str(a.dtype()))));
  std::vector<std::uint32_t> extents;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) <= 0 || a.shape(d) > static_cast<py::ssize_t>(UINT32_MAX))
      bad_argument(call,
                   fmt::format("input {} has extent {} in axis {}: extents are 1 .. 2^32-1", index, a.shape(d), d));
    extents.push_back(static_cast<std::uint32_t>(a.shape(d)));
  }
  if (extents.empty()) extents.push_back(1);
  HeldInput h;
  h.type = *type;
  h.format = parse_format(format, call);
  h.dims = Dims(std::span<const std::uint32_t>(extents));
  h.pass_through = pass_through;
  h.array = std::move(a);
  return h;
}

// Calls f with the array as a typed view. A 4-D array labelled NHWC or NCHW is a view in that
// layout (checked against the model's 4-D input in that order); anything else (another rank, or no
// label) a flat view in the model's order (checked by its element count).
template <class T, class F> decltype(auto) with_view_as(const HeldInput& h, F&& f) {
  const T* p = static_cast<const T*>(h.array.data());
  const Dims& d = h.dims;
  if (d.rank() == 4 && h.format == TensorFormat::nhwc)
    return f(nhwc_view(p, Extents4{.n = d[0], .c = d[3], .h = d[1], .w = d[2]}));
  if (d.rank() == 4 && h.format == TensorFormat::nchw)
    return f(nchw_view(p, Extents4{.n = d[0], .c = d[1], .h = d[2], .w = d[3]}));
  return f(flat_view(p, d));
}

template <class F> decltype(auto) with_view(const HeldInput& h, F&& f) {
  switch (h.type) {
    case TensorType::float32: return with_view_as<float>(h, f);
    case TensorType::float16: return with_view_as<Float16>(h, f);
    case TensorType::int8: return with_view_as<std::int8_t>(h, f);
    case TensorType::uint8: return with_view_as<std::uint8_t>(h, f);
    case TensorType::int16: return with_view_as<std::int16_t>(h, f);
    case TensorType::uint16: return with_view_as<std::uint16_t>(h, f);
    case TensorType::int32: return with_view_as<std::int32_t>(h, f);
    case TensorType::uint32: return with_view_as<std::uint32_t>(h, f);
    case TensorType::int64: return with_view_as<std::int64_t>(h, f);
    case TensorType::boolean: return with_view_as<bool>(h, f);
    case TensorType::int4:
    case TensorType::bfloat16: break;
  }
  bad_argument("rknnxx", fmt::format("{} arrays cannot come from numpy", name_of(h.type)));
}

InputData input_data(const HeldInput& h) {
  return with_view(h, [&](const auto& view) { return InputData(view, h.pass_through); });
}

// The runtime-order dims (NHWC for 4-D) an input array asks for, for the choice of a shape group.
Dims runtime_dims(const HeldInput& h) {
  return h.dims.rank() == 4 && h.format == TensorFormat::nchw ? nchw_to_nhwc(h.dims) : h.dims;
}

// One output copied out of the runtime's buffer, to become a numpy array after the lock is let go.
struct CopiedOutput {
  TensorInfo info;
  std::vector<std::byte> bytes;
};

py::array to_numpy(CopiedOutput&& out) {
  const TensorType type = out.info.type();
  if (!has_numpy_dtype(type))
    throw Error(Errc::output_invalid, "rknnxx.Context.run",
                fmt::format("output type {} has no numpy dtype: ask for float32 outputs", name_of(type)),
                out.info.id());
  std::vector<py::ssize_t> shape;
  for (std::uint32_t e : out.info.dims()) shape.push_back(static_cast<py::ssize_t>(e));
  auto* owned = new std::vector<std::byte>(std::move(out.bytes));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<std::byte>*>(p); });
  const py::dtype dt(dtype_name(type));
  if (static_cast<std::uint64_t>(owned->size()) < bytes_for(type, out.info.dims().elements()))
    throw Error(Errc::output_invalid, "rknnxx.Context.run",
                fmt::format("the runtime gave {} bytes for dims {}", owned->size(), dims_text(out.info.dims())),
                out.info.id());
  return py::array(dt, shape, owned->data(), free_when_done);
}

// ---- attributes ----------------------------------------------------------------------------------

py::dict attr_dict(const TensorInfo& t) {
  py::dict d;
  d["index"] = t.index();
  d["name"] = std::string(t.name());
  py::tuple dims(t.dims().rank());
  for (std::size_t i = 0; i < t.dims().rank(); ++i) dims[i] = t.dims()[i];
  d["dims"] = dims;
  d["dtype"] = dtype_name(t.type());
  d["type"] = std::string(name_of(t.type()));
  d["format"] = std::string(name_of(t.format()));
  d["n_elems"] = t.n_elems();
  d["size"] = t.size();
  d["w_stride"] = t.w_stride();
  d["h_stride"] = t.h_stride();
  d["size_with_stride"] = t.size_with_stride();
  d["pass_through"] = t.pass_through();
  const auto q = t.quantization();
  const py::object fl = t.qnt_type() == RKNN_TENSOR_QNT_DFP ? py::object(py::int_(*q.fraction_length())) : py::none();
  d["quantization"] = q.affine ? py::object(py::make_tuple(q.scale, q.zero_point, fl)) : py::object(py::none());
  return d;
}

AttrQuery parse_query(const std::string& s) {
  if (s == "normal") return AttrQuery::normal;
  if (s == "native") return AttrQuery::native;
  if (s == "native_nhwc") return AttrQuery::native_nhwc;
  if (s == "current") return AttrQuery::current;
  if (s == "current_native") return AttrQuery::current_native;
  bad_argument(
      "rknnxx.Context.input_attrs",
      fmt::format("attribute query \"{}\" is not one of normal, native, native_nhwc, current, current_native", s));
}

std::shared_ptr<const Runtime> load_runtime(const std::optional<std::string>& choice) {
  return Runtime::load(choice ? RuntimeChoice::parse(*choice) : RuntimeChoice::from_environment());
}

// ---- Context -------------------------------------------------------------------------------------

class NativeContext {
public:
  explicit NativeContext(Context ctx) : ctx_(std::move(ctx)) {}

  static std::unique_ptr<NativeContext> open(const py::object& model, const std::optional<std::string>& runtime,
                                             std::uint32_t flags) {
    ContextOptions options;
    options.flags = InitFlags(static_cast<InitFlag>(flags));
    if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model) ||
        py::isinstance<py::memoryview>(model)) {
      const py::buffer_info buf = py::buffer(model).request();
      std::span<const std::byte> bytes(static_cast<const std::byte*>(buf.ptr),
                                       static_cast<std::size_t>(buf.size * buf.itemsize));
      py::gil_scoped_release nogil;
      options.runtime = load_runtime(runtime);
      return std::make_unique<NativeContext>(Context::from_buffer(bytes, options));
    }
    const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
    py::gil_scoped_release nogil;
    options.runtime = load_runtime(runtime);
    return std::make_unique<NativeContext>(Context::from_file(path, options));
  }

  // Runs f(context) under this context's lock with the GIL released; f must not touch Python.
  template <class F> auto locked(F&& f) {
    py::gil_scoped_release nogil;
    std::lock_guard lock(mutex_);
    return f(ctx_);
  }

  // The same from code that must keep the GIL (destructors). Safe: whoever holds the lock never
  // waits for the GIL.
  template <class F> auto locked_keeping_gil(F&& f) {
    std::lock_guard lock(mutex_);
    return f(ctx_);
  }

  py::list attrs(bool input, const std::string& query) {
    const AttrQuery q = parse_query(query);
    auto infos = locked([&](Context& c) {
      if (q == AttrQuery::current) return input ? c.current_inputs() : c.current_outputs();
      return input ? c.input_infos(q) : c.output_infos(q);
    });
    py::list l;
    for (const auto& t : infos) l.append(attr_dict(t));
    return l;
  }

  // The shape set as groups of per-input runtime-order shapes, or None for a static model.
  py::object shape_set() {
    auto set = locked([](Context& c) { return c.shape_set(); });
    if (!set) return py::none();
    py::list groups;
    for (std::size_t g = 0; g < set->num_shapes(); ++g) {
      py::list group;
      for (std::size_t i = 0; i < set->num_inputs(); ++i) {
        const Dims& d = set->shape(g, i);
        py::tuple t(d.rank());
        for (std::size_t k = 0; k < d.rank(); ++k) t[k] = d[k];
        group.append(t);
      }
      groups.append(py::tuple(group));
    }
    return py::tuple(groups);
  }

  std::optional<std::size_t> current_group() {
    return locked([](Context& c) { return c.current_shape_group(); });
  }

  std::size_t set_input_shapes_group(std::size_t group) {
    return locked([&](Context& c) { return c.set_input_shapes(group).group; });
  }
  std::size_t set_input_shapes(const std::vector<std::vector<std::uint32_t>>& shapes, const std::string& order) {
    if (order != "runtime" && order != "nchw")
      bad_argument("rknnxx.Context.set_input_shapes",
                   fmt::format("order \"{}\" is not 'runtime' (NHWC) or 'nchw'", order));
    std::vector<Dims> dims;
    for (const auto& s : shapes) dims.emplace_back(std::span<const std::uint32_t>(s));
    return locked([&](Context& c) {
      return c.set_input_shapes(std::span<const Dims>(dims), order == "nchw" ? DimsOrder::nchw : DimsOrder::runtime)
          .group;
    });
  }

  // Sets the inputs, runs and copies the outputs out. A dynamic-shape model switches to the group
  // the arrays' shapes name first when they differ from the current shapes (Lite2: the shape of the
  // call chooses; until the first switch the current shapes are the ones the attributes report).
  py::list run(const py::sequence& inputs, const std::vector<std::string>& formats,
               const std::vector<bool>& pass_through, bool want_float) {
    constexpr std::string_view call = "rknnxx.Context.run";
    if (formats.size() != inputs.size() || pass_through.size() != inputs.size())
      bad_argument(call,
                   fmt::format("{} inputs, {} data formats and {} pass-through flags: give one of each per input",
                               inputs.size(), formats.size(), pass_through.size()));
    std::vector<HeldInput> held;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const py::object item = inputs[i];
      held.push_back(hold_input(item, i, formats[i], pass_through[i]));
    }
    std::vector<CopiedOutput> copied = locked([&](Context& c) {
      if (held.size() != c.num_inputs())
        bad_argument(call, fmt::format("{} inputs given, the model has {}", held.size(), c.num_inputs()));
      // Only arrays that differ from the current shapes make the runtime be asked for the shape set:
      // a static model answers that question with a warning and an error in the runtime's log
      // (Context::shape_set), which a script that passes the right shapes should not see.
      std::vector<Dims> wanted;
      bool same = true;
      for (std::size_t i = 0; i < held.size(); ++i) {
        wanted.push_back(runtime_dims(held[i]));
        same = same && wanted.back() == c.current_inputs()[i].dims();
      }
      if (!same && c.is_dynamic()) c.set_input_shapes(std::span<const Dims>(wanted));
      std::vector<InputData> data;
      for (const auto& h : held) data.push_back(input_data(h));
      c.set_inputs(std::span<const InputData>(data));
      c.run();
      Outputs outs = c.outputs(want_float ? OutputType::float32 : OutputType::native);
      std::vector<CopiedOutput> result;
      for (std::size_t i = 0; i < outs.size(); ++i) {
        const OutputData o = outs[i];
        result.push_back({o.info(), std::vector<std::byte>(o.bytes().begin(), o.bytes().end())});
      }
      return result;
    });
    py::list out;
    for (auto& o : copied) out.append(to_numpy(std::move(o)));
    return out;
  }

  std::unique_ptr<NativeContext> dup() {
    return locked([](Context& c) { return std::make_unique<NativeContext>(c.dup()); });
  }

  Context& context() { return ctx_; }

private:
  std::mutex mutex_;
  Context ctx_;
};

// ---- zero-copy: IoBinding and its CPU-access windows ---------------------------------------------

using PyTensorRef = std::variant<std::uint32_t, std::string>;

TensorRef tensor_ref(const PyTensorRef& r) {
  return std::visit([](const auto& v) { return TensorRef(v); }, r);
}

BindAs bind_as(const std::optional<std::string>& dtype, const std::optional<std::string>& format, bool native) {
  constexpr std::string_view call = "rknnxx.Context.bind";
  if (native) {
    if (dtype || format)
      bad_argument(call, "native binds the runtime's native type and layout: give no dtype or format with it");
    return BindAs::native_layout();
  }
  BindAs as;
  if (dtype) {
    as.element_type = tensor_type_of_dtype(py::dtype(*dtype));
    if (!as.element_type) bad_argument(call, fmt::format("dtype {} is no tensor type", *dtype));
  }
  if (format) as.format = parse_format(*format, call);
  return as;
}

class NativeWindow;

// An IoBinding of every input and output. The runtime keeps using the bound memory, so a shape
// switch that could reallocate it is refused while a CPU-access window (a numpy array over it) is open.
class NativeBinding {
public:
  NativeBinding(NativeContext& ctx, BindAs inputs, BindAs outputs)
      : ctx_(&ctx), io_(ctx.locked([&](Context& c) { return std::make_unique<IoBinding>(c, inputs, outputs); })) {}
  NativeBinding(const NativeBinding&) = delete;
  NativeBinding& operator=(const NativeBinding&) = delete;
  ~NativeBinding() {
    ctx_->locked_keeping_gil([&](Context&) { io_.reset(); });
  }

  TensorInfo bound(bool input, const PyTensorRef& r) {
    return ctx_->locked(
        [&](Context&) { return input ? io_->bound_input(tensor_ref(r)) : io_->bound_output(tensor_ref(r)); });
  }
  std::size_t set_input_shapes(std::size_t group) {
    if (open_windows_ > 0)
      bad_argument("rknnxx.Binding.set_input_shapes",
                   fmt::format("{} buffer window(s) are open: a shape switch may move the bound memory under them; "
                               "leave the `with` blocks first",
                               open_windows_));
    return ctx_->locked([&](Context&) { return io_->set_input_shapes(group).group; });
  }
  void run() {
    ctx_->locked([&](Context&) { io_->run(); });
  }
  std::unique_ptr<NativeWindow> open(bool input, const PyTensorRef& r);

private:
  friend class NativeWindow;
  NativeContext* ctx_;  // kept alive by the Python binding object (keep_alive in the module)
  std::unique_ptr<IoBinding> io_;
  int open_windows_ = 0;
};

// A CPU-access window over one bound tensor: opened for an input it syncs to the device when
// released; opened for an output it synced from the device when opened (rknnxx::MemAccess).
class NativeWindow {
public:
  explicit NativeWindow(NativeBinding& owner) : owner_(&owner) {}
  NativeWindow(const NativeWindow&) = delete;
  NativeWindow& operator=(const NativeWindow&) = delete;
  ~NativeWindow() {
    try {
      owner_->ctx_->locked_keeping_gil([&](Context&) { close(); });
    } catch (...) {  // NOLINT: a destructor must not throw; release() reports sync errors
    }
  }

  void release() {
    owner_->ctx_->locked([&](Context&) { close(); });
  }

  // The memory as a numpy array whose base is this window: in the bound type, shaped by the bound
  // dims (NHWC and NC1HWC2 rows padded to w_stride as strided views), or flat when the attribute
  // does not fit the allocation. Read-only for outputs.
  py::array array(const py::object& self) {
    if (!open_) bad_argument("rknnxx.Binding buffer", fmt::format("the window over {} was released", info_.id().name));
    const TensorType type = info_.type();
    if (!has_numpy_dtype(type))
      bad_argument("rknnxx.Binding buffer",
                   fmt::format("{} is bound as {}, which has no numpy dtype", info_.name(), name_of(type)));
    const py::dtype dt(dtype_name(type));
    const auto item = static_cast<py::ssize_t>(dt.itemsize());
    const auto bytes = static_cast<py::ssize_t>(size_);
    const Dims d = info_.dims();
    std::vector<py::ssize_t> shape, strides;
    if (info_.format() == TensorFormat::nhwc && d.rank() == 4) {
      // Rows padded to w_stride (and h_stride): a strided view over the logical NHWC extents.
      const py::ssize_t c = d[3], w_stride = std::max(info_.w_stride(), d[2]),
                        h_stride = std::max(info_.h_stride(), d[1]);
      shape = {d[0], d[1], d[2], d[3]};
      strides = {h_stride * w_stride * c * item, w_stride * c * item, c * item, item};
    } else if (info_.format() == TensorFormat::nc1hwc2 && d.rank() == 5) {
      // [N, C1, H, W, C2] with W padded to w_stride.
      const py::ssize_t c2 = d[4], w_stride = std::max(info_.w_stride(), d[3]);
      shape = {d[0], d[1], d[2], d[3], d[4]};
      strides = {d[1] * d[2] * w_stride * c2 * item, d[2] * w_stride * c2 * item, w_stride * c2 * item, c2 * item,
                 item};
    } else {
      for (std::uint32_t e : d) shape.push_back(e);
      py::ssize_t stride = item;
      strides.assign(shape.size(), 0);
      for (std::size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
      }
    }
    // A view must stay inside the allocation; an attribute that does not fit it is shown flat.
    py::ssize_t last = item;
    for (std::size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * strides[i];
    if (last > bytes) shape.clear();
    if (shape.empty()) {
      shape = {bytes / item};
      strides = {item};
    }
    py::array a(dt, shape, strides, data_, self);
    if (!input_) a.attr("setflags")(py::arg("write") = false);
    return a;
  }

  py::dict attr() const { return attr_dict(info_); }

private:
  friend class NativeBinding;
  void close() {
    if (!open_) return;
    open_ = false;
    --owner_->open_windows_;
    read_.reset();
    if (write_) {
      auto w = std::move(*write_);
      write_.reset();
      w.reset();  // syncs to the device; throws the sync error, if any
    }
  }

  NativeBinding* owner_;  // kept alive by the Python window object (keep_alive in the module)
  TensorInfo info_;
  std::optional<MemAccess<CpuAccess::write>> write_;
  std::optional<MemAccess<CpuAccess::read>> read_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool input_ = true;
  bool open_ = false;
};

std::unique_ptr<NativeWindow> NativeBinding::open(bool input, const PyTensorRef& r) {
  return ctx_->locked([&](Context&) {
    auto w = std::make_unique<NativeWindow>(*this);
    const TensorRef ref = tensor_ref(r);
    w->input_ = input;
    if (input) {
      w->info_ = io_->bound_input(ref);
      w->write_.emplace(io_->input_memory(ref).write());
      w->data_ = w->write_->data();
      w->size_ = w->write_->size();
    } else {
      w->info_ = io_->bound_output(ref);
      w->read_.emplace(io_->output_memory(ref).read());
      w->data_ = const_cast<std::byte*>(w->read_->data());
      w->size_ = w->read_->size();
    }
    w->open_ = true;
    ++open_windows_;
    return w;
  });
}

py::dict runtime_dict(const Runtime& rt) {
  py::dict d;
  d["path"] = rt.path();
  d["kind"] = std::string(name_of(rt.kind()));
  if (const auto v = rt.sdk_version()) {
    d["api_version"] = v->api;
    d["driver_version"] = v->driver;
  }
  return d;
}

}  // namespace
}  // namespace rknnxx::python

PYBIND11_MODULE(_native, m) {
  using namespace rknnxx;
  using namespace rknnxx::python;
  m.doc() = "rknnxx: the rknn runtime (vendor on a board, the host runtime elsewhere) from Python";
  m.attr("__version__") = version_string;

  error_type = PyErr_NewExceptionWithDoc(
      "rknnxx.Error",
      "An error of the rknn runtime or of rknnxx: str(e) says what failed and why; e.code is the runtime's return code "
      "(e.g. -5 for RKNN_ERR_PARAM_INVALID), e.code_name its name, e.call the call and e.message the detail.",
      PyExc_RuntimeError, nullptr);
  if (error_type == nullptr) throw py::error_already_set();
  // add_object takes a reference of its own; the one from PyErr_NewException is never released, so
  // error_type stays valid for the interpreter's life.
  m.add_object("Error", py::handle(error_type));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_error(e);
    }
  });

  py::dict codes;
  for (const Errc e : {Errc::fail, Errc::timeout, Errc::device_unavailable, Errc::malloc_fail, Errc::param_invalid,
                       Errc::model_invalid, Errc::ctx_invalid, Errc::input_invalid, Errc::output_invalid,
                       Errc::device_unmatch, Errc::incompatible_pre_compile_model,
                       Errc::incompatible_optimization_level_version, Errc::target_platform_unmatch})
    codes[py::str(std::string(errc_name(e)))] = static_cast<int>(e);
  m.attr("error_codes") = codes;

  m.def(
      "load_runtime",
      [](const std::optional<std::string>& choice) {
        auto rt = [&] {
          py::gil_scoped_release nogil;
          return load_runtime(choice);
        }();
        return runtime_dict(*rt);
      },
      py::arg("choice") = py::none(),
      "Loads the runtime for a choice ('vendor', 'host', 'auto' or a path; None: RKNNXX_RUNTIME) and describes it.");

  m.def(
      "platforms",
      [] {
        py::list l;
        for (const Platform p : all_platforms) {
          const auto& info = platform_info(p);
          l.append(py::make_tuple(std::string(info.name), info.npu_cores));
        }
        return l;
      },
      "The platforms rknnxx knows, as (name, NPU cores).");

  py::class_<NativeContext>(m, "Context")
      .def(
          py::init(&NativeContext::open), py::arg("model"), py::arg("runtime") = py::none(), py::arg("flags") = 0,
          "Opens a model (a path, or its bytes) on a runtime ('vendor', 'host', 'auto', a path; None: RKNNXX_RUNTIME).")
      .def_property_readonly("num_inputs",
                             [](NativeContext& c) { return c.locked([](Context& x) { return x.num_inputs(); }); })
      .def_property_readonly("num_outputs",
                             [](NativeContext& c) { return c.locked([](Context& x) { return x.num_outputs(); }); })
      .def(
          "input_attrs", [](NativeContext& c, const std::string& q) { return c.attrs(true, q); },
          py::arg("query") = "current")
      .def(
          "output_attrs", [](NativeContext& c, const std::string& q) { return c.attrs(false, q); },
          py::arg("query") = "current")
      .def("shape_set", &NativeContext::shape_set)
      .def_property_readonly("current_group", &NativeContext::current_group)
      .def("set_input_shapes", &NativeContext::set_input_shapes_group, py::arg("group"))
      .def("set_input_shapes", &NativeContext::set_input_shapes, py::arg("shapes"), py::arg("order") = "runtime")
      .def("run", &NativeContext::run, py::arg("inputs"), py::arg("formats"), py::arg("pass_through"),
           py::arg("want_float") = true)
      .def("dup", &NativeContext::dup)
      .def(
          "set_core_mask",
          [](NativeContext& c, std::uint32_t mask) {
            c.locked([&](Context& x) { x.set_core_mask(static_cast<CoreMask>(mask)); });
          },
          py::arg("mask"))
      .def("sdk_version",
           [](NativeContext& c) {
             const auto v = c.locked([](Context& x) { return x.sdk_version(); });
             return py::make_tuple(v.api, v.driver);
           })
      .def("custom_string", [](NativeContext& c) { return c.locked([](Context& x) { return x.custom_string(); }); })
      .def("last_run_us",
           [](NativeContext& c) {
             return c.locked([](Context& x) { return static_cast<long long>(x.last_run_duration().count()); });
           })
      .def(
          "bind",
          [](NativeContext& c, const std::optional<std::string>& input_dtype,
             const std::optional<std::string>& input_format, const std::optional<std::string>& output_dtype,
             const std::optional<std::string>& output_format, bool native) {
            return std::make_unique<NativeBinding>(c, bind_as(input_dtype, input_format, native),
                                                   bind_as(output_dtype, output_format, native));
          },
          py::arg("input_dtype"), py::arg("input_format"), py::arg("output_dtype"), py::arg("output_format"),
          py::arg("native"), py::keep_alive<0, 1>())
      .def("runtime", [](NativeContext& c) {
        const Runtime* rt = c.locked([](Context& x) { return &x.runtime(); });
        return runtime_dict(*rt);
      });

  py::class_<NativeBinding>(m, "Binding")
      .def("bound", [](NativeBinding& b, bool input, const PyTensorRef& r) { return attr_dict(b.bound(input, r)); })
      .def("set_input_shapes", &NativeBinding::set_input_shapes, py::arg("group"))
      .def("run", &NativeBinding::run)
      .def("open_window", &NativeBinding::open, py::arg("input"), py::arg("tensor"), py::keep_alive<0, 1>());

  py::class_<NativeWindow>(m, "Window")
      .def("array", [](py::object self) { return self.cast<NativeWindow&>().array(self); })
      .def("attr", &NativeWindow::attr)
      .def("release", &NativeWindow::release);
}
