#pragma once
// IoBinding: zero-copy I/O (rknn_create_mem + rknn_set_io_mem) made short. It binds inputs and
// outputs by index or name, with the attributes the runtime reports or ones the application
// chooses; allocates each buffer once at the largest size the shape set needs; rebinds with the
// current attributes on a shape switch; and writes and reads through typed views, doing the
// w_stride row copy, NC1HWC2 (un)blocking and (de)quantization, with the cache syncs.
//
//   IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc),     // inputs
//                     BindAs::type(TensorType::float32, TensorFormat::nchw));  // outputs
//   for (std::size_t g = 0; g < ctx.shape_set()->num_shapes(); ++g) {
//     auto shape = io.set_input_shapes(g);                   // switch + rebind
//     io.write("data", nhwc_view(rgb.data(), {1, 3, h, w})); // row copy into the w_stride buffer
//     io.run();
//     auto logits = io.output<float>("logits");              // read window: synced, typed span
//   }
//
// A binding made for an older shape is stale: write/read/run refuse it (and so does
// Context::run) until IoBinding::set_input_shapes or rebind() brings it up to date.
//
// Memory the application owns (a Mem from Context::create_mem or Context::wrap_fd, e.g. a dma-buf
// shared with a camera or a display) binds with bind_input(t, mem) / bind_output(t, mem): it must
// hold the tensor's largest size, is rebound on every shape switch, and is used through the Mem's
// access windows (with its CPU-access hook). The binding keeps a view of it: the Mem stays the
// application's, may move, and once it is destroyed the binding refuses to use it.
//
// IoBinding holds a ContextRef: it follows the Context when that moves, and refuses every use
// once the Context is destroyed, reset or released.

#include <rknnxx/core/error.hpp>
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/runtime/mem.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/view.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rknnxx {

// The attributes a tensor is bound with.
struct BindAs {
  std::optional<TensorType> element_type;  // default: the queried attribute's
  std::optional<TensorFormat> format;      // default: the queried attribute's
  bool native = false;                     // query the native layout (NC1HWC2 / native NHWC) instead

  [[nodiscard]] static BindAs model() { return {}; }
  [[nodiscard]] static BindAs native_layout() { return {std::nullopt, std::nullopt, true}; }
  [[nodiscard]] static BindAs type(TensorType t, std::optional<TensorFormat> f = std::nullopt) { return {t, f, false}; }
  template <TensorElement T, Layout L> [[nodiscard]] static BindAs as() {
    return {tensor_type_of<T>, L::format, false};
  }
};

// A read window over one bound output (or input), typed: the span and the attribute it has now.
template <class T> class BoundSpan {
public:
  [[nodiscard]] std::span<const T> span() const { return access_.template as<T>().first(count_); }
  [[nodiscard]] const T* data() const { return span().data(); }
  [[nodiscard]] std::size_t size() const { return count_; }
  [[nodiscard]] const T& operator[](std::size_t i) const { return span()[i]; }
  [[nodiscard]] const TensorInfo& info() const noexcept { return info_; }
  [[nodiscard]] auto begin() const { return span().begin(); }
  [[nodiscard]] auto end() const { return span().end(); }

private:
  friend class IoBinding;
  BoundSpan(MemAccess<CpuAccess::read> access, TensorInfo info, std::size_t count)
      : access_(std::move(access)), info_(std::move(info)), count_(count) {}
  MemAccess<CpuAccess::read> access_;
  TensorInfo info_;
  std::size_t count_;
};

class IoBinding {
public:
  // Nothing bound yet: bind_input / bind_output choose.
  explicit IoBinding(ContextRef ctx) : ctx_(std::move(ctx)) { ctx_.use("rknnxx::IoBinding"); }
  // Every input and every output, with one choice for each side.
  IoBinding(ContextRef ctx, BindAs inputs, BindAs outputs) : IoBinding(std::move(ctx)) {
    for (std::uint32_t i = 0; i < ctx_.num_inputs(); ++i) bind_input(i, inputs);
    for (std::uint32_t o = 0; o < ctx_.num_outputs(); ++o) bind_output(o, outputs);
  }
  // A temporary Context would be destroyed at the end of the statement, and the binding with it.
  explicit IoBinding(Context&&) = delete;
  IoBinding(Context&&, BindAs, BindAs) = delete;

  // Moving keeps every binding (the runtime's memory does not move). Move assignment first drops
  // this object's bindings: the runtime keeps using that memory, so a run on their tensors is
  // refused until they are bound again (the destructor does the same).
  IoBinding(IoBinding&&) noexcept = default;
  IoBinding& operator=(IoBinding&& o) noexcept {
    if (this != &o) {
      slots_.clear();
      ctx_ = std::move(o.ctx_);
      slots_ = std::move(o.slots_);
      generation_ = std::exchange(o.generation_, 0);
    }
    return *this;
  }
  IoBinding(const IoBinding&) = delete;
  IoBinding& operator=(const IoBinding&) = delete;
  ~IoBinding() = default;

  // Binds runtime memory the binding allocates (and owns).
  void bind_input(TensorRef t, BindAs as = {}) { bind(true, ctx_.input_index(t), as, nullptr); }
  void bind_output(TensorRef t, BindAs as = {}) { bind(false, ctx_.output_index(t), as, nullptr); }
  // Binds memory the application owns, made through the same context (see the top of this file).
  void bind_input(TensorRef t, Mem& mem, BindAs as = {}) { bind(true, ctx_.input_index(t), as, &mem); }
  void bind_output(TensorRef t, Mem& mem, BindAs as = {}) { bind(false, ctx_.output_index(t), as, &mem); }

  // Switches the context's shapes and rebinds every tensor with the attributes of the new shape.
  ShapeChange set_input_shapes(std::size_t group) {
    ShapeChange change = ctx_.set_input_shapes(group);
    rebind();
    return change;
  }
  ShapeChange set_input_shapes(std::span<const Dims> dims, DimsOrder order = DimsOrder::runtime) {
    ShapeChange change = ctx_.set_input_shapes(dims, order);
    rebind();
    return change;
  }
  // Brings every binding up to date after Context::set_input_shapes was called directly.
  void rebind() {
    for (Slot& slot : slots_) attach(slot);
  }
  [[nodiscard]] bool stale() const { return generation_ != ctx_.shape_generation(); }

  // Copies (and converts) a view into a bound input: layout, w_stride rows, type, quantization.
  template <class T, class L> void write(TensorRef input, const TensorView<T, L>& src) {
    Slot& slot = fresh(true, ctx_.input_index(input), "rknnxx::IoBinding::write");
    auto w = slot.mem.write();
    copy(erase(src), ErasedView::of(w.data(), w.size(), slot.info, true));
    w.reset();
  }
  // Copies (and converts) a bound output into a view: unblocking, type, dequantization.
  template <class T, class L> void read(TensorRef output, const TensorView<T, L>& dst) {
    Slot& slot = fresh(false, ctx_.output_index(output), "rknnxx::IoBinding::read");
    auto r = slot.mem.read();
    copy(ErasedView::of(const_cast<std::byte*>(r.data()), r.size(), slot.info, false), erase(dst));
  }
  // A read window over a bound output without a copy; T must be its bound element type.
  template <TensorElement T> [[nodiscard]] BoundSpan<T> output(TensorRef output) {
    Slot& slot = fresh(false, ctx_.output_index(output), "rknnxx::IoBinding::output");
    if (slot.info.type() != tensor_type_of<T>)
      throw Error(
          Errc::output_invalid, "rknnxx::IoBinding::output",
          fmt::format("asked for {}, the output is bound as {}", name_of(tensor_type_of<T>), name_of(slot.info.type())),
          slot.info.id());
    return BoundSpan<T>(slot.mem.read(), slot.info, slot.info.n_elems());
  }

  void run() {
    for (const Slot& slot : slots_) (void)fresh_slot(slot, "rknn_run");
    ctx_.run();
  }

  // The attribute a tensor is bound with now, and its memory.
  [[nodiscard]] const TensorInfo& bound_input(TensorRef t) const {
    return find(true, ctx_.input_index(t), "rknnxx::IoBinding::bound_input").info;
  }
  [[nodiscard]] const TensorInfo& bound_output(TensorRef t) const {
    return find(false, ctx_.output_index(t), "rknnxx::IoBinding::bound_output").info;
  }
  [[nodiscard]] Mem& input_memory(TensorRef t) {
    return find(true, ctx_.input_index(t), "rknnxx::IoBinding::input_memory").mem;
  }
  [[nodiscard]] Mem& output_memory(TensorRef t) {
    return find(false, ctx_.output_index(t), "rknnxx::IoBinding::output_memory").mem;
  }

private:
  struct Slot {
    bool input = true;
    std::uint32_t index = 0;
    BindAs as;
    Mem mem;
    TensorInfo info;
    std::string label;
    bool app_owned = false;  // mem is a view of memory the application owns
  };

  TensorInfo attr_for(const Slot& slot, bool current) const {
    const AttrQuery q = slot.as.native ? (current ? AttrQuery::current_native : AttrQuery::native)
                                       : (current ? AttrQuery::current : AttrQuery::normal);
    TensorInfo info = slot.input ? ctx_.input_info(slot.index, q) : ctx_.output_info(slot.index, q);
    if (slot.as.element_type || slot.as.format)
      info = info.with(slot.as.element_type.value_or(info.type()), slot.as.format.value_or(info.format()));
    return info;
  }

  // (Re)binds one tensor. The new slot is bound before the old one goes, so that a refused bind
  // (memory too small, another context's) leaves the old binding in place.
  void bind(bool input, std::uint32_t index, BindAs as, Mem* app_mem) {
    auto& s = ctx_.use("rknn_set_io_mem");
    const TensorInfo& named = (input ? s.current_inputs : s.current_outputs).at(index);
    Slot slot{input, index, as, {}, {}, fmt::format("{} {} \"{}\"", input ? "input" : "output", index, named.name()),
              false};
    if (app_mem != nullptr) {
      (void)ctx_.own(*app_mem, input ? "rknnxx::IoBinding::bind_input" : "rknnxx::IoBinding::bind_output");
      slot.mem = app_mem->view();
      slot.app_owned = true;
      // The largest shape of the set first, so that every later shape switch rebinds it.
      slot.info = attr_for(slot, false);
      require_fits(slot, slot.info.alloc_size(), " (the largest shape of the model's shape set)");
    }
    attach(slot);
    for (Slot& old : slots_)
      if (old.input == input && old.index == index) {
        old = std::move(slot);
        return;
      }
    slots_.push_back(std::move(slot));
  }

  void require_fits(const Slot& slot, std::uint64_t need, std::string_view which) const {
    const std::uint32_t given = slot.mem.size();
    if (given < need)
      throw Error(Errc::param_invalid, "rknn_set_io_mem",
                  fmt::format("the application's memory bound to {} holds {} bytes; the tensor needs {} bytes{}",
                              slot.label, given, need, which),
                  slot.info.id());
  }

  // (Re)binds a slot with the current attributes. Memory the binding owns is allocated once at
  // the largest size: the attributes queried before any shape switch describe the model's
  // largest shape (docs/c-interface.md); where a later shape needs more (multi-input models), the
  // buffer grows. The application's memory must hold the current size.
  void attach(Slot& slot) {
    auto& s = ctx_.use("rknn_set_io_mem");
    const bool shapes_chosen = s.group.has_value();
    if (slot.app_owned) require_alive(slot, "rknn_set_io_mem");
    slot.info = attr_for(slot, shapes_chosen);
    std::uint64_t need = slot.info.alloc_size();
    if (slot.app_owned) {
      require_fits(slot, need, shapes_chosen ? fmt::format(" (shape group {})", *s.group) : std::string());
    } else if (!slot.mem) {
      if (shapes_chosen) need = std::max<std::uint64_t>(need, attr_for(slot, false).alloc_size());
      slot.mem = ctx_.create_mem(need);
    } else if (slot.mem.size() < need) {
      slot.mem = ctx_.create_mem(need);
    }
    ctx_.set_io_mem(slot.mem, slot.info);
    auto entry = std::find_if(s.bound.begin(), s.bound.end(), [&](const auto& b) { return b.label == slot.label; });
    if (entry == s.bound.end()) entry = s.bound.insert(s.bound.end(), {slot.label, {}, false});
    entry->life = slot.mem.life();
    entry->app_owned = slot.app_owned;
    s.has_bindings = true;
    s.bound_generation = s.generation;
    generation_ = s.generation;
  }

  void require_alive(const Slot& slot, std::string_view call) const {
    if (slot.mem.destroyed())
      throw Error(Errc::param_invalid, std::string(call),
                  fmt::format("the application's memory bound to {} was destroyed (or released to C code) by its Mem; "
                              "bind new memory to it",
                              slot.label),
                  slot.info.id());
  }

  Slot& find(bool input, std::uint32_t index, std::string_view call) {
    for (Slot& slot : slots_)
      if (slot.input == input && slot.index == index) return slot;
    throw Error(Errc::param_invalid, std::string(call),
                fmt::format("{} {} is not bound: bind it with bind_{} first", input ? "input" : "output", index,
                            input ? "input" : "output"));
  }
  const Slot& find(bool input, std::uint32_t index, std::string_view call) const {
    return const_cast<IoBinding*>(this)->find(input, index, call);
  }
  const Slot& fresh_slot(const Slot& slot, std::string_view call) const {
    if (slot.app_owned) require_alive(slot, call);
    if (generation_ != ctx_.shape_generation())
      throw Error(Errc::param_invalid, std::string(call),
                  fmt::format("stale binding of {}: the input shapes changed after it was bound (bound for shape "
                              "generation {}, the context is at {}); switch shapes with IoBinding::set_input_shapes "
                              "or call rebind()",
                              slot.label, generation_, ctx_.shape_generation()));
    return slot;
  }
  Slot& fresh(bool input, std::uint32_t index, std::string_view call) {
    Slot& slot = find(input, index, call);
    (void)fresh_slot(slot, call);
    return slot;
  }

  ContextRef ctx_;
  std::vector<Slot> slots_;
  std::uint64_t generation_ = 0;
};

}  // namespace rknnxx
