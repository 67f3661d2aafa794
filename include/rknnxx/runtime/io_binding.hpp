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
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/runtime/mem.hpp>
#include <rknnxx/tensor/attr.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/view.hpp>

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
  IoBinding(ContextRef ctx, BindAs inputs, BindAs outputs);
  // A temporary Context would be destroyed at the end of the statement, and the binding with it.
  explicit IoBinding(Context&&) = delete;
  IoBinding(Context&&, BindAs, BindAs) = delete;

  // Moving keeps every binding (the runtime's memory does not move). Move assignment first drops
  // this object's bindings: the runtime keeps using that memory, so a run on their tensors is
  // refused until they are bound again (the destructor does the same).
  IoBinding(IoBinding&&) noexcept = default;
  IoBinding& operator=(IoBinding&& o) noexcept;
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
  ShapeChange set_input_shapes(std::size_t group);
  ShapeChange set_input_shapes(std::span<const Dims> dims, DimsOrder order = DimsOrder::runtime);
  // Brings every binding up to date after Context::set_input_shapes was called directly.
  void rebind();
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
      throw Error(Errc::output_invalid, "rknnxx::IoBinding::output",
                  detail::message("asked for {}, the output is bound as {}", name_of(tensor_type_of<T>),
                                  name_of(slot.info.type())),
                  slot.info.id());
    return BoundSpan<T>(slot.mem.read(), slot.info, slot.info.n_elems());
  }

  void run();

  // The attribute a tensor is bound with now, and its memory.
  [[nodiscard]] const TensorInfo& bound_input(TensorRef t) const;
  [[nodiscard]] const TensorInfo& bound_output(TensorRef t) const;
  [[nodiscard]] Mem& input_memory(TensorRef t);
  [[nodiscard]] Mem& output_memory(TensorRef t);

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

  TensorInfo attr_for(const Slot& slot, bool current) const;

  // (Re)binds one tensor. The new slot is bound before the old one goes, so that a refused bind
  // (memory too small, another context's) leaves the old binding in place.
  void bind(bool input, std::uint32_t index, BindAs as, Mem* app_mem);

  void require_fits(const Slot& slot, std::uint64_t need, std::string_view which) const;

  // (Re)binds a slot with the current attributes. Memory the binding owns is allocated once at
  // the largest size: the attributes queried before any shape switch describe the model's
  // largest shape (docs/c-interface.md); where a later shape needs more (multi-input models), the
  // buffer grows. The application's memory must hold the current size.
  void attach(Slot& slot);

  void require_alive(const Slot& slot, std::string_view call) const;

  Slot& find(bool input, std::uint32_t index, std::string_view call);
  const Slot& find(bool input, std::uint32_t index, std::string_view call) const;
  const Slot& fresh_slot(const Slot& slot, std::string_view call) const;
  Slot& fresh(bool input, std::uint32_t index, std::string_view call);

  ContextRef ctx_;
  std::vector<Slot> slots_;
  std::uint64_t generation_ = 0;
};

}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/runtime/impl/io_binding.hpp>
#endif
