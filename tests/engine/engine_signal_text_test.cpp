// STFT and MelWeightMatrix (host/engine/ops/stft.cpp) and TfIdfVectorizer
// (host/engine/ops/tfidf_vectorizer.cpp) beyond the ONNX node tests: STFT against a direct
// transform of each windowed frame (real and complex signals, onesided or not), the modes and
// weights of TfIdfVectorizer, and the one-line refusals of bad inputs and attributes.

#include "engine_test_model.hpp"

#include <numbers>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

onnx::ModelProto stft_model(std::vector<int64_t> signal, int64_t step, int64_t window, bool onesided) {
  ModelBuilder m(17);
  m.input("x", DataType::float32, std::move(signal))
      .input("w", DataType::float32, {window})
      .initializer("step", Tensor::from<int64_t>({}, {step}))
      .output("y")
      .node("STFT", {"x", "step", "w"}, {"y"}, {attr("onesided", int64_t{onesided})}, "stft");
  return m.model();
}

}  // namespace

TEST_SUITE("engine.signal_text") {
  TEST_CASE("STFT is the DFT of each windowed frame") {
    for (const int64_t parts : {1, 2}) {
      for (const bool onesided : {false, true}) {
        if (parts == 2 && onesided) continue;
        CAPTURE(parts);
        CAPTURE(onesided);
        const int64_t batch = 2, length = 23, frame = 8, step = 3;
        const auto x = random_tensor({batch, length, parts}, 5);
        const auto w = random_tensor({frame}, 6);
        const Tensor y = run_one(stft_model({batch, length, parts}, step, frame, onesided), {x, w});
        const int64_t frames = (length - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
        REQUIRE(y.shape() == std::vector<int64_t>{batch, frames, bins, 2});
        const auto xv = x.values<float>(), wv = w.values<float>(), yv = y.values<float>();
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t f = 0; f < frames; ++f)
            for (int64_t k = 0; k < bins; ++k) {
              double re = 0.0, im = 0.0;
              for (int64_t t = 0; t < frame; ++t) {
                const auto at = static_cast<std::size_t>(((b * length) + f * step + t) * parts);
                const double xr = xv[at] * wv[static_cast<std::size_t>(t)];
                const double xi = parts == 2 ? xv[at + 1] * wv[static_cast<std::size_t>(t)] : 0.0;
                const double angle = -2.0 * std::numbers::pi * static_cast<double>(k * t) / frame;
                re += xr * std::cos(angle) - xi * std::sin(angle);
                im += xr * std::sin(angle) + xi * std::cos(angle);
              }
              const auto out = static_cast<std::size_t>(((b * frames + f) * bins + k) * 2);
              CHECK(yv[out] == doctest::Approx(re).epsilon(1e-5).scale(1.0));
              CHECK(yv[out + 1] == doctest::Approx(im).epsilon(1e-5).scale(1.0));
            }
      }
    }
  }

  TEST_CASE("STFT refuses a frame longer than the signal, onesided complex input and a zero step") {
    CHECK(planning_refusal(stft_model({1, 6, 1}, 2, 8, true)) ==
          "node 'stft' (STFT): frame length 8 is outside 1 to the signal's 6 points (at most 1048576)");
    CHECK(planning_refusal(stft_model({1, 16, 2}, 2, 8, true)) ==
          "node 'stft' (STFT): onesided=1 needs a real signal ([batch, length, 1])");
    CHECK(planning_refusal(stft_model({1, 16, 1}, 0, 8, true)) ==
          "node 'stft' (STFT): frame_step is 0, expected a positive value");
  }

  TEST_CASE("MelWeightMatrix: shape, triangles that peak at 1, and refusals") {
    auto model = [](int64_t bins, int64_t dft, int64_t rate, float low, float high, int64_t type) {
      ModelBuilder m(17);
      m.initializer("n", Tensor::from<int64_t>({}, {bins}))
          .initializer("d", Tensor::from<int64_t>({}, {dft}))
          .initializer("r", Tensor::from<int64_t>({}, {rate}))
          .initializer("lo", Tensor::from<float>({}, {low}))
          .initializer("hi", Tensor::from<float>({}, {high}))
          .output("y")
          .node("MelWeightMatrix", {"n", "d", "r", "lo", "hi"}, {"y"}, {attr("output_datatype", type)}, "mel");
      return m.model();
    };
    const Tensor y = run_one(model(10, 64, 16000, 20.0f, 8000.0f, 11), {});
    REQUIRE(y.dtype() == DataType::float64);
    REQUIRE(y.shape() == std::vector<int64_t>{33, 10});
    for (int64_t filter = 0; filter < 10; ++filter) {
      double peak = 0.0;
      for (int64_t bin = 0; bin < 33; ++bin) {
        const double v = y.values<double>()[static_cast<std::size_t>(bin * 10 + filter)];
        CHECK(v >= 0.0);
        CHECK(v <= 1.0);
        peak = std::max(peak, v);
      }
      CHECK(peak == 1.0);
    }
    // An upper edge above the Nyquist frequency puts filter points beyond the spectrum: they drop out.
    CHECK(run_one(model(4, 16, 1000, 0.0f, 2000.0f, 1), {}).shape() == std::vector<int64_t>{9, 4});
    CHECK(planning_refusal(model(0, 16, 1000, 0.0f, 400.0f, 1))
              .find("node 'mel' (MelWeightMatrix): "
                    "num_mel_bins 0") == 0);
    CHECK(planning_refusal(model(4, 16, 1000, 300.0f, 200.0f, 1)) ==
          "node 'mel' (MelWeightMatrix): the edges 300 Hz and 200 Hz must satisfy 0 <= lower < upper");
  }

  TEST_CASE("TfIdfVectorizer: TF, IDF and TFIDF with weights; unigrams counted once per position") {
    // pool: unigrams 2, 3; bigrams (3, 3), (7, 8); output columns 3, 0, 1, 2.
    auto model = [](std::string mode, std::vector<int64_t> shape, int64_t min_n, int64_t skip, bool weights) {
      ModelBuilder m(9);
      std::vector<onnx::AttributeProto> attrs{attr("mode", std::move(mode)),
                                              attr("min_gram_length", min_n),
                                              attr("max_gram_length", int64_t{2}),
                                              attr("max_skip_count", skip),
                                              attr("ngram_counts", std::vector<int64_t>{0, 2}),
                                              attr("ngram_indexes", std::vector<int64_t>{3, 0, 1, 2}),
                                              attr("pool_int64s", std::vector<int64_t>{2, 3, 3, 3, 7, 8})};
      if (weights) attrs.push_back(attr_floats("weights", {0.5f, 2.0f, 4.0f, 8.0f}));
      m.input("x", DataType::int64, std::move(shape)).output("y").node("TfIdfVectorizer", {"x"}, {"y"}, attrs, "tfidf");
      return m.model();
    };
    const auto x = Tensor::from<int64_t>({2, 6}, {3, 3, 3, 7, 1, 8, 2, 2, 7, 8, 3, 1});
    // Row 0, skip 2 (distances 1..3): unigram 3 x3, 2 x0; (3,3) at (0,1),(1,2),(0,2) = 3; (7,8) at (3,5) = 1.
    // Row 1: unigram 2 x2, 3 x1; (7,8) at (2,3) = 1; (3,3) none.
    const Tensor tf = run_one(model("TF", {2, 6}, 1, 2, false), {x});
    REQUIRE(tf.shape() == std::vector<int64_t>{2, 4});
    CHECK(std::vector<float>(tf.values<float>().begin(), tf.values<float>().end()) ==
          std::vector<float>{3, 3, 1, 0, 1, 0, 1, 2});
    // Bigrams only: the unigram columns stay 0.
    const Tensor bigrams = run_one(model("TF", {2, 6}, 2, 2, false), {x});
    CHECK(std::vector<float>(bigrams.values<float>().begin(), bigrams.values<float>().end()) ==
          std::vector<float>{0, 3, 1, 0, 0, 0, 1, 0});
    // weights are per output column (as ONNX Runtime and the ONNX reference read them): 0.5, 2, 4, 8.
    const Tensor idf = run_one(model("IDF", {2, 6}, 1, 2, true), {x});
    CHECK(std::vector<float>(idf.values<float>().begin(), idf.values<float>().end()) ==
          std::vector<float>{0.5f, 2, 4, 0, 0.5f, 0, 4, 8});
    const Tensor tfidf = run_one(model("TFIDF", {2, 6}, 1, 2, true), {x});
    CHECK(std::vector<float>(tfidf.values<float>().begin(), tfidf.values<float>().end()) ==
          std::vector<float>{1.5f, 6, 4, 0, 0.5f, 0, 4, 16});
    CHECK(planning_refusal(model("BM25", {6}, 1, 0, false)) ==
          "node 'tfidf' (TfIdfVectorizer): attribute 'mode' is 'BM25', expected TF, IDF or TFIDF");
    ModelBuilder bad(9);
    bad.input("x", DataType::int32, {4})
        .output("y")
        .node("TfIdfVectorizer", {"x"}, {"y"},
              {attr("mode", "TF"), attr("min_gram_length", int64_t{1}), attr("max_gram_length", int64_t{2}),
               attr("max_skip_count", int64_t{0}), attr("ngram_counts", std::vector<int64_t>{0, 2}),
               attr("ngram_indexes", std::vector<int64_t>{0, 1, 2}),
               attr("pool_int64s", std::vector<int64_t>{1, 2, 3})},
              "tfidf");
    CHECK(planning_refusal(bad.model()) ==
          "node 'tfidf' (TfIdfVectorizer): ngram_counts [0, 2] do not split the 3 pool items into groups of 1, 2, ... "
          "items");
  }
}
