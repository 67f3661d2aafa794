// Dynamic shapes, IoBinding (zero-copy) and typed contexts on the host runtime.
#include "example_image.hpp"
#include "test_models.hpp"

#include <rknnxx/runtime/io_binding.hpp>
#include <rknnxx/runtime/typed_context.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace rknnxx;

namespace {
using DynCnn =
    ModelSpec<InputSpecs<TensorSpec<"data", std::uint8_t, layout::NHWC>>,
              OutputSpecs<TensorSpec<"logits", float, layout::Undefined>, TensorSpec<"features", float, layout::NCHW>>,
              ShapeSet{{{Dims{1, 224, 224, 3}}, {Dims{1, 160, 160, 3}}, {Dims{1, 100, 100, 3}}}}>;
// Wrong on purpose: a name, an element type, a layout and the shape set.
using Wrong =
    ModelSpec<InputSpecs<TensorSpec<"image", std::int16_t, layout::Undefined>>,
              OutputSpecs<TensorSpec<"logits", std::int8_t, layout::Undefined>, TensorSpec<"", float, layout::NCHW>>,
              ShapeSet{{{Dims{1, 224, 224, 3}}, {Dims{1, 3, 160, 160}}}}>;

// What must not compile, as requires-expressions.
template <class C>
concept GroupFive = requires(C c) { c.template set_input_shapes<5>(); };
template <class C>
concept GroupTwo = requires(C c) { c.template set_input_shapes<2>(); };
template <class C>
concept OutsideShape = requires(C c) {
  c.template set_input_shapes<Dims{1, 17, 19, 3}>();
};
template <class C>
concept NchwShape = requires(C c) {
  c.template set_input_shapes<Dims{1, 3, 160, 160}>();
};
template <class C>
concept InsideShape = requires(C c) {
  c.template set_input_shapes<Dims{1, 160, 160, 3}>();
};
template <class C, class V>
concept Writes = requires(C c, V v) { c.set_inputs(v); };
template <class O>
concept Output2 = requires(O o) { o.template get<2>(); };
static_assert(GroupTwo<TypedContext<DynCnn>> && !GroupFive<TypedContext<DynCnn>>);
static_assert(InsideShape<TypedContext<DynCnn>> && !OutsideShape<TypedContext<DynCnn>> &&
              !NchwShape<TypedContext<DynCnn>>);
static_assert(Writes<TypedContext<DynCnn>, TensorView<std::uint8_t, layout::NHWC>>);
static_assert(Writes<TypedContext<DynCnn>, TensorView<const std::uint8_t, layout::NHWC>>);
static_assert(!Writes<TypedContext<DynCnn>, TensorView<float, layout::NCHW>>);  // NCHW float into NHWC uint8
static_assert(!Writes<TypedContext<DynCnn>, TensorView<std::uint8_t, layout::NCHW>>);
static_assert(!Writes<TypedContext<DynCnn>, TensorView<float, layout::NHWC>>);
static_assert(!Output2<TypedOutputs<DynCnn>>);
}  // namespace

TEST_CASE("dynamic shapes: the set from the runtime, switches by group and by dims, explained refusals") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  REQUIRE(ctx.shape_set().has_value());
  const ShapeSet<>& set = *ctx.shape_set();
  CHECK(set.num_shapes() == 3);
  CHECK(set.shape(1, 0) == Dims{1, 160, 160, 3});
  CHECK(set.max_shape_index() == 0);
  const std::uint64_t g0 = ctx.shape_generation();
  auto change = ctx.set_input_shapes(1);
  CHECK(change.group == 1);
  CHECK(change.inputs[0].dims() == Dims{1, 160, 160, 3});
  CHECK(change.inputs[0].w_stride() == 160);
  CHECK(change.outputs[1].dims() == Dims{1, 32, 40, 40});
  CHECK(ctx.current_inputs()[0].dims() == Dims{1, 160, 160, 3});
  CHECK(ctx.current_shape_group() == 1);
  CHECK(ctx.shape_generation() == g0 + 1);
  CHECK(ctx.set_input_shapes({Dims{1, 100, 100, 3}}).group == 2);
  CHECK(ctx.set_input_shapes({Dims{1, 3, 224, 224}}, DimsOrder::nchw).group == 0);
  CHECK(ctx.shape_generation() == g0 + 3);
  // The classic mistake: NCHW dims labelled NHWC.
  try {
    ctx.set_input_shapes({Dims{1, 3, 160, 160}});
    FAIL("NCHW dims accepted as NHWC");
  } catch (const Error& e) {
    const std::string w = e.what();
    CHECK(w.find("not in the model's shape set") != std::string::npos);
    CHECK(w.find("group 1: \"data\" NHWC [1, 160, 160, 3]") != std::string::npos);
    CHECK(w.find("[1, 3, 160, 160] is in NCHW order") != std::string::npos);
    CHECK(w.find("DimsOrder::nchw") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(ctx.set_input_shapes({Dims{1, 17, 19, 3}}), doctest::Contains("the allowed shapes are"), Error);
  CHECK_THROWS_WITH_AS(ctx.set_input_shapes(3), doctest::Contains("outside the model's 3 groups"), Error);
  CHECK_THROWS_WITH_AS(ctx.set_input_shapes({Dims{1, 4}, Dims{1, 5}}), doctest::Contains("2 shapes given"), Error);
  CHECK(ctx.current_shape_group() == 0);  // refusals change nothing
}

TEST_CASE("IoBinding: the dynamic-shape zero-copy flow agrees with the general API on every shape") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc),
               BindAs::type(TensorType::float32, TensorFormat::nchw));
  const std::uint32_t allocated = io.input_memory("data").size();
  for (std::size_t g = 0; g < ctx.shape_set()->num_shapes(); ++g) {
    CAPTURE(g);
    const auto shape = io.set_input_shapes(g);
    const Dims d = shape.inputs[0].dims();
    const auto img = example::make_image(d[1], d[2]);
    const auto view = nhwc_view(img.data(), {1, 3, d[1], d[2]});
    io.write("data", view);
    CHECK(io.bound_input(0).w_stride() >= d[2]);
    io.run();
    std::vector<float> zero_copy;
    {
      auto logits = io.output<float>("logits");
      CHECK(logits.size() == 10);
      zero_copy.assign(logits.begin(), logits.end());
    }
    ctx.set_inputs(view);
    ctx.run();
    auto general = ctx.outputs();
    const auto expected = general[0].as<float>();
    CHECK(std::equal(zero_copy.begin(), zero_copy.end(), expected.begin(), expected.end()));
    // Reading the features through a view converts nothing here but checks the geometry.
    std::vector<float> features(shape.outputs[1].n_elems());
    const Dims f = shape.outputs[1].dims();
    io.read("features", nchw_view(features.data(), {f[0], f[1], f[2], f[3]}));
    const auto gf = general[1].as<float>();
    CHECK(std::equal(features.begin(), features.end(), gf.begin(), gf.end()));
  }
  CHECK(io.input_memory("data").size() == allocated);  // allocated once, at the largest shape
  CHECK_THROWS_WITH_AS((void)io.output<Float16>("logits"), doctest::Contains("bound as FP32"), Error);
}

TEST_CASE("IoBinding: native layouts are unblocked for the caller (NC1HWC2 float16 -> NCHW float)") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  IoBinding io(ctx);
  io.bind_input("data", BindAs::as<std::uint8_t, layout::NHWC>());
  io.bind_output("logits", BindAs::type(TensorType::float32));
  io.bind_output("features", BindAs::native_layout());
  io.set_input_shapes(2);
  CHECK(io.bound_output("features").format() == TensorFormat::nc1hwc2);
  const auto img = example::make_image(100, 100);
  io.write(0, nhwc_view(img.data(), {1, 3, 100, 100}));
  io.run();
  std::vector<float> unblocked(32 * 25 * 25);
  io.read("features", nchw_view(unblocked.data(), {1, 32, 25, 25}));
  ctx.set_inputs(nhwc_view(img.data(), {1, 3, 100, 100}));
  ctx.run();
  auto general = ctx.outputs();
  const auto expected = general["features"].as<float>();
  CHECK(std::equal(unblocked.begin(), unblocked.end(), expected.begin(), expected.end()));
  CHECK_THROWS_WITH_AS((void)io.bound_output(5), doctest::Contains("out of range"), Error);
}

TEST_CASE("misuse: a stale binding after a shape switch, and a binding that went away") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = Context::from_file(path);
  const auto img = example::make_image(160, 160);
  {
    IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
    io.set_input_shapes(1);
    CHECK_FALSE(io.stale());
    ctx.set_input_shapes(2);  // behind the binding's back
    CHECK(io.stale());
    CHECK_THROWS_WITH_AS(io.write("data", nhwc_view(img.data(), {1, 3, 160, 160})), doctest::Contains("stale binding"),
                         Error);
    CHECK_THROWS_WITH_AS(io.run(), doctest::Contains("stale binding"), Error);
    CHECK_THROWS_WITH_AS(ctx.run(), doctest::Contains("stale zero-copy binding"), Error);
    CHECK_THROWS_WITH_AS((void)io.output<float>("logits"), doctest::Contains("stale binding"), Error);
    io.rebind();
    CHECK_FALSE(io.stale());
    const auto small = example::make_image(100, 100);
    io.write("data", nhwc_view(small.data(), {1, 3, 100, 100}));
    io.run();
  }
  CHECK_THROWS_WITH_AS(ctx.run(), doctest::Contains("went away with its IoBinding"), Error);
  IoBinding again(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
  const auto small = example::make_image(100, 100);
  again.write("data", nhwc_view(small.data(), {1, 3, 100, 100}));
  again.run();  // every tensor has live memory again
  IoBinding unbound(ctx);
  CHECK_THROWS_WITH_AS(unbound.write("data", nhwc_view(small.data(), {1, 3, 100, 100})), doctest::Contains("not bound"),
                       Error);
}

TEST_CASE("two inputs: the documented shape set and MaxShape, bound as float UNDEFINED") {
  RKNNXX_NEED_MODEL(path, "two_inputs.hrknn");
  auto ctx = Context::from_file(path);
  REQUIRE(ctx.shape_set().has_value());
  // The example of the SDK's dynamic-shape guide (docs/c-interface.md#dynamic-shapes), which the model has.
  constexpr ShapeSet seed{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}, Dims{1, 80}}}};
  CHECK(*ctx.shape_set() == ShapeSet<>(seed));
  CHECK(ctx.shape_set()->max_shape_index() == 0);
  IoBinding io(ctx, BindAs::type(TensorType::float32), BindAs::type(TensorType::float32));
  for (std::size_t g : {1u, 0u}) {
    const auto shape = io.set_input_shapes(g);
    const std::uint32_t la = shape.inputs[0].dims()[1], lb = shape.inputs[1].dims()[1];
    std::vector<float> a(la, 0.5f), b(lb, -0.25f);
    io.write("a", flat_view(a.data(), Dims{1, la}));
    io.write("b", flat_view(b.data(), Dims{1, lb}));
    io.run();
    std::vector<float> y(4);
    io.read("y", flat_view(y.data(), Dims{1, 4}));
    ctx.set_inputs(flat_view(a.data(), Dims{1, la}), flat_view(b.data(), Dims{1, lb}));
    ctx.run();
    auto general = ctx.outputs();
    const auto expected = general["y"].as<float>();
    CHECK(std::equal(y.begin(), y.end(), expected.begin(), expected.end()));
  }
}

TEST_CASE("TypedContext: the description is checked at load, and typed calls run") {
  RKNNXX_NEED_MODEL(path, "dyncnn.hrknn");
  auto ctx = TypedContext<DynCnn>::from_file(path);
  CHECK(TypedContext<DynCnn>::differences(ctx.context()).empty());
  ctx.set_input_shapes<Dims{1, 160, 160, 3}>();
  CHECK(ctx.context().current_shape_group() == 1);
  ctx.set_input_shapes<2>();
  const auto img = example::make_image(100, 100);
  ctx.set_inputs(nhwc_view(img.data(), {1, 3, 100, 100}));
  ctx.run();
  auto out = ctx.outputs();
  CHECK(out.get<0>().size() == 10);
  CHECK(out.view<1>().dims() == Dims{1, 32, 25, 25});
  CHECK(out.untyped().size() == 2);
  try {
    (void)TypedContext<Wrong>(Context::from_file(path));
    FAIL("a wrong description was accepted");
  } catch (const Error& e) {
    const std::string w = e.what();
    CHECK(w.find("5 differences") != std::string::npos);
    CHECK(w.find("described as \"image\", the model names it \"data\"") != std::string::npos);
    CHECK(w.find("INT16") != std::string::npos);
    CHECK(w.find("described as UNDEFINED, the model's tensor is 4-D") != std::string::npos);
    CHECK(w.find("cannot be read as INT8") != std::string::npos);
    CHECK(w.find("shape set: described as") != std::string::npos);
  }
}
