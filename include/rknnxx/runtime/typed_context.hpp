#pragma once
// Compile-time checking in application code: describe the model once (inputs and outputs with
// element type, layout and shape set) and get a context typed by that description.
//
//   using Dyn = ModelSpec<InputSpecs<TensorSpec<"data", std::uint8_t, layout::NHWC>>,
//                         OutputSpecs<TensorSpec<"logits", float, layout::Undefined>>,
//                         ShapeSet{{{Dims{1, 224, 224, 3}}, {Dims{1, 160, 160, 3}}}}>;
//   auto ctx = TypedContext<Dyn>::from_file(path);   // checked against the real model: an Error lists every difference
//   ctx.set_input_shapes<1>();                       // group 1; set_input_shapes<5>() does not compile
//   ctx.set_input_shapes<Dims{1, 160, 160, 3}>();    // a shape outside the set does not compile
//   ctx.set_inputs(nhwc_view(rgb, {1, 3, 160, 160}));  // an NCHW float view here does not compile
//   ctx.run();
//   auto out = ctx.outputs(); std::span<const float> logits = out.get<0>();
//
// Shapes are written in the runtime's order (NHWC for 4-D inputs), as RKNN_QUERY_INPUT_DYNAMIC_RANGE
// reports them; ShapeSet::transform(nchw_to_nhwc) converts a toolkit dynamic_input.

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/input_conversion.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/core/shape_set.hpp>
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/tensor/view.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace rknnxx {

// A string usable as a template argument (tensor names).
template <std::size_t N> struct FixedString {
  char value[N]{};
  constexpr FixedString(const char (&s)[N]) noexcept { std::copy(s, s + N, value); }  // NOLINT: from literals
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {value, N - 1}; }
};

// One tensor of the description. An empty name matches any name.
template <FixedString Name, TensorElement T, Layout L> struct TensorSpec {
  static constexpr std::string_view name = Name.view();
  using element_type = T;
  using layout_type = L;
};

template <class... T> struct InputSpecs {};
template <class... T> struct OutputSpecs {};
struct StaticShapes {
  friend constexpr bool operator==(StaticShapes, StaticShapes) noexcept = default;
};
inline constexpr StaticShapes static_shapes{};

template <class In, class Out, auto Shapes = static_shapes> struct ModelSpec;
template <class... I, class... O, auto Shapes> struct ModelSpec<InputSpecs<I...>, OutputSpecs<O...>, Shapes> {
  static_assert(sizeof...(I) >= 1 && sizeof...(O) >= 1, "a model has at least one input and one output");
  using inputs = std::tuple<I...>;
  using outputs = std::tuple<O...>;
  static constexpr std::size_t num_inputs = sizeof...(I);
  static constexpr std::size_t num_outputs = sizeof...(O);
  static constexpr bool dynamic = !std::is_same_v<std::remove_cv_t<decltype(Shapes)>, StaticShapes>;
  static constexpr auto shapes = Shapes;
  static constexpr std::size_t num_shapes = [] {
    if constexpr (dynamic) return decltype(Shapes)::num_shapes();
    else return std::size_t{0};
  }();
  static_assert(!dynamic || decltype(Shapes)::num_inputs() == sizeof...(I),
                "the shape set must have one shape per input in every group");
};

namespace detail {

template <class Spec, class Tensor>
void check_tensor(std::vector<std::string>& diffs, const TensorInfo& real, bool input) {
  using T = typename Tensor::element_type;
  using L = typename Tensor::layout_type;
  const auto what = detail::message("{} {}", input ? "input" : "output", real.index());
  if (!Tensor::name.empty() && Tensor::name != real.name())
    diffs.push_back(
        detail::message("{}: described as \"{}\", the model names it \"{}\"", what, Tensor::name, real.name()));
  const TensorType given = tensor_type_of<T>;
  if (input ? !input_accepts(real.type(), given) : (given != TensorType::float32 && given != real.type()))
    diffs.push_back(detail::message("{} \"{}\": described as {}, the model's {} tensor {} {}", what, real.name(),
                                    name_of(given), name_of(real.type()), input ? "does not take" : "cannot be read as",
                                    name_of(given)));
  const bool four = real.dims().rank() == 4;
  const bool layout_ok = four ? (L::format == TensorFormat::nhwc || L::format == TensorFormat::nchw)
                              : L::format == TensorFormat::undefined;
  if (!layout_ok)
    diffs.push_back(detail::message("{} \"{}\": described as {}, the model's tensor is {}-D ({} {})", what, real.name(),
                                    L::name, real.dims().rank(), name_of(real.format()), dims_text(real.dims())));
}
}  // namespace detail

// The outputs of a typed context: get<O>() is a span of the described element type.
template <class Spec> class TypedOutputs {
public:
  template <std::size_t O>
    requires(O < Spec::num_outputs)
  [[nodiscard]] auto get() const {
    using T = typename std::tuple_element_t<O, typename Spec::outputs>::element_type;
    return outputs_[O].template as<T>();
  }
  template <std::size_t O>
    requires(O < Spec::num_outputs)
  [[nodiscard]] auto view() const {
    using S = std::tuple_element_t<O, typename Spec::outputs>;
    return outputs_[O].template view<typename S::element_type, typename S::layout_type>();
  }
  [[nodiscard]] const Outputs& untyped() const noexcept { return outputs_; }

private:
  template <class> friend class TypedContext;
  explicit TypedOutputs(Outputs o) : outputs_(std::move(o)) {}
  Outputs outputs_;
};

template <class Spec> class TypedContext {
public:
  [[nodiscard]] static TypedContext from_file(const std::string& path, ContextOptions options = {}) {
    return TypedContext(Context::from_file(path, std::move(options)));
  }
  [[nodiscard]] static TypedContext from_buffer(std::span<const std::byte> model, ContextOptions options = {}) {
    return TypedContext(Context::from_buffer(model, std::move(options)));
  }
  // Adopts a context, checking it against the description.
  explicit TypedContext(Context ctx) : ctx_(std::move(ctx)) {
    const auto diffs = differences(ctx_);
    if (!diffs.empty()) {
      std::string list;
      for (const auto& d : diffs) list += "\n  - " + d;
      throw Error(Errc::model_invalid, "rknnxx::TypedContext",
                  detail::message("the model does not match its description ({} difference{}):{}", diffs.size(),
                                  diffs.size() == 1 ? "" : "s", list));
    }
  }

  // Every way the real model differs from the description (empty: it matches).
  [[nodiscard]] static std::vector<std::string> differences(const Context& ctx) {
    std::vector<std::string> diffs;
    if (ctx.num_inputs() != Spec::num_inputs)
      diffs.push_back(
          detail::message("described with {} inputs, the model has {}", Spec::num_inputs, ctx.num_inputs()));
    if (ctx.num_outputs() != Spec::num_outputs)
      diffs.push_back(
          detail::message("described with {} outputs, the model has {}", Spec::num_outputs, ctx.num_outputs()));
    if (!diffs.empty()) return diffs;
    const auto in = ctx.input_infos();
    const auto out = ctx.output_infos();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (detail::check_tensor<Spec, std::tuple_element_t<I, typename Spec::inputs>>(diffs, in[I], true), ...);
    }(std::make_index_sequence<Spec::num_inputs>{});
    [&]<std::size_t... O>(std::index_sequence<O...>) {
      (detail::check_tensor<Spec, std::tuple_element_t<O, typename Spec::outputs>>(diffs, out[O], false), ...);
    }(std::make_index_sequence<Spec::num_outputs>{});
    if constexpr (Spec::dynamic) {
      if (!ctx.shape_set()) {
        diffs.push_back("described with a shape set, the model has static shapes");
      } else if (!(ShapeSet<>(Spec::shapes) == *ctx.shape_set())) {
        const auto text = [](const auto& set) {
          std::string s;
          for (std::size_t g = 0; g < set.num_shapes(); ++g)
            for (std::size_t i = 0; i < set.num_inputs(); ++i)
              s += detail::message("{}{}", s.empty() ? "" : (i ? ", " : "; "), dims_text(set.shape(g, i)));
          return s;
        };
        diffs.push_back(detail::message("shape set: described as {}, the model has {}", text(Spec::shapes),
                                        text(*ctx.shape_set())));
      }
    } else if (ctx.shape_set()) {
      diffs.push_back(detail::message("described with static shapes, the model has a set of {} shapes",
                                      ctx.shape_set()->num_shapes()));
    }
    return diffs;
  }

  [[nodiscard]] Context& context() noexcept { return ctx_; }
  [[nodiscard]] const Context& context() const noexcept { return ctx_; }

  // A group of the shape set, checked at compile time.
  template <std::size_t G>
    requires(Spec::dynamic && G < Spec::num_shapes)
  ShapeChange set_input_shapes() {
    return ctx_.set_input_shapes(G);
  }
  // Shapes (one per input, runtime order), which must be a group of the set at compile time.
  template <Dims... D>
    requires(Spec::dynamic && sizeof...(D) == Spec::num_inputs &&
             Spec::shapes.contains(std::array<Dims, sizeof...(D)>{D...}))
  ShapeChange set_input_shapes() {
    return ctx_.set_input_shapes(*Spec::shapes.find(std::array<Dims, sizeof...(D)>{D...}));
  }

  // Every input, each view of exactly the described element type and layout.
  template <class... T, class... L>
    requires(sizeof...(T) == Spec::num_inputs)
  void set_inputs(const TensorView<T, L>&... views)
    requires([]<std::size_t... I>(std::index_sequence<I...>) {
      return ((std::is_same_v<std::remove_const_t<T>,
                              typename std::tuple_element_t<I, typename Spec::inputs>::element_type> &&
               std::is_same_v<L, typename std::tuple_element_t<I, typename Spec::inputs>::layout_type>)&&...);
    }(std::make_index_sequence<sizeof...(T)>{}))
  {
    ctx_.set_inputs(views...);
  }

  void run() { ctx_.run(); }

  [[nodiscard]] TypedOutputs<Spec> outputs() {
    std::array<OutputType, Spec::num_outputs> types{};
    [&]<std::size_t... O>(std::index_sequence<O...>) {
      ((types[O] = std::is_same_v<typename std::tuple_element_t<O, typename Spec::outputs>::element_type, float>
            ? OutputType::float32
            : OutputType::native),
       ...);
    }(std::make_index_sequence<Spec::num_outputs>{});
    return TypedOutputs<Spec>(ctx_.outputs(types));
  }

private:
  Context ctx_;
};

}  // namespace rknnxx
