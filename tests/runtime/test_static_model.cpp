// A static model (squeezenet1_1, one input shape) through the runtime layer: no shape set,
// set_input_shapes refused, dup() giving an independent context with the same results, nothing
// on stderr, and errors that carry the runtime's explanation.
#include "example_image.hpp"
#include "scratch_dir.hpp"
#include "test_models.hpp"

#include <rknnxx/runtime/context.hpp>
#include <rknnxx/tensor/view.hpp>

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

using namespace rknnxx;

namespace {
// What `body` writes to stderr (fd 2, where the runtime logs), with the runtime's default log level.
template <class F> std::string stderr_of(F&& body) {
  std::fflush(stderr);
  const std::string path = (test::scratch_dir() / "stderr.txt").string();
  const int file = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  REQUIRE(file >= 0);
  const int saved = ::dup(2);
  ::dup2(file, 2);
  ::close(file);
  body();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

std::vector<float> logits(Context& ctx, const std::vector<std::uint8_t>& img) {
  ctx.set_inputs(nhwc_view(img.data(), {.n = 1, .c = 3, .h = 224, .w = 224}));
  ctx.run();
  auto out = ctx.outputs();
  const auto v = out["logits"].as<float>();
  return {v.begin(), v.end()};
}
}  // namespace

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

TEST_CASE("static model: opening, running and reading outputs prints nothing (no dynamic-shape probe)") {
  RKNNXX_NEED_MODEL(path, "squeezenet.hrknn");
  const auto img = example::make_image(224, 224);
  std::size_t values = 0;
  const std::string printed = stderr_of([&] {
    auto ctx = Context::from_file(path);
    values = logits(ctx, img).size();
  });
  CHECK(values == 1000);
  CHECK_MESSAGE(printed.empty(), printed);
  // Asking about shapes still gets the answer (the runtime may log that the model is static).
  auto ctx = Context::from_file(path);
  (void)stderr_of([&] { CHECK_FALSE(ctx.is_dynamic()); });
}

TEST_CASE("errors carry the runtime's own explanation (the rknnxx_host_last_error extension)") {
  const auto onnx = test::scratch_dir() / "not_converted.onnx";
  std::ofstream(onnx, std::ios::binary) << std::string("\x08\x07\x12\x07pytorch", 11);
  try {
    (void)Context::from_file(onnx.string());
    FAIL("an ONNX file opened as a model");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(e.errc() == Errc::model_invalid);
    CHECK_MESSAGE(what.find("the runtime says: ") != std::string::npos, what);
    CHECK_MESSAGE(what.find("looks like an ONNX model; convert it") != std::string::npos, what);
    CHECK_MESSAGE(what.find("rknn_init: model file") == 0, what);
  }

  RKNNXX_NEED_MODEL(path, "squeezenet.hrknn");
  auto ctx = Context::from_file(path);
  // A failure whose last logged line is about another function does not borrow that line.
  CHECK(ctx.runtime().last_error("rknn_run").empty());
  CHECK_FALSE(ctx.runtime().last_error("rknn_init").empty());  // the ONNX file's, on this thread
  try {
    (void)ctx.perf_detail();  // without InitFlag::collect_perf
    FAIL("RKNN_QUERY_PERF_DETAIL answered without RKNN_FLAG_COLLECT_PERF_MASK");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("the runtime says: RKNN_QUERY_PERF_DETAIL needs RKNN_FLAG_COLLECT_PERF_MASK") !=
                      std::string::npos,
                  what);
  }
}
