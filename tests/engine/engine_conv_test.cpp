// Conv and ConvTranspose against naive loops over many geometries, and the fusion of
// BatchNormalization and Relu/Clip into Conv.

#include "engine_test_model.hpp"

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

struct ConvCase {
  int64_t n = 1, c = 3, h = 7, w = 6, m = 4, group = 1, kh = 3, kw = 3;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool bias = true;
};

// Direct definition of Conv: y[n, m, oh, ow] = b[m] + sum x[n, c, oh*s - p + k*d, ...] * w[m, c', kh, kw].
Tensor naive_conv(const ConvCase& p, const Tensor& x, const Tensor& w, const Tensor* b) {
  const int64_t oh_n = (p.h + p.pt + p.pb - ((p.kh - 1) * p.dh + 1)) / p.sh + 1;
  const int64_t ow_n = (p.w + p.pl + p.pr - ((p.kw - 1) * p.dw + 1)) / p.sw + 1;
  Tensor y(DataType::float32, {p.n, p.m, oh_n, ow_n});
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  float* yd = y.data<float>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double sum = b != nullptr ? b->data<float>()[m] : 0.0f;
          const int64_t g = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) {
                const int64_t ih = oh * p.sh - p.pt + i * p.dh;
                const int64_t iw = ow * p.sw - p.pl + j * p.dw;
                if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                sum += static_cast<double>(xd[((n * p.c + g * cg + c) * p.h + ih) * p.w + iw]) *
                    wd[((m * cg + c) * p.kh + i) * p.kw + j];
              }
          yd[((n * p.m + m) * oh_n + oh) * ow_n + ow] = static_cast<float>(sum);
        }
  return y;
}

onnx::ModelProto conv_model(const ConvCase& p, const Tensor& w, const Tensor& b,
                            std::vector<onnx::AttributeProto> extra = {}) {
  ModelBuilder m(11);
  std::vector<onnx::AttributeProto> attrs{attr("strides", std::vector<int64_t>{p.sh, p.sw}),
                                          attr("dilations", std::vector<int64_t>{p.dh, p.dw}), attr("group", p.group)};
  if (extra.empty()) {
    attrs.push_back(attr("pads", std::vector<int64_t>{p.pt, p.pl, p.pb, p.pr}));
  }
  for (auto& a : extra) attrs.push_back(a);
  m.input("x", DataType::float32, {p.n, p.c, p.h, p.w}).initializer("w", w).output("y");
  if (p.bias) {
    m.initializer("b", b).node("Conv", {"x", "w", "b"}, {"y"}, attrs, "conv");
  } else {
    m.node("Conv", {"x", "w"}, {"y"}, attrs, "conv");
  }
  return m.model();
}

void check_conv(const ConvCase& p, std::size_t threads = 2) {
  const auto x = random_tensor({p.n, p.c, p.h, p.w}, 1);
  const auto w = random_tensor({p.m, p.c / p.group, p.kh, p.kw}, 2);
  const auto b = random_tensor({p.m}, 3);
  const Tensor y = run_one(conv_model(p, w, b), {x}, {.threads = threads});
  check_close(y, naive_conv(p, x, w, p.bias ? &b : nullptr));
}

}  // namespace

TEST_SUITE("engine.conv") {
  TEST_CASE("Conv matches the definition: im2col, pointwise and depthwise paths") {
    SUBCASE("3x3, pads, strides") { check_conv({.pt = 1, .pl = 1, .pb = 1, .pr = 1}); }
    SUBCASE("asymmetric pads and strides") {
      check_conv({.h = 9, .w = 8, .sh = 2, .sw = 3, .pt = 0, .pl = 2, .pb = 1, .pr = 0});
    }
    SUBCASE("dilation") { check_conv({.h = 10, .w = 11, .dh = 2, .dw = 3, .pt = 2, .pl = 1, .pb = 2, .pr = 3}); }
    SUBCASE("groups") { check_conv({.n = 2, .c = 6, .m = 4, .group = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1}); }
    SUBCASE("pointwise 1x1") { check_conv({.n = 2, .c = 5, .h = 9, .w = 9, .m = 7, .kh = 1, .kw = 1}); }
    SUBCASE("1x1 with stride") {
      check_conv({.c = 5, .h = 9, .w = 9, .m = 7, .kh = 1, .kw = 1, .sh = 2, .sw = 2, .bias = false});
    }
    SUBCASE("depthwise") {
      check_conv({.n = 2, .c = 8, .h = 11, .w = 13, .m = 8, .group = 8, .pt = 1, .pl = 1, .pb = 1, .pr = 1});
    }
    SUBCASE("depthwise, stride 2, multiplier 2") {
      check_conv({.c = 4,
                  .h = 12,
                  .w = 12,
                  .m = 8,
                  .group = 4,
                  .kh = 5,
                  .kw = 5,
                  .sh = 2,
                  .sw = 2,
                  .pt = 2,
                  .pl = 2,
                  .pb = 2,
                  .pr = 2});
    }
    SUBCASE("depthwise with dilation") {
      check_conv({.c = 3, .h = 9, .w = 9, .m = 3, .group = 3, .dh = 2, .dw = 2, .pt = 2, .pl = 2, .pb = 2, .pr = 2});
    }
    SUBCASE("large enough for several tiles") {
      check_conv({.n = 1, .c = 16, .h = 40, .w = 37, .m = 24, .pt = 1, .pl = 1, .pb = 1, .pr = 1}, 3);
    }
    SUBCASE("single thread") { check_conv({.c = 16, .h = 20, .w = 20, .m = 8, .pt = 1, .pl = 1, .pb = 1, .pr = 1}, 1); }
  }

  // The depthwise kernel computes the interior of each row in vector blocks (8 outputs at stride 1,
  // 4 when strided), their remainder one by one and the padded borders with bounds checks: rows
  // wide enough for several blocks and a tail, at every stride and dilation the models use.
  TEST_CASE("depthwise Conv on wide rows: vector blocks, tails and borders") {
    SUBCASE("3x3 stride 1 (mobilenet)") {
      check_conv({.c = 5, .h = 6, .w = 29, .m = 5, .group = 5, .pt = 1, .pl = 1, .pb = 1, .pr = 1});
    }
    SUBCASE("3x3 stride 2") {
      check_conv({.c = 4, .h = 9, .w = 37, .m = 4, .group = 4, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1});
    }
    SUBCASE("5x5 asymmetric pads, multiplier 2") {
      check_conv({.c = 3, .h = 8, .w = 41, .m = 6, .group = 3, .kh = 5, .kw = 5, .pt = 2, .pl = 3, .pb = 1, .pr = 0});
    }
    SUBCASE("stride 3, dilation 2, no bias") {
      check_conv({.c = 2,
                  .h = 11,
                  .w = 50,
                  .m = 2,
                  .group = 2,
                  .sw = 3,
                  .dh = 2,
                  .dw = 2,
                  .pt = 2,
                  .pl = 2,
                  .pb = 2,
                  .pr = 2,
                  .bias = false});
    }
    SUBCASE("kernel wider than the row") {
      check_conv({.c = 2, .h = 4, .w = 3, .m = 2, .group = 2, .kh = 1, .kw = 5, .pl = 2, .pr = 2});
    }
    SUBCASE("fused Clip applies to blocks and borders") {
      const ConvCase p{.c = 4, .h = 5, .w = 27, .m = 4, .group = 4, .pt = 1, .pl = 1, .pb = 1, .pr = 1};
      const auto x = random_tensor({1, 4, 5, 27}, 61);
      const auto w = random_tensor({4, 1, 3, 3}, 62);
      const auto b = random_tensor({4}, 63);
      ModelBuilder m(9);  // Clip's bounds are attributes before opset 11
      m.input("x", DataType::float32, {1, 4, 5, 27})
          .initializer("w", w)
          .initializer("b", b)
          .output("y")
          .node("Conv", {"x", "w", "b"}, {"c"},
                {attr("group", int64_t{4}), attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
          .node("Clip", {"c"}, {"y"}, {attr("min", -0.3f), attr("max", 0.4f)});
      Session fused(m.model());
      CHECK(fused.graph().nodes().size() == 1);
      Tensor want = naive_conv(p, x, w, &b);
      for (float& v : want.values<float>()) v = std::min(std::max(v, -0.3f), 0.4f);
      check_close(fused.run(std::vector{x})[0], want);
    }
  }

  TEST_CASE("Conv auto_pad SAME_UPPER, SAME_LOWER and VALID") {
    const ConvCase base{.h = 7, .w = 8, .kh = 4, .kw = 3, .sh = 2, .sw = 2};
    const auto x = random_tensor({1, 3, 7, 8}, 4);
    const auto w = random_tensor({4, 3, 4, 3}, 5);
    const auto b = random_tensor({4}, 6);
    // out = ceil(in / stride) = 4, 4; total pad h = (4-1)*2 + 4 - 7 = 3, w = (4-1)*2 + 3 - 8 = 1
    ConvCase upper = base;
    upper.pt = 1;
    upper.pb = 2;
    upper.pl = 0;
    upper.pr = 1;
    check_close(run_one(conv_model(base, w, b, {attr("auto_pad", "SAME_UPPER")}), {x}), naive_conv(upper, x, w, &b));
    ConvCase lower = base;
    lower.pt = 2;
    lower.pb = 1;
    lower.pl = 1;
    lower.pr = 0;
    check_close(run_one(conv_model(base, w, b, {attr("auto_pad", "SAME_LOWER")}), {x}), naive_conv(lower, x, w, &b));
    check_close(run_one(conv_model(base, w, b, {attr("auto_pad", "VALID")}), {x}), naive_conv(base, x, w, &b));
  }

  TEST_CASE("1-D Conv") {
    ModelBuilder m(13);
    const auto x = random_tensor({1, 2, 10}, 7);
    const auto w = random_tensor({3, 2, 3}, 8);
    m.input("x", DataType::float32, {1, 2, 10})
        .initializer("w", w)
        .output("y")
        .node("Conv", {"x", "w"}, {"y"}, {attr("pads", std::vector<int64_t>{1, 1})});
    const Tensor y = run_one(m.model(), {x});
    REQUIRE(y.shape() == std::vector<int64_t>{1, 3, 10});
    const ConvCase p{.c = 2, .h = 1, .w = 10, .m = 3, .kh = 1, .kw = 3, .pl = 1, .pr = 1, .bias = false};
    const auto x2 = Tensor::view(DataType::float32, {1, 2, 1, 10}, x.raw());
    const auto w2 = Tensor::view(DataType::float32, {3, 2, 1, 3}, w.raw());
    const Tensor want = naive_conv(p, x2, w2, nullptr);
    check_close(y, Tensor::view(DataType::float32, {1, 3, 10}, want.raw()));
  }

  TEST_CASE("Conv shape errors name the node and tensors") {
    const ConvCase p{};
    const auto w = random_tensor({4, 2, 3, 3}, 2);  // wrong input channels
    const auto b = random_tensor({4}, 3);
    Session s(conv_model(p, w, b));
    const std::string e = error_of([&] { s.run(std::vector{random_tensor({1, 3, 7, 6}, 1)}); });
    CHECK(e.find("node 'conv' (Conv): weights 'w' [4, 2, 3, 3] expect 2 input channels per group") !=
          std::string::npos);
  }

  TEST_CASE("ConvTranspose matches the scatter definition") {
    struct Case {
      int64_t c, m_per_group, group, h, w, kh, kw, s, d, pad, out_pad;
    };
    for (const Case& t : {Case{3, 2, 1, 4, 5, 3, 3, 2, 1, 1, 1}, Case{4, 3, 2, 5, 4, 2, 2, 2, 1, 0, 0},
                          Case{2, 2, 1, 3, 3, 3, 2, 1, 2, 0, 0}, Case{2, 1, 2, 6, 6, 4, 4, 2, 1, 1, 0}}) {
      const auto x = random_tensor({2, t.c, t.h, t.w}, 40);
      const auto w = random_tensor({t.c, t.m_per_group, t.kh, t.kw}, 41);
      const int64_t m = t.m_per_group * t.group;
      const auto b = random_tensor({m}, 42);
      const int64_t oh = t.s * (t.h - 1) + t.out_pad + (t.kh - 1) * t.d + 1 - 2 * t.pad;
      const int64_t ow = t.s * (t.w - 1) + t.out_pad + (t.kw - 1) * t.d + 1 - 2 * t.pad;
      Tensor want(DataType::float32, {2, m, oh, ow});
      const int64_t cg = t.c / t.group;
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t mm = 0; mm < m; ++mm)
          for (int64_t i = 0; i < oh * ow; ++i) want.data<float>()[(n * m + mm) * oh * ow + i] = b.data<float>()[mm];
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < t.c; ++c)
          for (int64_t ih = 0; ih < t.h; ++ih)
            for (int64_t iw = 0; iw < t.w; ++iw)
              for (int64_t mm = 0; mm < t.m_per_group; ++mm)
                for (int64_t ki = 0; ki < t.kh; ++ki)
                  for (int64_t kj = 0; kj < t.kw; ++kj) {
                    const int64_t y = ih * t.s - t.pad + ki * t.d;
                    const int64_t xw = iw * t.s - t.pad + kj * t.d;
                    if (y < 0 || y >= oh || xw < 0 || xw >= ow) continue;
                    const int64_t out_c = (c / cg) * t.m_per_group + mm;
                    want.data<float>()[((n * m + out_c) * oh + y) * ow + xw] +=
                        x.data<float>()[((n * t.c + c) * t.h + ih) * t.w + iw] *
                        w.data<float>()[((c * t.m_per_group + mm) * t.kh + ki) * t.kw + kj];
                  }
      ModelBuilder mb(11);
      mb.input("x", DataType::float32, {2, t.c, t.h, t.w})
          .initializer("w", w)
          .initializer("b", b)
          .output("y")
          .node("ConvTranspose", {"x", "w", "b"}, {"y"},
                {attr("strides", std::vector<int64_t>{t.s, t.s}), attr("dilations", std::vector<int64_t>{t.d, t.d}),
                 attr("pads", std::vector<int64_t>{t.pad, t.pad, t.pad, t.pad}), attr("group", t.group),
                 attr("output_padding", std::vector<int64_t>{t.out_pad, t.out_pad})});
      check_close(run_one(mb.model(), {x}, {.threads = 3}), want);
    }
  }

  TEST_CASE("ConvTranspose output_shape and SAME_UPPER choose the pads") {
    const auto x = random_tensor({1, 1, 3, 3}, 50);
    const auto w = random_tensor({1, 1, 3, 3}, 51);
    ModelBuilder a(11);
    a.input("x", DataType::float32, {1, 1, 3, 3})
        .initializer("w", w)
        .output("y")
        .node("ConvTranspose", {"x", "w"}, {"y"},
              {attr("strides", std::vector<int64_t>{2, 2}), attr("output_shape", std::vector<int64_t>{6, 6})});
    ModelBuilder b(11);
    b.input("x", DataType::float32, {1, 1, 3, 3})
        .initializer("w", w)
        .output("y")
        .node("ConvTranspose", {"x", "w"}, {"y"},
              {attr("strides", std::vector<int64_t>{2, 2}), attr("auto_pad", "SAME_UPPER")});
    // total padding = 2*(3-1) + 3 - 6 = 1: at the end for output_shape (NOTSET) ... as the ONNX reference
    ModelBuilder c(11);
    c.input("x", DataType::float32, {1, 1, 3, 3})
        .initializer("w", w)
        .output("y")
        .node("ConvTranspose", {"x", "w"}, {"y"},
              {attr("strides", std::vector<int64_t>{2, 2}), attr("pads", std::vector<int64_t>{0, 0, 1, 1})});
    const Tensor ya = run_one(a.model(), {x});
    const Tensor yb = run_one(b.model(), {x});
    const Tensor yc = run_one(c.model(), {x});
    CHECK(ya.shape() == std::vector<int64_t>{1, 1, 6, 6});
    // output_shape beyond what the input gives: negative total padding extends the end (ONNX reference)
    ModelBuilder d(11);
    d.input("x", DataType::float32, {1, 1, 3, 3})
        .initializer("w", w)
        .output("y")
        .node("ConvTranspose", {"x", "w"}, {"y"},
              {attr("strides", std::vector<int64_t>{3, 2}), attr("output_shape", std::vector<int64_t>{10, 8})});
    const Tensor yd = run_one(d.model(), {x});
    CHECK(yd.shape() == std::vector<int64_t>{1, 1, 10, 8});
    CHECK(yd.values<float>()[79] == 0.0f);  // the extra last row and column get no contribution
    CHECK(yd.values<float>()[0] == doctest::Approx(x.values<float>()[0] * w.values<float>()[0]));
    CHECK(yb.shape() == std::vector<int64_t>{1, 1, 6, 6});
    check_close(yb, yc);
  }

  TEST_CASE("Conv + BatchNormalization + Relu fusion keeps the results") {
    ModelBuilder m(9);
    const auto x = random_tensor({1, 3, 8, 8}, 60);
    m.input("x", DataType::float32, {1, 3, 8, 8})
        .initializer("w", random_tensor({5, 3, 3, 3}, 61))
        .initializer("cb", random_tensor({5}, 62))
        .initializer("s", random_tensor({5}, 63, 0.5f, 1.5f))
        .initializer("b", random_tensor({5}, 64))
        .initializer("mean", random_tensor({5}, 65))
        .initializer("var", random_tensor({5}, 66, 0.5f, 2.0f))
        .initializer("w2", random_tensor({4, 5, 1, 1}, 67))
        .output("y")
        .node("Conv", {"x", "w", "cb"}, {"c"}, {attr("pads", std::vector<int64_t>{1, 1, 1, 1})})
        .node("BatchNormalization", {"c", "s", "b", "mean", "var"}, {"bn"})
        .node("Relu", {"bn"}, {"r"})
        .node("Conv", {"r", "w2"}, {"c2"})
        .node("Clip", {"c2"}, {"y"}, {attr("min", -0.1f), attr("max", 0.2f)});
    Session fused(m.model());
    Session plain(m.model(), {.fuse = false});
    CHECK(fused.graph().nodes().size() == 2);
    CHECK(plain.graph().nodes().size() == 5);
    const auto a = fused.run(std::vector{x});
    const auto b = plain.run(std::vector{x});
    check_close(a[0], b[0], 1e-5f);
    float lo = 1, hi = -1;
    for (float v : a[0].values<float>()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    CHECK(lo >= -0.1f);
    CHECK(hi <= 0.2f);
  }

  TEST_CASE("a Conv output that is also a graph output is not fused") {
    ModelBuilder m(13);
    m.input("x", DataType::float32, {1, 1, 3, 3})
        .initializer("w", Tensor::from<float>({1, 1, 1, 1}, {-1.0f}))
        .output("c")
        .output("y")
        .node("Conv", {"x", "w"}, {"c"})
        .node("Relu", {"c"}, {"y"});
    Session s(m.model());
    CHECK(s.graph().nodes().size() == 2);
    const auto out = s.run(std::vector{Tensor::from<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
    CHECK(out[0].values<float>()[0] == -1.0f);
    CHECK(out[1].values<float>()[0] == 0.0f);
  }
}
