// A static model (squeezenet1_1, one input shape) through the runtime layer: no shape set,
// set_input_shapes refused, and dup() giving an independent context with the same results.
#include "example_image.hpp"
#include "test_models.hpp"

#include <rknnxx/runtime/context.hpp>
#include <rknnxx/tensor/view.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <vector>

using namespace rknnxx;

namespace {
std::vector<float> logits(Context& ctx, const std::vector<std::uint8_t>& img) {
  ctx.set_inputs(nhwc_view(img.data(), {.n = 1, .c = 3, .h = 224, .w = 224}));
  ctx.run();
  auto out = ctx.outputs();
  const auto v = out["logits"].as<float>();
  return {v.begin(), v.end()};
}
} // namespace

TEST_CASE("static model: no shape set, and set_input_shapes is refused with the reason") {
  RKNNXX_NEED_MODEL(path, "squeezenet.hrknn");
  auto ctx = Context::from_file(path);
  CHECK_FALSE(ctx.is_dynamic());
  CHECK_FALSE(ctx.shape_set().has_value());
  REQUIRE(ctx.current_inputs().size() == 1);
  CHECK(ctx.current_inputs()[0].dims() == Dims{1, 224, 224, 3});
  CHECK(ctx.custom_string() == "rknnxx runtime tests: a static model");
  CHECK_THROWS_WITH_AS(ctx.set_input_shapes(0), doctest::Contains("the model has static shapes"), Error);
  CHECK_THROWS_WITH_AS(ctx.set_input_shapes({Dims{1, 224, 224, 3}}), doctest::Contains("static shapes"), Error);
}

TEST_CASE("static model: dup() shares the model, runs on its own and outlives the original") {
  RKNNXX_NEED_MODEL(path, "squeezenet.hrknn");
  const auto img = example::make_image(224, 224);
  std::optional<Context> original(Context::from_file(path));
  auto copy = original->dup();
  CHECK(copy.native_handle() != original->native_handle());
  CHECK(copy.current_inputs()[0].dims() == original->current_inputs()[0].dims());
  const auto want = logits(*original, img);
  REQUIRE(want.size() == 1000);
  CHECK(logits(copy, img) == want);
  // A different input gives different logits: the comparison above is not vacuous.
  auto other = img;
  for (auto& b : other) b = static_cast<std::uint8_t>(255 - b);
  CHECK(logits(copy, other) != want);
  original.reset();
  CHECK(logits(copy, img) == want);
}
