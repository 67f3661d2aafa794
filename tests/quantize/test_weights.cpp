// Weight quantization per layer, per channel and per group.
#include "weights.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace rknnxx::host::quantize;

namespace {

// A conv weight [4, 8, 3, 3] whose output channels span very different ranges (1e-3 .. 10).
std::vector<float> conv_weight(std::vector<std::int64_t>& shape) {
  shape = {4, 8, 3, 3};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float channel_range[4] = {0.001f, 0.1f, 1.0f, 10.0f};
  std::vector<float> w(4 * 8 * 9);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = channel_range[i / 72] * u(rng);
  return w;
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b, std::size_t begin, std::size_t end) {
  double num = 0, den = 0;
  for (std::size_t i = begin; i < end; ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

} // namespace

TEST_CASE("per channel beats per layer on channels of different ranges") {
  std::vector<std::int64_t> shape;
  const std::vector<float> original = conv_weight(shape);
  std::vector<float> layer = original;
  std::vector<float> channel = original;
  const auto by_layer = quantize_weights(layer, shape, Method::layer(), 0);
  const auto by_channel = quantize_weights(channel, shape, Method::channel(), 0);
  CHECK(by_layer.params.size() == 1);
  CHECK(by_channel.params.size() == 4);
  // Every channel is within half a step of its own scale.
  for (std::size_t i = 0; i < original.size(); ++i)
    CHECK(std::abs(channel[i] - original[i]) <= by_channel.params[i / 72].scale * 0.5001f);
  // The small channel vanishes per layer (its values are below half a step) but not per channel.
  CHECK(relative_error(layer, original, 0, 72) > 0.9);
  CHECK(relative_error(channel, original, 0, 72) < 0.01);
  CHECK(relative_error(channel, original, 0, original.size()) <= relative_error(layer, original, 0, original.size()));
  // Values already on their grid stay put (quantization is idempotent).
  std::vector<float> again = channel;
  (void)quantize_weights(again, shape, Method::channel(), 0);
  CHECK(again == channel);
}

TEST_CASE("per group splits the input channels of each output channel") {
  std::vector<std::int64_t> shape{2, 64};  // [out, in]: groups of 32 input channels
  std::vector<float> w(128);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = (i % 64 < 32 ? 0.01f : 5.0f) * static_cast<float>(i % 7 + 1);
  const std::vector<float> original = w;
  const auto q = quantize_weights(w, shape, Method::group(32), 0, 1);
  CHECK(q.groups == 2);
  REQUIRE(q.params.size() == 4);
  CHECK(q.params[0].scale < q.params[1].scale / 100);  // the small group keeps its own fine step
  CHECK(relative_error(w, original, 0, 32) < 0.01);
  // An axis outside the shape is refused naming the shape.
  std::vector<float> v(4);
  const std::vector<std::int64_t> small{4};
  CHECK_THROWS_WITH_AS(quantize_weights(v, small, Method::channel(), 2), doctest::Contains("[4]"),
                       std::invalid_argument);
}

TEST_CASE("a MatMul weight [K, N] is quantized per column (axis 1)") {
  std::vector<std::int64_t> shape{3, 2};
  std::vector<float> w{1.0f, 100.0f, -1.0f, -100.0f, 0.5f, 50.0f};
  const auto q = quantize_weights(w, shape, Method::channel(), 1);
  REQUIRE(q.params.size() == 2);
  CHECK(q.params[0].scale == doctest::Approx(2.0 / 255));
  CHECK(q.params[1].scale == doctest::Approx(200.0 / 255));
}
