// Elementwise, normalization, pooling, matrix and softmax operators against hand-computed
// values and naive loops.

#include "engine_test_model.hpp"
#include "gemm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

// y = op(a, b) on two graph inputs.
Tensor binary(const std::string& op, const Tensor& a, const Tensor& b, int64_t opset = 13) {
  ModelBuilder m(opset);
  m.input("a", a.dtype(), a.shape()).input("b", b.dtype(), b.shape()).output("y").node(op, {"a", "b"}, {"y"});
  return run_one(m.model(), {a, b});
}

Tensor unary(const std::string& op, const Tensor& x, std::vector<onnx::AttributeProto> attrs = {}, int64_t opset = 13) {
  ModelBuilder m(opset);
  m.input("x", x.dtype(), x.shape()).output("y").node(op, {"x"}, {"y"}, std::move(attrs));
  return run_one(m.model(), {x});
}

}  // namespace

TEST_SUITE("engine.ops") {
  TEST_CASE("Add, Sub, Mul, Div broadcast like numpy") {
    const auto a = random_tensor({2, 3, 4}, 1);
    const auto b = random_tensor({3, 1}, 2, 0.5f, 2.0f);
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      const Tensor y = binary(op, a, b);
      REQUIRE(y.shape() == std::vector<int64_t>{2, 3, 4});
      const auto av = a.values<float>();
      const auto bv = b.values<float>();
      for (int64_t i = 0; i < 24; ++i) {
        const float x = av[static_cast<std::size_t>(i)];
        const float z = bv[static_cast<std::size_t>((i / 4) % 3)];
        const std::string name = op;
        const float want = name == "Add" ? x + z : name == "Sub" ? x - z : name == "Mul" ? x * z : x / z;
        CHECK(y.values<float>()[static_cast<std::size_t>(i)] == doctest::Approx(want));
      }
    }
    // scalar on the left, both directions of broadcasting at once
    const Tensor s = binary("Sub", Tensor::scalar<float>(10.0f), Tensor::from<float>({1, 2}, {1, 2}));
    CHECK(s.shape() == std::vector<int64_t>{1, 2});
    CHECK(s.values<float>()[1] == 8.0f);
    const Tensor outer = binary("Mul", Tensor::from<float>({3, 1}, {1, 2, 3}), Tensor::from<float>({1, 2}, {10, 100}));
    CHECK(outer.values<float>()[5] == 300.0f);
  }

  TEST_CASE("integer arithmetic wraps, divides toward zero and gives 0 on division by zero") {
    const auto a = Tensor::from<int32_t>({4}, {std::numeric_limits<int32_t>::max(), -7, 7, 5});
    const auto b = Tensor::from<int32_t>({4}, {1, 2, -2, 0});
    CHECK(binary("Add", a, b).values<int32_t>()[0] == std::numeric_limits<int32_t>::min());
    const Tensor d = binary("Div", a, b);
    CHECK(d.values<int32_t>()[1] == -3);
    CHECK(d.values<int32_t>()[2] == -3);
    CHECK(d.values<int32_t>()[3] == 0);
    const auto i8 = binary("Mul", Tensor::from<int8_t>({2}, {100, -3}), Tensor::from<int8_t>({1}, {2}));
    CHECK(i8.values<int8_t>()[0] == -56);
    CHECK(i8.values<int8_t>()[1] == -6);
    const auto i64 = binary("Sub", Tensor::from<int64_t>({2}, {5, 6}), Tensor::scalar<int64_t>(10));
    CHECK(i64.values<int64_t>()[1] == -4);
    const auto u8 = binary("Add", Tensor::from<uint8_t>({1}, {250}), Tensor::from<uint8_t>({1}, {10}));
    CHECK(u8.values<uint8_t>()[0] == 4);
  }

  TEST_CASE("mismatched element types and shapes are errors naming the inputs") {
    const std::string types = error_of([] {
      binary("Add", Tensor::from<float>({2}, {1, 2}), Tensor::from<int32_t>({2}, {1, 2}));
    });
    CHECK(types.find("(Add): inputs 'a' and 'b' have element types float32 and int32") != std::string::npos);
    const std::string shapes = error_of([] {
      binary("Mul", Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::from<float>({2}, {1, 2}));
    });
    CHECK(shapes.find("(Mul): inputs 'a', 'b': shapes [2, 3] and [2] cannot be broadcast together") !=
          std::string::npos);
    CHECK(error_of([] {
            unary("Sigmoid", Tensor::from<int32_t>({1}, {1}));
          }).find("input 0 has element type int32, expected float32") != std::string::npos);
  }

  TEST_CASE("Pow with float and integer exponents") {
    const auto x = Tensor::from<float>({3}, {2, 9, 3});
    CHECK(binary("Pow", x, Tensor::scalar<float>(2.0f)).values<float>()[2] == 9.0f);
    CHECK(binary("Pow", x, Tensor::scalar<float>(0.5f)).values<float>()[1] == 3.0f);
    CHECK(binary("Pow", x, Tensor::from<int64_t>({3}, {3, 0, 1})).values<float>()[0] == 8.0f);
    CHECK(binary("Pow", x, Tensor::scalar<float>(1.5f)).values<float>()[0] == doctest::Approx(std::pow(2.0f, 1.5f)));
    CHECK(binary("Pow", Tensor::from<int32_t>({2}, {3, -2}), Tensor::from<int32_t>({2}, {4, 3})).values<int32_t>()[1] ==
          -8);
  }

  TEST_CASE("unary activations match their definitions") {
    const auto x = random_tensor({257}, 5, -4.0f, 4.0f);
    const auto xs = x.values<float>();
    auto check = [&](const Tensor& y, auto f) {
      for (std::size_t i = 0; i < xs.size(); ++i) {
        REQUIRE(y.values<float>()[i] == doctest::Approx(f(xs[i])).epsilon(1e-5));
      }
    };
    check(unary("Relu", x), [](float v) { return std::max(v, 0.0f); });
    check(unary("Sigmoid", x), [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
    check(unary("Tanh", x), [](float v) { return std::tanh(v); });
    check(unary("Erf", x), [](float v) { return std::erf(v); });
    check(unary("Exp", x), [](float v) { return std::exp(v); });
    check(unary("LeakyRelu", x, {attr("alpha", 0.1f)}), [](float v) { return v < 0 ? 0.1f * v : v; });
    check(unary("LeakyRelu", x), [](float v) { return v < 0 ? 0.01f * v : v; });
    check(unary("HardSigmoid", x), [](float v) { return std::clamp(0.2f * v + 0.5f, 0.0f, 1.0f); });
    check(unary("HardSigmoid", x, {attr("alpha", 0.25f), attr("beta", 0.4f)}),
          [](float v) { return std::clamp(0.25f * v + 0.4f, 0.0f, 1.0f); });
    check(unary("HardSwish", x, {}, 14), [](float v) { return v * std::clamp(v / 6.0f + 0.5f, 0.0f, 1.0f); });
    const auto pos = random_tensor({64}, 6, 0.1f, 9.0f);
    const auto ps = pos.values<float>();
    const Tensor sq = unary("Sqrt", pos);
    const Tensor lg = unary("Log", pos);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      CHECK(sq.values<float>()[i] == doctest::Approx(std::sqrt(ps[i])));
      CHECK(lg.values<float>()[i] == doctest::Approx(std::log(ps[i])));
    }
    CHECK(unary("Relu", Tensor::from<int32_t>({2}, {-5, 5}), {}, 14).values<int32_t>()[0] == 0);
  }

  TEST_CASE("Clip takes attributes before opset 11 and inputs from opset 11") {
    const auto x = Tensor::from<float>({4}, {-3, -0.5f, 0.5f, 8});
    const Tensor c6 = unary("Clip", x, {attr("min", -1.0f), attr("max", 6.0f)}, 9);
    CHECK(c6.values<float>()[0] == -1.0f);
    CHECK(c6.values<float>()[3] == 6.0f);
    const Tensor only_max = unary("Clip", x, {attr("max", 0.0f)}, 10);
    CHECK(only_max.values<float>()[0] == -3.0f);
    CHECK(only_max.values<float>()[2] == 0.0f);

    ModelBuilder m(13);
    m.input("x", DataType::float32, {4})
        .initializer("hi", Tensor::scalar<float>(1.0f))
        .output("y")
        .node("Clip", {"x", "", "hi"}, {"y"});
    const Tensor c13 = run_one(m.model(), {x});
    CHECK(c13.values<float>()[0] == -3.0f);
    CHECK(c13.values<float>()[3] == 1.0f);
    // bounds fed at run time
    ModelBuilder d(12);
    d.input("x", DataType::int32, {3}).input("lo", DataType::int32, {}).output("y").node("Clip", {"x", "lo"}, {"y"});
    const Tensor ci = run_one(d.model(), {Tensor::from<int32_t>({3}, {-9, 0, 9}), Tensor::scalar<int32_t>(-2)});
    CHECK(ci.values<int32_t>()[0] == -2);
    CHECK(ci.values<int32_t>()[2] == 9);
  }

  TEST_CASE("PRelu broadcasts the slope to the input") {
    const auto x = Tensor::from<float>({1, 2, 2}, {-1, 2, -3, 4});
    const Tensor y = binary("PRelu", x, Tensor::from<float>({2, 1}, {0.5f, 0.25f}));
    CHECK(y.values<float>()[0] == -0.5f);
    CHECK(y.values<float>()[1] == 2.0f);
    CHECK(y.values<float>()[2] == -0.75f);
    CHECK(error_of([&] {
            binary("PRelu", Tensor::from<float>({2}, {1, 2}), Tensor::from<float>({2, 2}, {1, 2, 3, 4}));
          }).find("does not broadcast to the input shape [2]") != std::string::npos);
  }

  TEST_CASE("BatchNormalization normalizes per channel") {
    ModelBuilder m(9);
    const auto x = random_tensor({2, 3, 2, 2}, 7);
    const auto scale = Tensor::from<float>({3}, {1, 2, 0.5f});
    const auto bias = Tensor::from<float>({3}, {0, 1, -1});
    const auto mean = Tensor::from<float>({3}, {0.1f, -0.2f, 0.3f});
    const auto var = Tensor::from<float>({3}, {1, 4, 0.25f});
    m.input("x", DataType::float32, {2, 3, 2, 2})
        .initializer("s", scale)
        .initializer("b", bias)
        .initializer("m", mean)
        .initializer("v", var)
        .output("y")
        .node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {attr("epsilon", 1e-3f)});
    const Tensor y = run_one(m.model(), {x});
    for (int64_t i = 0; i < 24; ++i) {
      const auto c = static_cast<std::size_t>((i / 4) % 3);
      const float want = (x.values<float>()[static_cast<std::size_t>(i)] - mean.values<float>()[c]) /
              std::sqrt(var.values<float>()[c] + 1e-3f) * scale.values<float>()[c] +
          bias.values<float>()[c];
      CHECK(y.values<float>()[static_cast<std::size_t>(i)] == doctest::Approx(want));
    }
  }

  TEST_CASE("MaxPool and AveragePool: pads, strides, ceil_mode, count_include_pad") {
    // 1x1x4x4 input 0..15
    std::vector<float> v(16);
    std::iota(v.begin(), v.end(), 0.0f);
    const auto x = Tensor::from<float>({1, 1, 4, 4}, std::span<const float>(v));
    const Tensor mp = unary(
        "MaxPool", x, {attr("kernel_shape", std::vector<int64_t>{2, 2}), attr("strides", std::vector<int64_t>{2, 2})});
    CHECK(mp.shape() == std::vector<int64_t>{1, 1, 2, 2});
    CHECK(mp.values<float>()[0] == 5.0f);
    CHECK(mp.values<float>()[3] == 15.0f);
    // ceil_mode: 3x3 windows, stride 2 over 4 -> 2 outputs (the second window is partial)
    const Tensor mc = unary("MaxPool", x,
                            {attr("kernel_shape", std::vector<int64_t>{3, 3}),
                             attr("strides", std::vector<int64_t>{2, 2}), attr("ceil_mode", int64_t{1})});
    CHECK(mc.shape() == std::vector<int64_t>{1, 1, 2, 2});
    CHECK(mc.values<float>()[3] == 15.0f);
    const Tensor mf = unary(
        "MaxPool", x, {attr("kernel_shape", std::vector<int64_t>{3, 3}), attr("strides", std::vector<int64_t>{2, 2})});
    CHECK(mf.shape() == std::vector<int64_t>{1, 1, 1, 1});
    // padded average: corner window covers 0,1,4,5 of a padded 3x3
    const std::vector<onnx::AttributeProto> avg{attr("kernel_shape", std::vector<int64_t>{3, 3}),
                                                attr("pads", std::vector<int64_t>{1, 1, 1, 1})};
    const Tensor ap = unary("AveragePool", x, avg);
    CHECK(ap.shape() == std::vector<int64_t>{1, 1, 4, 4});
    CHECK(ap.values<float>()[0] == doctest::Approx((0 + 1 + 4 + 5) / 4.0f));
    auto with_pad = avg;
    with_pad.push_back(attr("count_include_pad", int64_t{1}));
    CHECK(unary("AveragePool", x, with_pad).values<float>()[0] == doctest::Approx((0 + 1 + 4 + 5) / 9.0f));
    CHECK(unary("AveragePool", x, with_pad).values<float>()[5] == doctest::Approx(5.0f));
    // ceil_mode average over a partial window divides by the part inside the input
    const Tensor ac = unary("AveragePool", x,
                            {attr("kernel_shape", std::vector<int64_t>{3, 3}),
                             attr("strides", std::vector<int64_t>{2, 2}), attr("ceil_mode", int64_t{1})});
    CHECK(ac.values<float>()[3] == doctest::Approx((10 + 11 + 14 + 15) / 4.0f));
    // SAME_UPPER
    const Tensor same =
        unary("MaxPool", x, {attr("kernel_shape", std::vector<int64_t>{2, 2}), attr("auto_pad", "SAME_UPPER")});
    CHECK(same.shape() == std::vector<int64_t>{1, 1, 4, 4});
    CHECK(same.values<float>()[15] == 15.0f);
    CHECK(same.values<float>()[0] == 5.0f);
    CHECK(error_of([&] { unary("MaxPool", x, {}); }).find("'kernel_shape' is required") != std::string::npos);
  }

  TEST_CASE("MaxPool on uint8 and with the Indices output") {
    const auto u = Tensor::from<uint8_t>({1, 1, 2, 2}, {3, 250, 7, 1});
    const Tensor mu = unary("MaxPool", u, {attr("kernel_shape", std::vector<int64_t>{2, 2})}, 12);
    CHECK(mu.values<uint8_t>()[0] == 250);
    ModelBuilder m(12);
    m.input("x", DataType::float32, {2, 1, 2, 3})
        .output("y")
        .output("i")
        .node("MaxPool", {"x"}, {"y", "i"}, {attr("kernel_shape", std::vector<int64_t>{2, 2})});
    Session s(m.model());
    const auto out = s.run(std::vector{Tensor::from<float>({2, 1, 2, 3}, {1, 9, 2, 3, 4, 5, 6, 0, 0, 0, 7, 8})});
    CHECK(out[0].values<float>()[0] == 9.0f);
    CHECK(out[1].values<int64_t>()[0] == 1);
    CHECK(out[1].values<int64_t>()[1] == 1);
    CHECK(out[0].values<float>()[3] == 8.0f);
    CHECK(out[1].values<int64_t>()[3] == 6 + 5);  // second image, h 1, w 2
  }

  // MaxPool without the Indices output clips each window to the input once per row and column
  // (no per-element bounds test); with it, it keeps the general loop. Both agree on Y, and with
  // the definition, over pads, strides, dilations and ceil_mode.
  TEST_CASE("MaxPool without Indices agrees with the indexed path and the definition") {
    struct Geometry {
      int64_t h, w, k, s, d, pad, ceil;
    };
    for (const Geometry t :
         {Geometry{112, 112, 3, 2, 1, 1, 0}, Geometry{9, 10, 3, 2, 1, 1, 1}, Geometry{8, 11, 2, 1, 2, 1, 0},
          Geometry{7, 7, 3, 3, 1, 2, 1}, Geometry{5, 6, 5, 1, 1, 2, 0}}) {
      CAPTURE(t.h);
      CAPTURE(t.k);
      const auto x = random_tensor({1, 3, t.h, t.w}, 70);
      const std::vector<onnx::AttributeProto> attrs{
          attr("kernel_shape", std::vector<int64_t>{t.k, t.k}), attr("strides", std::vector<int64_t>{t.s, t.s}),
          attr("dilations", std::vector<int64_t>{t.d, t.d}),
          attr("pads", std::vector<int64_t>{t.pad, t.pad, t.pad, t.pad}), attr("ceil_mode", t.ceil)};
      const Tensor fast = unary("MaxPool", x, attrs, 12);
      ModelBuilder m(12);
      m.input("x", DataType::float32, {1, 3, t.h, t.w})
          .output("y")
          .output("i")
          .node("MaxPool", {"x"}, {"y", "i"}, attrs);
      const auto indexed = Session(m.model()).run(std::vector{x});
      REQUIRE(fast.shape() == indexed[0].shape());
      const int64_t oh = fast.dim(2), ow = fast.dim(3);
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            float want = std::numeric_limits<float>::lowest();
            for (int64_t ki = 0; ki < t.k; ++ki)
              for (int64_t kj = 0; kj < t.k; ++kj) {
                const int64_t ih = i * t.s - t.pad + ki * t.d, iw = j * t.s - t.pad + kj * t.d;
                if (ih >= 0 && ih < t.h && iw >= 0 && iw < t.w)
                  want = std::max(want, x.values<float>()[(c * t.h + ih) * t.w + iw]);
              }
            const auto at = static_cast<std::size_t>((c * oh + i) * ow + j);
            CHECK(fast.values<float>()[at] == want);
            CHECK(indexed[0].values<float>()[at] == want);
          }
    }
  }

  TEST_CASE("Neg and Abs on integers, Pow with mixed types") {
    CHECK(unary("Neg", Tensor::from<int64_t>({2}, {5, -7})).values<int64_t>()[1] == 7);
    CHECK(unary("Abs", Tensor::from<int32_t>({2}, {5, -7})).values<int32_t>()[1] == 7);
    CHECK(binary("Pow", Tensor::from<int64_t>({2}, {3, 2}), Tensor::from<float>({2}, {2.0f, 0.5f}))
              .values<int64_t>()[0] == 9);
  }

  TEST_CASE("GlobalAveragePool averages each plane") {
    const auto x = random_tensor({2, 3, 5, 7}, 9);
    const Tensor y = unary("GlobalAveragePool", x);
    CHECK(y.shape() == std::vector<int64_t>{2, 3, 1, 1});
    for (std::size_t c = 0; c < 6; ++c) {
      float sum = 0;
      for (std::size_t i = 0; i < 35; ++i) {
        sum += x.values<float>()[c * 35 + i];
      }
      CHECK(y.values<float>()[c] == doctest::Approx(sum / 35.0f));
    }
  }

  TEST_CASE("MatMul: batched, broadcast batches, 1-D operands") {
    auto reference = [](const Tensor& a, const Tensor& b, int64_t batch_a, int64_t batch_b, int64_t m, int64_t k,
                        int64_t n) {
      const int64_t batches = std::max(batch_a, batch_b);
      std::vector<float> y(static_cast<std::size_t>(batches * m * n));
      for (int64_t t = 0; t < batches; ++t) {
        naive_gemm(false, false, m, n, k, 1.0f, a.data<float>() + (batch_a == 1 ? 0 : t) * m * k, k,
                   b.data<float>() + (batch_b == 1 ? 0 : t) * k * n, n, 0.0f, y.data() + t * m * n, n);
      }
      return y;
    };
    const auto a = random_tensor({3, 4, 5}, 10);
    const auto b = random_tensor({3, 5, 6}, 11);
    const auto b2 = random_tensor({5, 6}, 12);
    const auto b1 = random_tensor({1, 5, 6}, 13);
    Tensor y = binary("MatMul", a, b);
    CHECK(y.shape() == std::vector<int64_t>{3, 4, 6});
    check_close(y, Tensor::from<float>({3, 4, 6}, std::span<const float>(reference(a, b, 3, 3, 4, 5, 6))));
    check_close(binary("MatMul", a, b2),
                Tensor::from<float>({3, 4, 6}, std::span<const float>(reference(a, b2, 3, 1, 4, 5, 6))));
    check_close(binary("MatMul", a, b1),
                Tensor::from<float>({3, 4, 6}, std::span<const float>(reference(a, b1, 3, 1, 4, 5, 6))));
    const auto a1 = random_tensor({1, 4, 5}, 14);
    check_close(binary("MatMul", a1, b),
                Tensor::from<float>({3, 4, 6}, std::span<const float>(reference(a1, b, 1, 3, 4, 5, 6))));
    // vector x matrix and matrix x vector drop the promoted dimension
    const auto v = random_tensor({5}, 15);
    CHECK(binary("MatMul", v, b2).shape() == std::vector<int64_t>{6});
    CHECK(binary("MatMul", a, v).shape() == std::vector<int64_t>{3, 4});
    CHECK(binary("MatMul", v, v).shape().empty());
    CHECK(error_of([&] { binary("MatMul", a, a); }).find("cannot be multiplied: 5 columns against 4 rows") !=
          std::string::npos);
  }

  TEST_CASE("Gemm: alpha, beta, transposes and C broadcast") {
    const auto a = random_tensor({6, 4}, 20);  // transA: [K=6, M=4]
    const auto b = random_tensor({5, 6}, 21);  // transB: [N=5, K=6]
    for (const auto& c :
         {random_tensor({5}, 22), random_tensor({4, 1}, 23), random_tensor({4, 5}, 24), Tensor::scalar<float>(0.5f)}) {
      ModelBuilder m(13);
      m.input("a", DataType::float32, {6, 4})
          .initializer("b", b)
          .initializer("c", c)
          .output("y")
          .node("Gemm", {"a", "b", "c"}, {"y"},
                {attr("transA", int64_t{1}), attr("transB", int64_t{1}), attr("alpha", 0.5f), attr("beta", 2.0f)});
      const Tensor y = run_one(m.model(), {a});
      REQUIRE(y.shape() == std::vector<int64_t>{4, 5});
      std::vector<float> want(20);
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 5; ++j) {
          const auto& cs = c.shape();
          const int64_t ci =
              cs.size() == 2 ? (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j) : (cs.empty() ? 0 : j);
          want[static_cast<std::size_t>(i * 5 + j)] = 2.0f * c.values<float>()[static_cast<std::size_t>(ci)];
        }
      }
      naive_gemm(true, true, 4, 5, 6, 0.5f, a.data<float>(), 4, b.data<float>(), 6, 1.0f, want.data(), 5);
      check_close(y, Tensor::from<float>({4, 5}, std::span<const float>(want)));
    }
    // no C (opset 11+)
    ModelBuilder m(11);
    m.input("a", DataType::float32, {4, 6})
        .input("b", DataType::float32, {6, 5})
        .output("y")
        .node("Gemm", {"a", "b"}, {"y"});
    const auto a2 = random_tensor({4, 6}, 25);
    const auto b2 = random_tensor({6, 5}, 26);
    std::vector<float> want(20);
    naive_gemm(false, false, 4, 5, 6, 1.0f, a2.data<float>(), 6, b2.data<float>(), 5, 0.0f, want.data(), 5);
    check_close(run_one(m.model(), {a2, b2}), Tensor::from<float>({4, 5}, std::span<const float>(want)));
  }

  TEST_CASE("Softmax: flatten-to-2-D before opset 13, one axis from opset 13") {
    const auto x = random_tensor({2, 3, 4}, 30, -3.0f, 3.0f);
    const auto xs = x.values<float>();
    // opset 11, axis 1: softmax over rows of 12
    const Tensor y11 = unary("Softmax", x, {}, 11);
    for (std::size_t r = 0; r < 2; ++r) {
      float sum = 0;
      for (std::size_t i = 0; i < 12; ++i) sum += std::exp(xs[r * 12 + i]);
      for (std::size_t i = 0; i < 12; ++i) {
        CHECK(y11.values<float>()[r * 12 + i] == doctest::Approx(std::exp(xs[r * 12 + i]) / sum));
      }
    }
    // opset 13, axis 1: softmax over the 3 entries of each (n, ., w)
    const Tensor y13 = unary("Softmax", x, {attr("axis", int64_t{1})}, 13);
    for (std::size_t n = 0; n < 2; ++n) {
      for (std::size_t w = 0; w < 4; ++w) {
        float sum = 0;
        for (std::size_t c = 0; c < 3; ++c) sum += std::exp(xs[n * 12 + c * 4 + w]);
        for (std::size_t c = 0; c < 3; ++c) {
          CHECK(y13.values<float>()[n * 12 + c * 4 + w] == doctest::Approx(std::exp(xs[n * 12 + c * 4 + w]) / sum));
        }
      }
    }
    // default axis -1 at opset 13
    const Tensor last = unary("Softmax", x, {}, 13);
    float row = 0;
    for (std::size_t i = 0; i < 4; ++i) row += last.values<float>()[i];
    CHECK(row == doctest::Approx(1.0f));
    CHECK(error_of([&] { unary("Softmax", x, {attr("axis", int64_t{3})}, 13); }).find("axis 3 is out of range") !=
          std::string::npos);
  }

  // Softmax over many classes with one dominant (the PaddleOCR recogniser: 6625 classes, p ~ 0.997):
  // a float sum rounds each small term against the 1 of the maximum and drifts by ~6e-5; the
  // engine sums in double and stays within float precision of the exact result.
  TEST_CASE("Softmax over thousands of classes is exact to float precision") {
    const int64_t classes = 6625;
    Tensor x = random_tensor({2, classes}, 80, -18.0f, -12.0f);
    x.values<float>()[17] = 0.0f;               // dominant in line 0
    x.values<float>()[classes + 4000] = -9.0f;  // line 1: a milder maximum
    for (const int opset : {11, 13}) {
      CAPTURE(opset);
      const Tensor y = unary("Softmax", x, {}, opset);
      for (int64_t line = 0; line < 2; ++line) {
        const float* z = x.values<float>().data() + line * classes;
        const double max = *std::max_element(z, z + classes);
        double sum = 0;
        for (int64_t i = 0; i < classes; ++i) sum += std::exp(double(z[i]) - max);
        double worst = 0;
        for (int64_t i = 0; i < classes; ++i)
          worst = std::max(
              worst, std::abs(double(y.values<float>()[line * classes + i]) - std::exp(double(z[i]) - max) / sum));
        CHECK(worst < 1e-6);
      }
    }
  }

  TEST_CASE("GlobalAveragePool over a large plane is exact to float precision") {
    const auto x = random_tensor({1, 2, 160, 160}, 81, 0.0f, 2.0f);
    const Tensor y = unary("GlobalAveragePool", x);
    for (int64_t c = 0; c < 2; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < 160 * 160; ++i) sum += x.values<float>()[c * 160 * 160 + i];
      CHECK(std::abs(double(y.values<float>()[c]) - sum / (160 * 160)) <= 2e-7);
    }
  }
}
