// Conv on oneDNN (host/engine/ops/conv_onednn.cpp) against the engine's own kernels, RKNNXX_ENGINE_CONV
// switching between them, on every shape class of the rule, with batch 2, fused activations and 1 to 7
// threads (as many as $RKNNXX_HOST_THREADS allows: meson runs the suite again with 7, so that a Conv cut into
// bands of rows has bands with and without padding, and bands that would read padding only); and a Conv on
// oneDNN starts no thread beside the engine's pool. Without oneDNN in the build
// only the builtin path exists and the comparisons are skipped.

#include "engine_test_model.hpp"
#include "scoped_env.hpp"
#include "square_conv.hpp"
#include "float16.hpp"
#include "ops/conv_onednn.hpp"

#include <filesystem>
#include <optional>
#include <span>
#include <string>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// RKNNXX_ENGINE_CONV while it lives.
struct ConvMode : ScopedEnv {
  explicit ConvMode(const char* mode) : ScopedEnv("RKNNXX_ENGINE_CONV", mode) {}
};

const SquareConv shapes[] = {
    {"1x1", 1, 32, 9, 10, 48, 1, 1, 1, 1, 0, 0},
    {"1x1 strided", 1, 16, 9, 9, 24, 1, 1, 2, 1, 0, 0},
    {"1x1 no bias", 1, 20, 6, 7, 33, 1, 1, 1, 1, 0, 0, "", false},
    {"3x3 padded", 1, 8, 11, 12, 20, 1, 3, 1, 1, 1, 1},
    {"3x3 strided, asymmetric pads", 1, 6, 13, 12, 17, 1, 3, 2, 1, 0, 1},
    {"3x3 dilated", 1, 5, 12, 12, 16, 1, 3, 1, 2, 2, 2},
    {"7x7/2 on 3 channels", 1, 3, 30, 30, 16, 1, 7, 2, 1, 3, 3},
    {"depthwise 3x3 small plane", 1, 32, 10, 10, 32, 32, 3, 1, 1, 1, 1},
    {"depthwise 3x3 large plane", 1, 16, 40, 40, 16, 16, 3, 1, 1, 1, 1},
    {"depthwise 3x3/2, 2 outputs per channel", 1, 8, 11, 11, 16, 8, 3, 2, 1, 1, 1},
    {"grouped 3x3", 1, 32, 9, 9, 48, 4, 3, 1, 1, 1, 1},
    {"batch 2 3x3", 2, 16, 8, 9, 32, 1, 3, 1, 1, 1, 1},
    {"batch 2 1x1", 2, 24, 7, 7, 40, 1, 1, 1, 1, 0, 0},
    {"batch 2 depthwise", 2, 24, 9, 9, 24, 24, 3, 1, 1, 1, 1},
    {"batch 2 grouped", 2, 12, 7, 7, 18, 3, 3, 1, 1, 1, 1},
    {"3x3 + Relu", 1, 16, 10, 10, 32, 1, 3, 1, 1, 1, 1, "Relu"},
    {"1x1 + Clip", 1, 32, 8, 8, 24, 1, 1, 1, 1, 0, 0, "Clip"},
    {"depthwise + Clip", 1, 32, 8, 8, 32, 32, 3, 1, 1, 1, 1, "Clip"},
    {"grouped + Relu, batch 2", 2, 16, 6, 6, 32, 2, 3, 2, 1, 1, 1, "Relu"},
    {"3x3 with pads beyond its reach", 1, 8, 3, 8, 16, 1, 3, 1, 1, 3, 3},
    {"5x5/3 dilated, uneven pads", 1, 6, 10, 9, 16, 1, 5, 3, 2, 4, 2},
    {"one output row", 1, 16, 3, 7, 32, 1, 3, 1, 1, 0, 0},
    {"depthwise 5x5/2, batch 2", 2, 16, 17, 15, 16, 16, 5, 2, 1, 2, 2, "Relu"},
};

// The Conv with random weights and bias, the same in every run.
onnx::ModelProto model(const SquareConv& s) {
  return square_conv_model(s, random_tensor({s.m, s.c / s.group, s.k, s.k}, 2), random_tensor({s.m}, 3));
}

// The largest difference relative to the largest value of `want`.
double relative_difference(const Tensor& got, const Tensor& want) {
  REQUIRE(shape_string(got.shape()) == shape_string(want.shape()));
  const auto g = got.values<float>();
  const auto w = want.values<float>();
  double diff = 0, top = 1e-30;
  for (std::size_t i = 0; i < g.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(g[i] - w[i])));
    top = std::max(top, static_cast<double>(std::fabs(w[i])));
  }
  return diff / top;
}

// The Conv on x (random; rounded to float16 when `half_input`), with float16 activations when `half`.
Tensor run_with(const char* mode, const SquareConv& s, std::size_t threads, bool half = false,
                bool half_input = false) {
  ConvMode conv_mode(mode);
  Tensor x = random_tensor({s.n, s.c, s.h, s.w}, 1);
  if (half || half_input) {
    for (float& v : std::span(x.data<float>(), static_cast<std::size_t>(x.elements()))) v = round_to_half(v);
  }
  Session session(model(s), {.threads = threads, .float16_activations = half});
  CHECK(session.graph().nodes().size() == 1);  // the activation is fused into the Conv
  return session.run(std::vector{x})[0];
}

std::size_t process_threads() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++count;
  return count;
}

}  // namespace

TEST_SUITE("engine.conv_onednn") {
  TEST_CASE("Conv on oneDNN matches the engine's kernels on every shape class") {
    if (!onednn_conv_built()) {
      MESSAGE("built without oneDNN: only the engine's kernels run Conv");
      return;
    }
    for (const SquareConv& s : shapes) {
      for (const std::size_t threads : test_thread_counts({1, 2, 3, 7})) {
        const Tensor want = run_with("builtin", s, threads);
        for (const char* mode : {"onednn-nchw", "onednn-blocked", "auto"}) {
          CAPTURE(s.name);
          CAPTURE(mode);
          CAPTURE(threads);
          CHECK(relative_difference(run_with(mode, s, threads), want) <= 1e-5);
        }
      }
    }
  }

  TEST_CASE("with float16 activations every output value is rounded, on any slicing") {
    // The result must be the float32 one rounded, every band and block of channels included.
    if (!onednn_conv_built()) return;
    for (const SquareConv& s : shapes) {
      for (const std::size_t threads : test_thread_counts({1, 2, 7})) {
        for (const char* mode : {"onednn-nchw", "onednn-blocked"}) {
          CAPTURE(s.name);
          CAPTURE(mode);
          CAPTURE(threads);
          const Tensor half = run_with(mode, s, threads, true);
          const Tensor exact = run_with(mode, s, threads, false, true);  // the same input, float32 activations
          const auto got = half.values<float>();
          const auto want = exact.values<float>();
          REQUIRE(got.size() == want.size());
          std::size_t unrounded = 0;
          for (std::size_t i = 0; i < got.size(); ++i) unrounded += got[i] != round_to_half(want[i]) ? 1 : 0;
          CHECK(unrounded == 0);
        }
      }
    }
  }

  TEST_CASE("RKNNXX_ENGINE_CONV names a known mode") {
    if (!onednn_conv_built()) return;
    ConvMode mode("fastest");
    const SquareConv& s = shapes[0];
    Session session(model(s));  // planned by the first run
    CHECK_THROWS_WITH_AS(session.run(std::vector{random_tensor({s.n, s.c, s.h, s.w}, 1)}),
                         doctest::Contains("RKNNXX_ENGINE_CONV is 'fastest'"), EngineError);
  }

  TEST_CASE("a Conv on oneDNN starts no thread beside the engine's pool") {
    if (!onednn_conv_built()) return;
    // The pool's workers start on first use: a builtin run first, then the count may not grow.
    const SquareConv& s = shapes[11];  // batch 2 3x3
    run_with("builtin", s, default_thread_count());
    const std::size_t before = process_threads();
    for (const char* mode : {"onednn-nchw", "onednn-blocked", "auto"}) {
      run_with(mode, s, default_thread_count());
      run_with(mode, shapes[13], default_thread_count());
    }
    CHECK(process_threads() == before);
    // Whatever ran before in this process: the calling thread and the pool's workers, no OpenMP team.
    CHECK(process_threads() <= default_thread_count());
  }
}
