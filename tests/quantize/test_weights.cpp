// Weight quantization per layer, per channel and per group.
#include "weights.hpp"

#include <doctest/doctest.h>

#include <algorithm>
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

}  // namespace

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

TEST_CASE("int4 weights (w4a16): 16 levels per channel or group, 0 exact, coarser than int8") {
  std::vector<std::int64_t> shape;
  const std::vector<float> original = conv_weight(shape);
  std::vector<float> int4 = original;
  std::vector<float> int8 = original;
  const auto q4 = quantize_weights(int4, shape, Method::group(32), 0, 1, int4_range);
  (void)quantize_weights(int8, shape, Method::channel(), 0, 1, int8_range);
  REQUIRE(q4.params.size() == 4);  // 8 input channels: one group of 32 per output channel
  for (std::size_t c = 0; c < 4; ++c) {
    const AffineParams& p = q4.params[c];
    CHECK(p.range == int4_range);
    CHECK(p.fake_quantize(0.0f) == 0.0f);
    std::vector<float> levels(int4.begin() + static_cast<std::ptrdiff_t>(c * 72),
                              int4.begin() + static_cast<std::ptrdiff_t>((c + 1) * 72));
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    CHECK(levels.size() <= 16);
    CHECK(levels.size() >= 12);  // 72 uniform values fill nearly every level
    for (float v : levels) {
      const std::int32_t q = p.quantize(v);
      CHECK(q >= -8);
      CHECK(q <= 7);
      CHECK(p.dequantize(q) == v);
    }
    const double e4 = relative_error(int4, original, c * 72, (c + 1) * 72);
    const double e8 = relative_error(int8, original, c * 72, (c + 1) * 72);
    CHECK(e4 > 8 * e8);  // 15 steps against 255
    CHECK(e4 < 0.2);
  }
}

TEST_CASE("int16 dynamic fixed-point weights (w16a16i_dfp): an fl per output channel or one per layer") {
  std::vector<std::int64_t> shape;
  const std::vector<float> original = conv_weight(shape);
  std::vector<float> channel = original;
  std::vector<float> layer = original;
  const auto per_channel = quantize_weights(channel, shape, Method::channel(), 0, 1, int16_dfp_range);
  const auto per_layer = quantize_weights(layer, shape, Method::layer(), 0, 1, int16_dfp_range);
  REQUIRE(per_channel.params.size() == 4);
  REQUIRE(per_layer.params.size() == 1);
  std::vector<int> fls;
  for (std::size_t c = 0; c < 4; ++c) {
    const AffineParams& p = per_channel.params[c];
    CHECK(p.zero_point == 0);
    REQUIRE(dfp_fraction_length(p.scale));
    fls.push_back(*dfp_fraction_length(p.scale));
    float top = 0;
    for (std::size_t i = c * 72; i < (c + 1) * 72; ++i) {
      top = std::max(top, std::fabs(original[i]));
      // Every weight on its channel's grid, within half a step of the float weight.
      CHECK(std::ldexp(channel[i], fls.back()) == std::nearbyint(std::ldexp(channel[i], fls.back())));
      CHECK(std::fabs(channel[i] - original[i]) <= 0.5f * p.scale);
    }
    // The largest fl at which the channel's largest magnitude stays within int16.
    CHECK(std::ldexp(top, fls.back()) <= 32768.0f);
    CHECK(std::ldexp(top, fls.back() + 1) > 32767.0f);
  }
  CHECK(fls.front() > fls.back() + 12);  // ranges 1e-3 .. 10: four decades, about 13 bits apart
  CHECK(per_layer.params[0].scale == per_channel.params[3].scale);  // the widest channel decides the layer's fl
  CHECK(relative_error(channel, original, 0, 72) < relative_error(layer, original, 0, 72) / 100);
  CHECK(relative_error(channel, original, 0, 288) < 1e-4);  // 16 bits: far finer than int8
}

TEST_CASE("gdq clips a weight whose outliers meet inputs that hardly vary, and lowers the output error") {
  // A linear layer [4 outputs, 16 inputs]: uniform weights, and in every channel an outlier (20) on
  // input 0, which is constant 0 (it never changes the output). Min/max spends the int4 range on it.
  const std::vector<std::int64_t> shape{4, 16};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> w(64);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = i % 16 == 0 ? 20.0f : u(rng);
  WeightInputMoments moments;
  for (std::size_t i = 0; i < w.size(); ++i) {
    moments.mean.push_back(i % 16 == 0 ? 0.0 : 0.5);
    moments.variance.push_back(i % 16 == 0 ? 0.0 : 1.0);
  }
  const auto ratios = gdq_clip_ratios(w, shape, Method::channel(), 0, 1, int4_range, moments);
  REQUIRE(ratios.size() == 4);
  std::vector<float> minmax = w, clipped = w;
  (void)quantize_weights(minmax, shape, Method::channel(), 0, 1, int4_range);
  const auto q = quantize_weights(clipped, shape, Method::channel(), 0, 1, int4_range, ratios);
  for (std::size_t c = 0; c < 4; ++c) {
    CHECK(ratios[c] < 0.9f);
    CHECK(ratios[c] >= 0.5f);
    CHECK(q.params[c].highest() <= 20.0f * ratios[c] + q.params[c].scale);  // the range was scaled
  }
  // The output error on inputs of those moments: sum over samples of |(W - Q(W)) x|^2.
  std::normal_distribution<double> n(0.5, 1.0);
  double e_minmax = 0, e_gdq = 0;
  for (int sample = 0; sample < 2000; ++sample) {
    std::vector<double> x(16);
    for (std::size_t k = 1; k < 16; ++k) x[k] = n(rng);
    for (std::size_t c = 0; c < 4; ++c) {
      double d_minmax = 0, d_gdq = 0;
      for (std::size_t k = 0; k < 16; ++k) {
        d_minmax += (w[c * 16 + k] - minmax[c * 16 + k]) * x[k];
        d_gdq += (w[c * 16 + k] - clipped[c * 16 + k]) * x[k];
      }
      e_minmax += d_minmax * d_minmax;
      e_gdq += d_gdq * d_gdq;
    }
  }
  MESSAGE("output error, gdq against min/max: " << e_gdq / e_minmax);
  CHECK(e_gdq < 0.5 * e_minmax);

  // Given ratios of another count are refused, naming the count.
  std::vector<float> again = w;
  const std::vector<float> three(3, 1.0f);
  CHECK_THROWS_WITH_AS((void)quantize_weights(again, shape, Method::channel(), 0, 1, int4_range, three),
                       doctest::Contains("3 clip ratios"), std::invalid_argument);
  CHECK_THROWS_AS((void)gdq_clip_ratios(w, shape, Method::channel(), 0, 1, int4_range, WeightInputMoments{}),
                  std::invalid_argument);
}
