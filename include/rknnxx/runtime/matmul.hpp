#pragma once
// MatMul<A, B, C>: move-only RAII over an rknn_matmul_ctx (C = A x B on the NPU's matmul API,
// docs/matmul.md), typed by the element types at compile time: the rknn_matmul_type follows
// from them, and a combination the API lacks does not compile.
//
//   auto mm = MatMul<Float16, Float16, float>::create({4, 64, 32});   // or a shape list: dynamic
//   Mem a = mm.create_mem(Operand::a), b = mm.create_mem(Operand::b), c = mm.create_mem(Operand::c);
//   { auto w = a.write(); fill(w.as<Float16>()); }   // in the layouts of mm.attr(Operand::a) ...
//   mm.bind(a, b, c);
//   mm.run();
//   { auto r = c.read(); use(r.as<float>()); }
//   mm.set_shape({1, 64, 32}); mm.bind(a, b, c); mm.run();  // another shape of the set
//
// With options.platform given, the geometry computed by matmul_geometry (core/matmul_layout.hpp)
// for each shape must equal what the runtime reports, or create() throws: code written for one
// board's layouts does not silently run with another's. Mem made here is destroyed with the
// MatMul; release() hands the rknn_matmul_ctx to the caller, who then owns it.

#include <rknnxx/abi/c_matmul_api.h>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/matmul_layout.hpp>
#include <rknnxx/core/platform.hpp>
#include <rknnxx/runtime/context_state.hpp>
#include <rknnxx/runtime/loader.hpp>
#include <rknnxx/runtime/mem.hpp>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rknnxx {

enum class Operand : std::uint8_t { a, b, c };

namespace detail {
struct MemFactory {
  static Mem make(std::shared_ptr<ContextState> state, rknn_tensor_mem* m) { return Mem(std::move(state), m); }
  static const std::shared_ptr<ContextState>& state_of(const Mem& m) noexcept { return m.state(); }
};

// The rknn_matmul_type whose element types are (A, B, C); 0 when there is none.
template <class A, class B, class C> constexpr int matmul_type_of() noexcept {
  const MatmulTypes wanted{tensor_type_of<A>, tensor_type_of<B>, tensor_type_of<C>};
  for (int type = 1; type <= 15; ++type)
    if (const auto types = matmul_types(type); types && *types == wanted) return type;
  return 0;
}
}  // namespace detail

// The element types of A, B and C form one of the API's rknn_matmul_type values.
template <class A, class B, class C>
concept MatmulElements =
    TensorElement<A> && TensorElement<B> && TensorElement<C> && detail::matmul_type_of<A, B, C>() != 0;

struct MatMulOptions {
  MatmulLayout b_layout = MatmulLayout::normal;
  MatmulLayout ac_layout = MatmulLayout::normal;
  rknn_matmul_quant_type b_quant_type = RKNN_QUANT_TYPE_PER_LAYER_SYM;
  std::int16_t group_size = 0;               // per-group B: K elements per scale
  std::shared_ptr<const Runtime> runtime{};  // null: Runtime::load()
  std::optional<Platform> platform{};        // when known: the geometry is checked against it
};

template <class A, class B, class C>
  requires MatmulElements<A, B, C>
class MatMul {
  using BElement = B;

public:
  static constexpr rknn_matmul_type type = static_cast<rknn_matmul_type>(detail::matmul_type_of<A, B, C>());
  using Options = MatMulOptions;

  [[nodiscard]] static MatMul create(MatmulShape shape, Options options = {}) {
    return create(std::span<const MatmulShape>(&shape, 1), std::move(options), false);
  }
  // Dynamic shapes (rknn_matmul_create_dynamic_shape): the set the context can switch between.
  [[nodiscard]] static MatMul create(std::span<const MatmulShape> shapes, Options options = {}) {
    return create(shapes, std::move(options), true);
  }
  [[nodiscard]] static MatMul create(std::initializer_list<MatmulShape> shapes, Options options = {}) {
    return create(std::span<const MatmulShape>(shapes.begin(), shapes.size()), std::move(options), true);
  }

  MatMul(MatMul&& o) noexcept { take(std::move(o)); }
  MatMul& operator=(MatMul&& o) noexcept {
    if (this != &o) {
      destroy();
      take(std::move(o));
    }
    return *this;
  }
  MatMul(const MatMul&) = delete;
  MatMul& operator=(const MatMul&) = delete;
  ~MatMul() { destroy(); }

  [[nodiscard]] rknn_matmul_ctx native_handle() const { return state("rknnxx::MatMul::native_handle").handle; }
  // Gives up ownership: the caller destroys the context (rknn_matmul_destroy) and Mem made here
  // stays usable until then. The MatMul is empty afterwards.
  [[nodiscard]] rknn_matmul_ctx release() {
    const rknn_matmul_ctx handle = native_handle();
    state_.reset();
    shapes_.clear();
    attrs_.clear();
    return handle;
  }

  // Destroys the context now (with the memory made here); the MatMul becomes empty.
  void reset() noexcept {
    destroy();
    shapes_.clear();
    attrs_.clear();
    current_ = 0;
  }

  [[nodiscard]] std::span<const MatmulShape> shapes() const noexcept { return shapes_; }
  [[nodiscard]] MatmulShape shape() const noexcept { return shapes_.empty() ? MatmulShape{} : shapes_[current_]; }
  // The runtime's attributes of one operand for the current shape (dims, byte size, layout).
  [[nodiscard]] const rknn_matmul_tensor_attr& attr(Operand which) const {
    const auto& io = attrs_.at(current_);
    return which == Operand::a ? io.A : which == Operand::b ? io.B : io.C;
  }

  // Memory for one operand, big enough for every shape of the set.
  [[nodiscard]] Mem create_mem(Operand which) {
    std::uint32_t size = 0;
    for (const auto& io : attrs_) {
      const auto& a = which == Operand::a ? io.A : which == Operand::b ? io.B : io.C;
      size = a.size > size ? a.size : size;
    }
    auto& s = state("rknn_create_mem");
    rknn_tensor_mem* m = s.api().rknn_create_mem(s.handle, size);
    if (m == nullptr) s.fail(Errc::malloc_fail, "rknn_create_mem", detail::message("{} bytes", size));
    s.mems.push_back(m);
    return detail::MemFactory::make(state_, m);
  }

  // Binds A, B and C for the current shape (rknn_matmul_set_io_mem).
  void bind(const Mem& a, const Mem& b, const Mem& c) {
    bind_one(a, Operand::a);
    bind_one(b, Operand::b);
    bind_one(c, Operand::c);
  }

  // Fills `b` with B given in normal layout ([K, N] row-major; int4 two a byte, the even element
  // in the low nibble) converted to the native layout (rknn_B_normal_layout_to_native_layout),
  // for the current shape's K and N.
  void write_native_b(std::span<const std::byte> normal, Mem& b) {
    auto& s = state("rknn_B_normal_layout_to_native_layout");
    const MatmulShape sh = shape();
    const std::uint64_t need = bytes_for(tensor_type_of<BElement>, detail::checked_mul(sh.k, sh.n, "K x N"));
    if (normal.size() < need)
      throw Error(Errc::param_invalid, "rknn_B_normal_layout_to_native_layout",
                  detail::message("B [K={}, N={}] needs {} bytes, {} given", sh.k, sh.n, need, normal.size()));
    if (b.size() < attr(Operand::b).size)
      throw Error(Errc::param_invalid, "rknn_B_normal_layout_to_native_layout",
                  detail::message("the memory for B has {} bytes, native B needs {}", b.size(), attr(Operand::b).size));
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof info);
    info.M = static_cast<std::int32_t>(sh.m);
    info.K = static_cast<std::int32_t>(sh.k);
    info.N = static_cast<std::int32_t>(sh.n);
    info.type = type;
    info.B_layout = RKNN_MM_LAYOUT_NATIVE;
    auto window = b.write();
    s.check(s.require(s.api().rknn_B_normal_layout_to_native_layout, "rknn_B_normal_layout_to_native_layout")(
                const_cast<std::byte*>(normal.data()), window.data(), info.K, info.N, &info),
            "rknn_B_normal_layout_to_native_layout");
  }

  // Switches to another shape of the set; bind again afterwards.
  void set_shape(MatmulShape shape) {
    auto& s = state("rknn_matmul_set_dynamic_shape");
    for (std::size_t i = 0; i < shapes_.size(); ++i)
      if (shapes_[i] == shape) {
        rknn_matmul_shape abi{static_cast<std::int32_t>(shape.m), static_cast<std::int32_t>(shape.k),
                              static_cast<std::int32_t>(shape.n)};
        s.check(s.require(s.api().rknn_matmul_set_dynamic_shape, "rknn_matmul_set_dynamic_shape")(s.handle, &abi),
                "rknn_matmul_set_dynamic_shape");
        current_ = i;
        return;
      }
    throw Error(Errc::param_invalid, "rknn_matmul_set_dynamic_shape",
                detail::message("shape (M={}, K={}, N={}) is not one of the {} shapes of this MatMul", shape.m, shape.k,
                                shape.n, shapes_.size()));
  }

  // Quantization parameters of one integer operand (docs/matmul.md for the counts).
  void set_quant(Operand which, std::span<const float> scales, std::span<const std::int32_t> zero_points = {}) {
    auto& s = state("rknn_matmul_set_quant_params");
    rknn_quant_params p;
    std::memset(&p, 0, sizeof p);
    const char* name = attr(which).name;
    std::memcpy(p.name, name, ::strnlen(name, sizeof p.name - 1));
    p.scale = const_cast<float*>(scales.data());
    p.scale_len = static_cast<std::int32_t>(scales.size());
    p.zp = const_cast<std::int32_t*>(zero_points.data());
    p.zp_len = static_cast<std::int32_t>(zero_points.size());
    s.check(s.require(s.api().rknn_matmul_set_quant_params, "rknn_matmul_set_quant_params")(s.handle, &p),
            "rknn_matmul_set_quant_params");
  }

  void set_core_mask(CoreMask mask) {
    auto& s = state("rknn_matmul_set_core_mask");
    s.check(s.require(s.api().rknn_matmul_set_core_mask,
                      "rknn_matmul_set_core_mask")(s.handle, static_cast<rknn_core_mask>(mask)),
            "rknn_matmul_set_core_mask");
  }

  void run() {
    auto& s = state("rknn_matmul_run");
    s.check(s.require(s.api().rknn_matmul_run, "rknn_matmul_run")(s.handle), "rknn_matmul_run");
  }

private:
  MatMul() = default;

  static MatMul create(std::span<const MatmulShape> shapes, Options options, bool dynamic) {
    if (shapes.empty()) throw Error(Errc::param_invalid, "rknn_matmul_create", "no shape given");
    auto runtime = options.runtime ? options.runtime : Runtime::load();
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof info);
    info.M = static_cast<std::int32_t>(shapes[0].m);
    info.K = static_cast<std::int32_t>(shapes[0].k);
    info.N = static_cast<std::int32_t>(shapes[0].n);
    info.type = type;
    info.B_layout = static_cast<std::int16_t>(options.b_layout);
    info.AC_layout = static_cast<std::int16_t>(options.ac_layout);
    info.B_quant_type = static_cast<std::int16_t>(options.b_quant_type);
    info.group_size = options.group_size;
    MatMul mm;
    mm.state_ = detail::new_context_state(runtime, 0);  // the handle is rknn_matmul_create's
    mm.shapes_.assign(shapes.begin(), shapes.end());
    mm.attrs_.resize(shapes.size());
    auto& s = *mm.state_;
    const char* call = dynamic ? "rknn_matmul_create_dynamic_shape" : "rknn_matmul_create";
    if (dynamic) {
      std::vector<rknn_matmul_shape> abi;
      for (const auto& sh : shapes)
        abi.push_back(
            {static_cast<std::int32_t>(sh.m), static_cast<std::int32_t>(sh.k), static_cast<std::int32_t>(sh.n)});
      s.check(s.require(s.api().rknn_matmul_create_dynamic_shape, call)(&s.handle, &info, static_cast<int>(abi.size()),
                                                                        abi.data(), mm.attrs_.data()),
              call);
    } else {
      s.check(s.require(s.api().rknn_matmul_create, call)(&s.handle, &info, mm.attrs_.data()), call);
    }
    if (options.platform) mm.check_geometry(platform_info(*options.platform), options);
    return mm;
  }

  // The runtime's attributes against the constexpr calculator's, for every shape.
  void check_geometry(const PlatformInfo& platform, const Options& options) const {
    for (std::size_t i = 0; i < shapes_.size(); ++i) {
      const MatmulGeometry g = matmul_geometry(platform, type, shapes_[i], options.b_layout, options.ac_layout);
      const std::pair<const MatmulMatrix*, const rknn_matmul_tensor_attr*> pairs[] = {
          {&g.a, &attrs_[i].A}, {&g.b, &attrs_[i].B}, {&g.c, &attrs_[i].C}};
      for (const auto& [want, got] : pairs) {
        bool same = want->n_dims == got->n_dims && want->size == got->size &&
            static_cast<rknn_tensor_type>(want->type) == got->type;
        for (std::uint32_t d = 0; same && d < want->n_dims; ++d) same = want->dims[d] == got->dims[d];
        if (!same)
          throw Error(
              Errc::fail, "rknn_matmul_create",
              detail::message("the runtime's {} for shape (M={}, K={}, N={}) is {} bytes in {} dims, {} computes {} "
                              "bytes in {} dims: the runtime is not for {}",
                              got->name, shapes_[i].m, shapes_[i].k, shapes_[i].n, got->size, got->n_dims,
                              platform.name, want->size, want->n_dims, platform.name));
      }
    }
  }

  void bind_one(const Mem& m, Operand which) {
    auto& s = state("rknn_matmul_set_io_mem");
    const auto& owner = detail::MemFactory::state_of(m);
    if (owner && owner.get() != state_.get() && !owner->unbound)
      throw Error(Errc::param_invalid, "rknn_matmul_set_io_mem", "the memory was made by another context");
    rknn_matmul_tensor_attr a = attr(which);
    s.check(s.require(s.api().rknn_matmul_set_io_mem, "rknn_matmul_set_io_mem")(s.handle, m.native_handle(), &a),
            "rknn_matmul_set_io_mem");
  }

  detail::ContextState& state(std::string_view call) const {
    if (!state_)
      throw Error(Errc::ctx_invalid, std::string(call), "the MatMul is empty (moved from, reset or released)");
    return *state_;
  }

  void take(MatMul&& o) noexcept {
    state_ = std::move(o.state_);
    shapes_ = std::move(o.shapes_);
    attrs_ = std::move(o.attrs_);
    current_ = std::exchange(o.current_, 0);
  }

  void destroy() noexcept {
    if (!state_) return;
    auto& s = *state_;
    for (rknn_tensor_mem* m : s.mems) (void)s.api().rknn_destroy_mem(s.handle, m);
    s.mems.clear();
    s.alive = false;
    // 0: creation failed, there is nothing to destroy.
    if (s.handle != 0 && s.api().rknn_matmul_destroy != nullptr) (void)s.api().rknn_matmul_destroy(s.handle);
    state_.reset();
  }

  std::shared_ptr<detail::ContextState> state_;
  std::vector<MatmulShape> shapes_;
  std::vector<rknn_matmul_io_attr> attrs_;
  std::size_t current_ = 0;
};

}  // namespace rknnxx
