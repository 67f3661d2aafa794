// Conv on integers (host/engine/ops/conv_int8.cpp) against the float kernels and an exact reference, on
// random int8 grids with nonzero zero points: inputs x = s_x * (q - z_x), weights per output channel (or per
// layer) w = s_w[m] * (q - z_w[m]), the grids told to the engine with Graph::set_integer_grid.
//
// The integer path reads its input as the grid's integers: fed the grid values moved by up to 0.3 of a step,
// it must still give the convolution of the grid values, which proves it ran (the float kernels would carry
// the moves into the output). Its result must be within a few float roundings of the exact sum (computed
// here in double), and the float kernels' within their summation bound of it. Without oneDNN or without VNNI
// (int8_conv_available() false) the grids change nothing: the outputs must equal the float kernels' bits. A Gemm or
// MatMul with a constant B runs on the same kernel, as a 1x1 Conv over an image of A's rows.

#include "engine_test_model.hpp"
#include "scoped_env.hpp"
#include "square_conv.hpp"
#include "ops/conv_int8.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// RKNNXX_ENGINE_INT8=always while it lives: these Convs are too small for the rule that chooses the
// integer path in a model.
struct AlwaysIntegers : ScopedEnv {
  AlwaysIntegers() : ScopedEnv("RKNNXX_ENGINE_INT8", "always") {}
};

struct Case : SquareConv {
  bool per_layer = false;  // one weight scale and zero point for the whole tensor
};

const Case cases[] = {
    {{"1x1", 1, 32, 9, 10, 48, 1, 1, 1, 1, 0, 0}},
    {{"1x1 strided, no bias", 1, 16, 9, 9, 24, 1, 1, 2, 1, 0, 0, "", false}},
    {{"3x3 padded", 1, 8, 11, 12, 20, 1, 3, 1, 1, 1, 1}},
    {{"3x3 strided, asymmetric pads", 1, 6, 13, 12, 17, 1, 3, 2, 1, 0, 1}},
    {{"3x3 dilated", 1, 5, 12, 12, 16, 1, 3, 1, 2, 2, 2}},
    {{"3x3 on rows of 70 pixels (whole lanes of the quantization and a tail)", 1, 8, 5, 70, 16, 1, 3, 1, 1, 1, 1}},
    {{"1x1 on 40 channels of 18-pixel rows (16 x 16 tiles of the quantization, each with a tail)", 1, 40, 3, 18, 24, 1,
      1, 1, 1, 0, 0}},
    {{"7x7/2 on 3 channels", 1, 3, 30, 30, 16, 1, 7, 2, 1, 3, 3}},
    {{"3x3 on 256 channels (2304-term sums)", 1, 256, 6, 6, 40, 1, 3, 1, 1, 1, 1}},
    {{"depthwise 3x3", 1, 32, 10, 10, 32, 32, 3, 1, 1, 1, 1}},
    {{"depthwise 3x3/2, 2 outputs per channel", 1, 8, 11, 11, 16, 8, 3, 2, 1, 1, 1}},
    {{"grouped 3x3", 1, 32, 9, 9, 48, 4, 3, 1, 1, 1, 1}},
    {{"batch 2 3x3 + Relu", 2, 16, 8, 9, 32, 1, 3, 1, 1, 1, 1, "Relu"}},
    {{"batch 2 grouped", 2, 12, 7, 7, 18, 3, 3, 1, 1, 1, 1}},
    {{"1x1 + Clip, per-layer weights", 1, 32, 8, 8, 24, 1, 1, 1, 1, 0, 0, "Clip"}, true},
    {{"depthwise + Clip", 1, 32, 8, 8, 32, 32, 3, 1, 1, 1, 1, "Clip"}},
};

// A random int8 grid tensor: its integers, scales and zero points (one per channel of axis 0, or one).
struct GridTensor {
  Tensor values;
  IntegerGrid grid;
};

float grid_value(double scale, int32_t q, int32_t zero) { return static_cast<float>(scale * (q - zero)); }

GridTensor random_grid_tensor(std::vector<int64_t> shape, std::size_t params, std::mt19937& rng, double scale_lo,
                              double scale_hi) {
  GridTensor t{Tensor(DataType::float32, shape), {}};
  std::uniform_real_distribution<double> scale(scale_lo, scale_hi);
  std::uniform_int_distribution<int32_t> integer(-128, 127);
  for (std::size_t i = 0; i < params; ++i) {
    t.grid.scale.push_back(static_cast<float>(scale(rng)));
    // Zero points across the range, one of them 0 (no correction needed for that channel).
    t.grid.zero_point.push_back(i == 1 ? 0 : integer(rng) / 2);
  }
  auto values = t.values.values<float>();
  const std::size_t per = values.size() / params;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t p = i / per;
    values[i] = grid_value(t.grid.scale[p], integer(rng), t.grid.zero_point[p]);
  }
  return t;
}

// The exact sum (double) of each output before the activation, and the sum of its terms' magnitudes.
struct Reference {
  std::vector<double> value, magnitude;
};

Reference reference(const Case& s, const Tensor& x, const Tensor& w, const Tensor& bias) {
  const int64_t oh_count = (s.h + s.pad_begin + s.pad_end - s.dilation * (s.k - 1) - 1) / s.stride + 1;
  const int64_t ow_count = (s.w + s.pad_begin + s.pad_end - s.dilation * (s.k - 1) - 1) / s.stride + 1;
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  Reference r;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oh = 0; oh < oh_count; ++oh)
        for (int64_t ow = 0; ow < ow_count; ++ow) {
          double sum = s.bias ? bias.data<float>()[m] : 0.0, magnitude = std::fabs(sum);
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ki = 0; ki < s.k; ++ki)
              for (int64_t kj = 0; kj < s.k; ++kj) {
                const int64_t ih = oh * s.stride - s.pad_begin + ki * s.dilation;
                const int64_t iw = ow * s.stride - s.pad_begin + kj * s.dilation;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                const double term = double{wd[((m * cg + c) * s.k + ki) * s.k + kj]} *
                    xd[((n * s.c + m / mg * cg + c) * s.h + ih) * s.w + iw];
                sum += term;
                magnitude += std::fabs(term);
              }
          r.value.push_back(sum);
          r.magnitude.push_back(magnitude);
        }
  return r;
}

double activation(const Case& s, double v) {
  const std::string a = s.activation;
  if (a == "Relu") return std::max(v, 0.0);
  if (a == "Clip") return std::min(std::max(v, -0.3), 0.4);
  return v;
}

}  // namespace

TEST_SUITE("engine.conv_int8") {
  TEST_CASE("an int8 Conv on integers equals the convolution of the grid values") {
    AlwaysIntegers always;
    for (const Case& s : cases) {
      std::mt19937 rng(static_cast<uint32_t>(s.c * 131 + s.m * 7 + s.k));
      const int64_t cg = s.c / s.group;
      // Input steps of 0.05, weight steps of 0.002 to 0.02: outputs of a few units, as in a network.
      GridTensor x = random_grid_tensor({s.n, s.c, s.h, s.w}, 1, rng, 0.04, 0.06);
      GridTensor w =
          random_grid_tensor({s.m, cg, s.k, s.k}, s.per_layer ? 1 : static_cast<std::size_t>(s.m), rng, 0.002, 0.02);
      const Tensor bias = random_tensor({s.m}, 3);
      // The same input moved by up to 0.3 of a step: on the grid's integers it is x again.
      Tensor moved = x.values.clone();
      std::uniform_real_distribution<float> move(-0.3f, 0.3f);
      for (float& v : moved.values<float>()) v += move(rng) * x.grid.scale[0];
      const Reference want = reference(s, x.values, w.values, bias);
      for (const std::size_t threads : {std::size_t{1}, test_threads(2)}) {
        const std::string name = s.name;
        CAPTURE(name);
        CAPTURE(threads);
        Graph annotated(square_conv_model(s, w.values, bias));
        annotated.set_integer_grid(*annotated.find("x"), x.grid);
        annotated.set_integer_grid(*annotated.find("w"), w.grid);
        Session integer(std::move(annotated), {.threads = threads});
        Session floats(square_conv_model(s, w.values, bias), {.threads = threads});
        const Tensor from_floats = floats.run(std::vector{x.values.clone()})[0];
        if (!int8_conv_available()) {
          const Tensor got = integer.run(std::vector{x.values.clone()})[0];
          CHECK(std::memcmp(got.raw(), from_floats.raw(), got.bytes()) == 0);
          continue;
        }
        const Tensor got = integer.run(std::vector{moved})[0];
        const auto g = got.values<float>(), f = from_floats.values<float>();
        REQUIRE(g.size() == want.value.size());
        const double k = static_cast<double>(cg * s.k * s.k);
        int integer_off = 0, floats_off = 0;
        for (std::size_t i = 0; i < g.size(); ++i) {
          const double exact = activation(s, want.value[i]);
          // x and w are float32 roundings of s * (q - z) (2^-24 each): the integer path sums the grid
          // values themselves, then rounds about three times.
          integer_off += std::fabs(g[i] - exact) > 0x1p-21 * want.magnitude[i] + 1e-30;
          floats_off += std::fabs(f[i] - exact) > (k + 2) * 0x1p-23 * want.magnitude[i] + 1e-30;
        }
        CHECK(integer_off == 0);
        CHECK(floats_off == 0);
      }
    }
  }

  TEST_CASE("a Conv whose weights are off their grid stays on the float kernels") {
    AlwaysIntegers always;
    const Case& s = cases[2];
    std::mt19937 rng(7);
    GridTensor x = random_grid_tensor({s.n, s.c, s.h, s.w}, 1, rng, 0.04, 0.06);
    GridTensor w = random_grid_tensor({s.m, s.c, s.k, s.k}, static_cast<std::size_t>(s.m), rng, 0.002, 0.02);
    w.values.values<float>()[5] += 0.25f * w.grid.scale[0];  // one weight between two grid values
    const Tensor bias = random_tensor({s.m}, 3);
    Graph annotated(square_conv_model(s, w.values, bias));
    annotated.set_integer_grid(*annotated.find("x"), x.grid);
    annotated.set_integer_grid(*annotated.find("w"), w.grid);
    Session integer(std::move(annotated), {.threads = 1});
    Session floats(square_conv_model(s, w.values, bias), {.threads = 1});
    Tensor moved = x.values.clone();
    for (float& v : moved.values<float>()) v += 0.2f * x.grid.scale[0];
    const Tensor got = integer.run(std::vector{moved.clone()})[0];
    const Tensor from_floats = floats.run(std::vector{moved})[0];
    CHECK(std::memcmp(got.raw(), from_floats.raw(), got.bytes()) == 0);
  }

  TEST_CASE("by default only a Conv whose products outweigh its elements runs on integers, never a depthwise one") {
    if (!int8_conv_available()) return;
    AlwaysIntegers always;
    ::unsetenv("RKNNXX_ENGINE_INT8");  // the rule (restored by the guard)
    // products > 37 inputs + 30 outputs (conv_int8.cpp's worth_integers), per image:
    struct Expected {
      Case conv;
      bool integers;
    };
    const Expected expected[] = {
        // 3x3 on 256 channels of 16x16: 38 million products against 2.9 million
        {{{"3x3 256 -> 64 on 16x16", 1, 256, 16, 16, 64, 1, 3, 1, 1, 1, 1}}, true},
        // mobilenet_v2's last 1x1, 320 -> 1280 on 7x7: 20 million against 2.5 million
        {{{"1x1 320 -> 1280 on 7x7", 1, 320, 7, 7, 1280, 1, 1, 1, 1, 0, 0}}, true},
        // its first 1x1, 32 -> 16 on 112x112: 6.4 million against 21 million
        {{{"1x1 32 -> 16 on 112x112", 1, 32, 112, 112, 16, 1, 1, 1, 1, 0, 0}}, false},
        {cases[0], false},  // 1x1 32 -> 48 on 9x10: 138 thousand against 236 thousand
        // a depthwise 3x3 on 256 channels of 28x28
        {{{"depthwise 3x3 on 256 channels", 1, 256, 28, 28, 256, 256, 3, 1, 1, 1, 1}}, false},
    };
    for (const Expected& e : expected) {
      const Case& s = e.conv;
      const std::string name = s.name;
      CAPTURE(name);
      std::mt19937 rng(11);
      GridTensor x = random_grid_tensor({s.n, s.c, s.h, s.w}, 1, rng, 0.04, 0.06);
      GridTensor w =
          random_grid_tensor({s.m, s.c / s.group, s.k, s.k}, static_cast<std::size_t>(s.m), rng, 0.002, 0.02);
      const Tensor bias = random_tensor({s.m}, 3);
      Graph annotated(square_conv_model(s, w.values, bias));
      annotated.set_integer_grid(*annotated.find("x"), x.grid);
      annotated.set_integer_grid(*annotated.find("w"), w.grid);
      Session integer(std::move(annotated), {.threads = 1});
      Session floats(square_conv_model(s, w.values, bias), {.threads = 1});
      Tensor moved = x.values.clone();
      for (float& v : moved.values<float>()) v += 0.2f * x.grid.scale[0];
      const Tensor got = integer.run(std::vector{moved.clone()})[0];
      const Tensor on_floats = floats.run(std::vector{moved})[0];
      const Tensor on_grid = floats.run(std::vector{x.values.clone()})[0];
      // On integers the moved input reads as the grid values; on the floats it does not.
      const bool same_as_floats = std::memcmp(got.raw(), on_floats.raw(), got.bytes()) == 0;
      CHECK(same_as_floats == !e.integers);
      if (e.integers) {
        double diff = 0, top = 0;
        for (std::size_t i = 0; i < got.values<float>().size(); ++i) {
          diff = std::max(diff, static_cast<double>(std::fabs(got.values<float>()[i] - on_grid.values<float>()[i])));
          top = std::max(top, static_cast<double>(std::fabs(on_grid.values<float>()[i])));
        }
        CHECK(diff <= 1e-5 * top);
      }
    }
  }

  TEST_CASE("oneDNN's AMX kernels only where their saving pays their fixed cost a call") {
    // Convs timed on both kernels (benchmarks/README.md, "AMX or VNNI"): products a call, output channels a group.
    constexpr std::string_view amx = "jit:avx512_core_amx_int8", amx_1x1 = "jit_1x1:avx512_core_amx_int8";
    // resnet18's 3x3 on 64 channels of 56x56: 116 million products, 0.12 ms on AMX against 0.34 ms
    CHECK(amx_pays(amx, 115'605'504, 64));
    // mobilenet_v2's 1x1 960 -> 320 on 7x7 (15 million, 0.041 against 0.061 ms); 576 -> 160 (4.5 million, 0.027
    // against 0.022 ms)
    CHECK(amx_pays(amx, 15'052'800, 320));
    CHECK_FALSE(amx_pays(amx, 4'515'840, 160));
    // The 1x1 kernel: squeezenet's 512 -> 1000 on 13x13 (87 million, 0.14 against 0.26 ms); mobilenet_v2's 96 -> 576
    // on 14x14 (11 million, 0.061 against 0.037 ms); MobileNetV3-small's 40 -> 240 on 14x14 (0.051 against 0.011 ms)
    CHECK(amx_pays(amx_1x1, 86'528'000, 1000));
    CHECK_FALSE(amx_pays(amx_1x1, 10'838'016, 576));
    CHECK_FALSE(amx_pays(amx_1x1, 1'881'600, 240));
    // Window sums, one output channel: resnet18's over 64 channels of 3x3 on 56x56 (1.8 million, 0.040 against
    // 0.098 ms), over 512 channels on 7x7 (0.23 million, 0.028 against 0.025 ms)
    CHECK(amx_pays(amx, 1'806'336, 1));
    CHECK_FALSE(amx_pays(amx, 225'792, 1));
    CHECK_FALSE(amx_pays(amx, 0, 16));
  }

  TEST_CASE("set_integer_grid refuses a grid without parameters") {
    Graph graph(square_conv_model(cases[0], random_tensor({48, 32, 1, 1}, 2), random_tensor({48}, 3)));
    IntegerGrid grid;
    CHECK_THROWS_WITH_AS(graph.set_integer_grid(*graph.find("x"), grid),
                         doctest::Contains("'x' is given 0 scales and 0 zero points"), EngineError);
    grid.scale = {0.1f, 0.2f};
    grid.zero_point = {0};
    CHECK_THROWS_AS(graph.set_integer_grid(*graph.find("x"), grid), EngineError);
  }

  TEST_CASE("a Gemm or MatMul with a constant B on int8 grids runs on integers: the product of the grid values") {
    AlwaysIntegers always;
    struct Product {
      const char* name;
      const char* op;
      std::vector<int64_t> a_shape;  // [..., K]
      int64_t columns;
      bool trans_b;                  // B [N, K]; else [K, N]
      std::vector<int64_t> c_shape;  // empty: no C
      bool per_column;               // B's grid: one scale and zero point per column, or one
      float alpha = 1.0f, beta = 1.0f;
      bool integers = true;  // what it runs on, where the CPU can
    };
    const Product products[] = {
        {"Gemm transB, a bias per column", "Gemm", {1, 96}, 40, true, {40}, true},
        {"Gemm transB, 5 rows, C [1, N]", "Gemm", {5, 64}, 24, true, {1, 24}, true},
        {"Gemm B [K, N], per-column grid", "Gemm", {3, 48}, 33, false, {33}, true},
        {"Gemm without C, one grid for B", "Gemm", {2, 40}, 16, true, {}, false},
        {"MatMul [2, 3, K] x [K, N]", "MatMul", {2, 3, 56}, 20, false, {}, true},
        {"MatMul of a vector", "MatMul", {72}, 12, false, {}, false},
        // More output values in a band than finish_piece: finished and rounded in pieces, each with its window sums.
        {"MatMul of 600 rows, per-column grid", "MatMul", {2, 300, 40}, 24, false, {}, true},
        {"Gemm with alpha 0.5 stays on floats", "Gemm", {2, 32}, 16, true, {16}, true, 0.5f, 1.0f, false},
        {"Gemm with a C per element stays on floats", "Gemm", {2, 32}, 16, true, {2, 16}, true, 1.0f, 1.0f, false},
        {"Gemm with beta 2 stays on floats", "Gemm", {2, 32}, 16, true, {16}, true, 1.0f, 2.0f, false},
    };
    for (const Product& p : products) {
      const std::string name = p.name;
      CAPTURE(name);
      std::mt19937 rng(static_cast<uint32_t>(p.a_shape.back() * 17 + p.columns));
      const int64_t inner = p.a_shape.back(), n = p.columns;
      GridTensor a = random_grid_tensor(p.a_shape, 1, rng, 0.04, 0.06);
      // B as [N, K] (one grid per row: a column of the product), transposed below when the model takes [K, N].
      GridTensor b_nk =
          random_grid_tensor({n, inner}, p.per_column ? static_cast<std::size_t>(n) : 1, rng, 0.002, 0.02);
      Tensor b = b_nk.values.clone();
      IntegerGrid b_grid = b_nk.grid;
      if (!p.trans_b) {
        b = Tensor(DataType::float32, {inner, n});
        for (int64_t k = 0; k < inner; ++k)
          for (int64_t j = 0; j < n; ++j) b.values<float>()[k * n + j] = b_nk.values.values<float>()[j * inner + k];
        if (p.per_column) b_grid.axis = 1;
      }
      const bool has_c = !p.c_shape.empty();
      const Tensor c = has_c ? random_tensor(p.c_shape, 3) : Tensor();
      const auto model = [&] {
        ModelBuilder m(13);
        m.input("a", DataType::float32, p.a_shape).initializer("b", b);
        std::vector<std::string> inputs{"a", "b"};
        if (has_c) {
          m.initializer("c", c);
          inputs.push_back("c");
        }
        std::vector<onnx::AttributeProto> attributes;
        if (std::string(p.op) == "Gemm")
          attributes = {attr("transB", int64_t{p.trans_b}), attr("alpha", p.alpha), attr("beta", p.beta)};
        m.node(p.op, inputs, {"y"}, attributes).output("y");
        return m.model();
      };
      // The exact product of the grid values, and the sum of its terms' magnitudes.
      const int64_t rows = a.values.elements() / inner;
      std::vector<double> exact, magnitude;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = has_c
              ? double{p.beta} * c.values<float>()[p.c_shape.size() == 2 && p.c_shape[0] > 1 ? i * n + j : j]
              : 0.0;
          double total = std::fabs(sum);
          for (int64_t k = 0; k < inner; ++k) {
            const double term =
                double{p.alpha} * a.values.values<float>()[i * inner + k] * b_nk.values.values<float>()[j * inner + k];
            sum += term;
            total += std::fabs(term);
          }
          exact.push_back(sum);
          magnitude.push_back(total);
        }
      Tensor moved = a.values.clone();
      std::uniform_real_distribution<float> move(-0.3f, 0.3f);
      for (float& v : moved.values<float>()) v += move(rng) * a.grid.scale[0];
      for (const std::size_t threads : {std::size_t{1}, test_threads(2)}) {
        CAPTURE(threads);
        Graph annotated(model());
        annotated.set_integer_grid(*annotated.find("a"), a.grid);
        annotated.set_integer_grid(*annotated.find("b"), b_grid);
        Session integer(std::move(annotated), {.threads = threads});
        Session floats(model(), {.threads = threads});
        const Tensor got = integer.run(std::vector{moved.clone()})[0];
        const Tensor on_floats = floats.run(std::vector{moved.clone()})[0];
        if (!int8_conv_available() || !p.integers) {
          CHECK(std::memcmp(got.raw(), on_floats.raw(), got.bytes()) == 0);
          continue;
        }
        const auto g = got.values<float>();
        REQUIRE(g.size() == exact.size());
        int off = 0;
        for (std::size_t i = 0; i < g.size(); ++i) off += std::fabs(g[i] - exact[i]) > 0x1p-21 * magnitude[i] + 1e-30;
        CHECK(off == 0);
      }
    }
  }
}
