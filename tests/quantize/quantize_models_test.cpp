// w8a8 on a real network inside the engine, under the sanitizers (issue 11): mobilenet_v2 (tests/models,
// seeded weights, inputs drawn like its calibration batches, N(0, 1)) calibrated on a few samples, then
// run quantized and in float32 for normal, mmse and kl_divergence: every quantized kernel meets real
// shapes (depthwise, pointwise, residual adds, the classifier). The accuracy figures (20 calibration
// samples, 10 test samples, resnet18 too, through `rknnxx convert` and `rknnxx run`) are measured by
// tests/quantize/vision_int8_test.py with the release build, where they take seconds instead of minutes.
// Exits 77 (skipped) when the models were not fetched.
#include "reference_case.hpp"

#include "calibrate.hpp"
#include "onnx_reader.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

using namespace rknnxx::host;
using namespace rknnxx::host::quantize;

namespace {

std::vector<Tensor> gaussian_sample(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Tensor t(DataType::float32, {1, 3, 224, 224});
  for (float& v : t.values<float>()) v = dist(rng);
  std::vector<Tensor> s;
  s.push_back(std::move(t));
  return s;
}

double cosine(std::span<const float> a, std::span<const float> b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

std::size_t argmax(std::span<const float> v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST_CASE("w8a8 mobilenet_v2 against float32") {
  const auto dir = rknnxx::test_models::models_dir() / "vision";
  if (!std::filesystem::exists(dir / "mobilenet_v2.onnx")) {
    std::printf("quantize_models_test: no models in %s: run tests/models/fetch.sh; skipped\n", dir.c_str());
    std::_Exit(77);
  }
  constexpr std::size_t calibration_samples = 4;
  constexpr std::size_t test_samples = 3;
  for (const char* name : {"mobilenet_v2"}) {
    CAPTURE(std::string(name));
    const Graph graph = inference_graph(onnx::read_model_file(dir / (std::string(name) + ".onnx")));
    const auto started = std::chrono::steady_clock::now();
    Calibrator calibrator(graph, Algorithm::mmse);  // keeps histograms: both algorithms below
    for (std::size_t i = 0; i < calibration_samples; ++i) calibrator.add(gaussian_sample(static_cast<uint32_t>(i)));
    const std::chrono::duration<double> calibration = std::chrono::steady_clock::now() - started;
    std::printf("%s: %zu calibration samples through the float engine in %.1f s\n", name, calibration_samples,
                calibration.count());

    Session reference(Graph(graph), {.fuse = false});
    std::vector<std::vector<float>> float_logits;
    for (std::size_t i = 0; i < test_samples; ++i) {
      const auto out = reference.run(gaussian_sample(static_cast<uint32_t>(1000 + i)));
      float_logits.emplace_back(out[0].values<float>().begin(), out[0].values<float>().end());
    }
    for (Algorithm algorithm : {Algorithm::normal, Algorithm::mmse, Algorithm::kl_divergence}) {
      const auto chose = std::chrono::steady_clock::now();
      ActivationTable table = calibrator.finish(algorithm);
      const std::chrono::duration<double> choosing = std::chrono::steady_clock::now() - chose;
      QuantizedSession quantized(graph, std::move(table));
      double worst = 1.0, sum = 0.0;
      std::size_t agree = 0;
      for (std::size_t i = 0; i < test_samples; ++i) {
        const auto out = quantized.run(gaussian_sample(static_cast<uint32_t>(1000 + i)));
        const double c = cosine(out[0].values<float>(), float_logits[i]);
        worst = std::min(worst, c);
        sum += c;
        agree += argmax(out[0].values<float>()) == argmax(float_logits[i]) ? 1 : 0;
      }
      const std::string_view algo = rknnxx::toolkit::spelling(algorithm);
      std::printf(
          "%s w8a8 %-13.*s: ranges chosen in %.2f s; logits cosine mean %.5f, min %.5f; top-1 agreement %zu/%zu\n",
          name, static_cast<int>(algo.size()), algo.data(), choosing.count(), sum / test_samples, worst, agree,
          test_samples);
      CHECK(worst > 0.95);  // top-1 agreement over 3 samples says little: vision_int8_test.py checks it
    }
  }
}
