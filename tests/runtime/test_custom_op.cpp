// rknnxx::CustomOp (docs/custom-operators.md): custom operators from C++ callables on the host runtime,
// with the model of tests/host_c/make_custom_op_model.py (x -> rknnxx.test.ScaleShift -> y -> Relu -> z,
// y = alpha * x + beta[c]) converted by the build ($RKNNXX_CUSTOM_OP_MODEL).
#include <rknnxx/rknn.hpp>
#include <rknnxx/runtime/custom_op.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

using namespace rknnxx;

namespace {

constexpr std::uint32_t channels = 3, height = 4, width = 4, count = channels * height * width;

Context open_model() {
  const char* path = std::getenv("RKNNXX_CUSTOM_OP_MODEL");
  REQUIRE_MESSAGE(path != nullptr, "RKNNXX_CUSTOM_OP_MODEL names the converted model (tests/runtime/meson.build)");
  return Context::from_file(path, {.runtime = Runtime::load(RuntimeChoice::host())});
}

float input_value(std::uint32_t i) { return static_cast<float>(i % 7) * 0.25f - 0.6f; }

// Sets the input, runs, and returns z.
std::vector<float> run(Context& ctx) {
  std::vector<float> x(count);
  for (std::uint32_t i = 0; i < count; ++i) x[i] = input_value(i);
  ctx.set_inputs(nchw_view(x.data(), {1, channels, height, width}));
  ctx.run();
  auto out = ctx.outputs();
  const auto z = out[0].as<float>();
  return {z.begin(), z.end()};
}

// z = relu(alpha * x + beta[c]) within float16 rounding (the model is converted with float_dtype float16).
void check_result(const std::vector<float>& z, float alpha, const std::vector<float>& beta) {
  REQUIRE(z.size() == count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const float y = alpha * input_value(i) + beta[i / (height * width)];
    CHECK(z[i] == doctest::Approx(std::max(y, 0.0f)).epsilon(2e-3));
  }
}

// y = alpha * x + beta[c] from the node's attributes.
void scale_shift(std::span<const CustomTensor> in, std::span<CustomTensor> out, const CustomOpAttrs& attrs) {
  const float alpha = attrs.value<float>("alpha").value();
  const std::vector<float> beta = attrs.values<float>("beta");
  const auto x = in[0].data<float>();
  auto y = out[0].data<float>();
  const std::size_t plane = in[0].dims()[2] * in[0].dims()[3];
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = alpha * x[i] + beta.at(i / plane % beta.size());
}

// A class with compute(): state kept between runs, the attributes not used.
struct Doubler {
  int* calls;
  void compute(std::span<const CustomTensor> in, std::span<CustomTensor> out) {
    ++*calls;
    const auto x = in[0].data<float>();
    auto y = out[0].data<float>();
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = 2 * x[i];
  }
};

}  // namespace

TEST_CASE("a lambda custom operator sees the tensors and the node's attributes") {
  Context ctx = open_model();
  std::string seen_names;
  ctx.register_custom_op(CustomOp{
      "ScaleShift", [&](std::span<const CustomTensor> in, std::span<CustomTensor> out, const CustomOpAttrs& attrs) {
        REQUIRE(in.size() == 1);
        REQUIRE(out.size() == 1);
        seen_names = std::string(in[0].name()) + "->" + std::string(out[0].name());
        CHECK(in[0].type() == TensorType::float32);
        CHECK(std::vector<std::uint32_t>(in[0].dims().begin(), in[0].dims().end()) ==
              std::vector<std::uint32_t>{1, channels, height, width});
        CHECK(in[0].elements() == count);
        CHECK(out[0].bytes() == count * sizeof(float));
        CHECK(attrs.value<std::int64_t>("axis") == 1);
        CHECK(attrs.string("mode") == "affine");
        CHECK(attrs.values<float>("table") == std::vector<float>{3, 4});
        CHECK_FALSE(attrs.value<float>("no_such_attribute").has_value());
        CHECK_THROWS_WITH_AS((void)attrs.values<std::int64_t>("alpha"), doctest::Contains("holds FP32, not INT64"),
                             Error);
        scale_shift(in, out, attrs);
      }});
  check_result(run(ctx), 2.0f, {1.0f, -2.0f, 0.5f});
  CHECK(seen_names == "x->y");
}

TEST_CASE("an object with compute() keeps its state over runs") {
  Context ctx = open_model();
  int calls = 0;
  ctx.register_custom_op(CustomOp{"ScaleShift", Doubler{&calls}});
  check_result(run(ctx), 2.0f, {0, 0, 0});
  check_result(run(ctx), 2.0f, {0, 0, 0});
  CHECK(calls == 2);
}

TEST_CASE("an exception of the callable fails the run with its message") {
  Context ctx = open_model();
  ctx.register_custom_op(CustomOp{"ScaleShift", [](std::span<const CustomTensor>, std::span<CustomTensor>) {
                                    throw std::runtime_error("the op refuses");
                                  }});
  CHECK_THROWS_WITH_AS((void)run(ctx), doctest::Contains("custom operator ScaleShift: the op refuses"), Error);
  // Reading a tensor as the wrong type is such an exception.
  Context other = open_model();
  other.register_custom_op(CustomOp{"ScaleShift", [](std::span<const CustomTensor> in, std::span<CustomTensor>) {
                                      (void)in[0].data<std::int8_t>();
                                    }});
  CHECK_THROWS_WITH_AS((void)run(other), doctest::Contains("tensor 'x' holds FP32, not INT8"), Error);
}

TEST_CASE("custom operator errors: unregistered, registered twice, bad op types") {
  Context ctx = open_model();
  try {
    (void)run(ctx);
    FAIL("an unregistered custom operator ran");
  } catch (const Error& e) {
    CHECK(e.errc() == Errc::model_invalid);
    CHECK(std::string(e.what()).find("ScaleShift") != std::string::npos);
  }
  ctx.register_custom_op(CustomOp{"ScaleShift", scale_shift});
  CHECK_THROWS_WITH_AS(ctx.register_custom_op(CustomOp{"ScaleShift", scale_shift}),
                       doctest::Contains("already registered"), Error);
  check_result(run(ctx), 2.0f, {1.0f, -2.0f, 0.5f});  // the first registration stands
  CHECK_THROWS_WITH_AS(CustomOp("", scale_shift), doctest::Contains("the op type is empty"), Error);
  CHECK_THROWS_WITH_AS(CustomOp(std::string(300, 'a'), scale_shift), doctest::Contains("under 256 bytes"), Error);
  CHECK_THROWS_WITH_AS(ctx.register_custom_ops({}), doctest::Contains("no custom operators given"), Error);
}

TEST_CASE("registrations free their trampolines with their context") {
  // More contexts over time than there are slots: each one's op is released when it goes.
  for (std::size_t i = 0; i < detail::custom_op_slots + 2; ++i) {
    Context ctx = open_model();
    ctx.register_custom_op(CustomOp{"ScaleShift", scale_shift});
  }
  Context ctx = open_model();
  ctx.register_custom_op(CustomOp{"ScaleShift", scale_shift});
  check_result(run(ctx), 2.0f, {1.0f, -2.0f, 0.5f});
}
