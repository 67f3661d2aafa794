// The windowed operators over any number of spatial axes (host/engine/ops/pool.cpp,
// ConvTranspose in conv.cpp, docs/conformance.md "Windows"): MaxPool (with Indices in both storage
// orders), AveragePool, LpPool and ConvTranspose on 1-D, 2-D and 3-D inputs, and Conv on 3-D and
// 4-D inputs (the n-axis im2col path), against direct loops over an n-dimensional index written here.

#include "engine_test_model.hpp"

#include <functional>
#include <limits>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

using Ints = std::vector<int64_t>;

int64_t product(const Ints& v) {
  int64_t n = 1;
  for (int64_t d : v) n *= d;
  return n;
}

// Calls f(index) for every index of `extent`, the last axis fastest.
void for_each_index(const Ints& extent, const std::function<void(const Ints&)>& f) {
  if (product(extent) == 0) return;
  Ints i(extent.size(), 0);
  for (;;) {
    f(i);
    std::size_t d = extent.size();
    while (d > 0 && ++i[d - 1] == extent[d - 1]) i[--d] = 0;
    if (d == 0) return;
  }
}

int64_t flat(const Ints& i, const Ints& extent) {
  int64_t at = 0;
  for (std::size_t d = 0; d < extent.size(); ++d) at = at * extent[d] + i[d];
  return at;
}

struct Window {
  Ints in, kernel, stride, dilation, pad_begin, pad_end;
  bool ceil = false;
  Ints out() const {
    Ints o(in.size());
    for (std::size_t d = 0; d < in.size(); ++d) {
      const int64_t span = in[d] + pad_begin[d] + pad_end[d] - ((kernel[d] - 1) * dilation[d] + 1);
      o[d] = (ceil ? (span + stride[d] - 1) / stride[d] : span / stride[d]) + 1;
      if (ceil && (o[d] - 1) * stride[d] >= in[d] + pad_begin[d]) --o[d];
    }
    return o;
  }
  std::vector<onnx::AttributeProto> attributes() const {
    Ints pads = pad_begin;
    pads.insert(pads.end(), pad_end.begin(), pad_end.end());
    return {attr("kernel_shape", kernel), attr("strides", stride), attr("pads", pads),
            attr("ceil_mode", int64_t{ceil})};
  }
};

enum class Kind { max, average, average_with_pad, lp1, lp2, lp3 };

// One channel plane of the pool, by its definition. `index` receives MaxPool's row-major and
// column-major flat index of the first maximum.
float reference_pool(const Window& w, Kind kind, const float* x, const Ints& o, int64_t* row_index,
                     int64_t* column_index) {
  float best = std::numeric_limits<float>::lowest();
  double sum = 0.0;
  int64_t count = 0, padded = 1;
  bool found = false;
  for (std::size_t d = 0; d < w.in.size(); ++d) {
    const int64_t start = o[d] * w.stride[d] - w.pad_begin[d];
    padded *= std::min(start + w.kernel[d], w.in[d] + w.pad_end[d]) - start;
  }
  for_each_index(w.kernel, [&](const Ints& k) {
    Ints at(w.in.size());
    for (std::size_t d = 0; d < w.in.size(); ++d) {
      at[d] = o[d] * w.stride[d] - w.pad_begin[d] + k[d] * w.dilation[d];
      if (at[d] < 0 || at[d] >= w.in[d]) return;
    }
    const float v = x[flat(at, w.in)];
    ++count;
    switch (kind) {
      case Kind::max:
        if (!found || v > best) {
          best = v;
          found = true;
          *row_index = flat(at, w.in);
          int64_t column = 0;
          for (std::size_t d = w.in.size(); d-- > 0;) column = column * w.in[d] + at[d];
          *column_index = column;
        }
        break;
      case Kind::average:
      case Kind::average_with_pad: sum += v; break;
      case Kind::lp1: sum += std::fabs(v); break;
      case Kind::lp2: sum += static_cast<double>(v) * v; break;
      case Kind::lp3: sum += std::pow(std::fabs(static_cast<double>(v)), 3.0); break;
    }
  });
  switch (kind) {
    case Kind::max: return best;
    case Kind::average: return static_cast<float>(sum / static_cast<double>(count));
    case Kind::average_with_pad: return static_cast<float>(sum / static_cast<double>(padded));
    case Kind::lp1: return static_cast<float>(sum);
    case Kind::lp2: return static_cast<float>(std::sqrt(sum));
    case Kind::lp3: return static_cast<float>(std::cbrt(sum));
  }
  return 0.0f;
}

void check_pool(const Window& w, Kind kind) {
  const Ints out = w.out();
  const int64_t channels = 3;
  Ints shape{2, channels};
  shape.insert(shape.end(), w.in.begin(), w.in.end());
  const auto x = random_tensor(shape, 11);
  auto attrs = w.attributes();
  std::string op = "MaxPool";
  if (kind == Kind::average || kind == Kind::average_with_pad) {
    op = "AveragePool";
    attrs.push_back(attr("count_include_pad", int64_t{kind == Kind::average_with_pad}));
  } else if (kind != Kind::max) {
    op = "LpPool";
    attrs.pop_back();  // LpPool has no ceil_mode before opset 18
    attrs.push_back(attr("p", int64_t{kind == Kind::lp1 ? 1 : kind == Kind::lp2 ? 2 : 3}));
  } else {
    attrs.push_back(attr("dilations", w.dilation));
  }
  for (int64_t storage_order : {0, 1}) {
    if (storage_order == 1 && kind != Kind::max) break;
    auto node_attrs = attrs;
    if (kind == Kind::max) node_attrs.push_back(attr("storage_order", storage_order));
    ModelBuilder m(12);
    m.input("x", DataType::float32, shape).output("y");
    if (kind == Kind::max) {
      m.output("i").node(op, {"x"}, {"y", "i"}, node_attrs, "pool");
    } else {
      m.node(op, {"x"}, {"y"}, node_attrs, "pool");
    }
    const auto got = Session(m.model()).run(std::vector{x});
    Ints want_shape{2, channels};
    want_shape.insert(want_shape.end(), out.begin(), out.end());
    REQUIRE(got[0].shape() == want_shape);
    const int64_t in_plane = product(w.in), out_plane = product(out);
    for (int64_t c = 0; c < 2 * channels; ++c) {
      for_each_index(out, [&](const Ints& o) {
        int64_t row = -1, column = -1;
        const float want = reference_pool(w, kind, x.data<float>() + c * in_plane, o, &row, &column);
        const auto at = static_cast<std::size_t>(c * out_plane + flat(o, out));
        CHECK(got[0].values<float>()[at] == doctest::Approx(want).epsilon(1e-5));
        if (kind == Kind::max) {
          CHECK(got[1].values<int64_t>()[at] == c * in_plane + (storage_order == 1 ? column : row));
        }
      });
    }
  }
}

}  // namespace

TEST_SUITE("engine.window_nd") {
  TEST_CASE("MaxPool, AveragePool and LpPool on 1-D, 2-D and 3-D windows match the definition") {
    const std::vector<Window> windows{
        {{9}, {3}, {2}, {1}, {1}, {1}},
        {{5, 7}, {2, 3}, {2, 1}, {1, 1}, {1, 0}, {0, 1}},
        {{4, 5, 6}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
        {{5, 4, 7}, {3, 2, 3}, {2, 1, 2}, {1, 1, 1}, {1, 0, 1}, {1, 1, 0}},
        {{5, 6, 7}, {3, 3, 2}, {2, 3, 2}, {1, 1, 1}, {1, 1, 0}, {1, 0, 1}, true},
        {{3, 2, 2, 5}, {2, 1, 2, 3}, {1, 1, 1, 2}, {1, 1, 1, 1}, {0, 0, 1, 1}, {1, 0, 0, 1}},
    };
    for (const Window& w : windows) {
      CAPTURE(w.in.size());
      CAPTURE(w.in.back());
      for (Kind kind : {Kind::max, Kind::average, Kind::average_with_pad, Kind::lp1, Kind::lp2, Kind::lp3}) {
        CAPTURE(static_cast<int>(kind));
        if (w.ceil && kind >= Kind::lp1) continue;
        check_pool(w, kind);
      }
    }
    // Dilated 3-D max windows.
    check_pool({{7, 6, 8}, {2, 3, 2}, {1, 2, 2}, {2, 1, 3}, {1, 1, 1}, {0, 1, 2}}, Kind::max);
  }

  TEST_CASE("LpPool refuses a non-positive p, pools refuse a rank without spatial axes") {
    const auto x = random_tensor({1, 1, 4}, 3);
    ModelBuilder m(12);
    m.input("x", DataType::float32, {1, 1, 4})
        .output("y")
        .node("LpPool", {"x"}, {"y"}, {attr("kernel_shape", Ints{2}), attr("p", int64_t{0})}, "lp");
    CHECK(planning_refusal(m.model()) == "node 'lp' (LpPool): attribute 'p' is 0, expected a positive exponent");
    ModelBuilder r(12);
    r.input("x", DataType::float32, {1, 4})
        .output("y")
        .node("MaxPool", {"x"}, {"y"}, {attr("kernel_shape", Ints{2})}, "mp");
    CHECK(planning_refusal(r.model()).find("expected N, C and at least one spatial axis") != std::string::npos);
  }

  TEST_CASE("ConvTranspose on 1-D, 2-D and 3-D inputs matches the scatter definition") {
    struct Case {
      Ints in, kernel, stride, dilation, pad_begin, pad_end, output_padding;
      int64_t c, m_per_group, group;
    };
    for (const Case& t : {Case{{6}, {3}, {2}, {1}, {1}, {0}, {1}, 2, 3, 1},
                          Case{{3, 4}, {2, 3}, {2, 1}, {1, 2}, {0, 1}, {1, 0}, {1, 0}, 4, 2, 2},
                          Case{{3, 4, 5}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 1, 2, 1},
                          Case{{2, 3, 4}, {2, 3, 2}, {2, 1, 3}, {1, 2, 1}, {1, 0, 1}, {0, 1, 1}, {1, 0, 2}, 4, 3, 2}}) {
      const std::size_t n_axes = t.in.size();
      CAPTURE(n_axes);
      Ints out(n_axes);
      for (std::size_t d = 0; d < n_axes; ++d) {
        out[d] = t.stride[d] * (t.in[d] - 1) + t.output_padding[d] + (t.kernel[d] - 1) * t.dilation[d] + 1 -
            t.pad_begin[d] - t.pad_end[d];
      }
      const int64_t m = t.m_per_group * t.group, cg = t.c / t.group;
      Ints x_shape{2, t.c}, w_shape{t.c, t.m_per_group}, y_shape{2, m};
      x_shape.insert(x_shape.end(), t.in.begin(), t.in.end());
      w_shape.insert(w_shape.end(), t.kernel.begin(), t.kernel.end());
      y_shape.insert(y_shape.end(), out.begin(), out.end());
      const auto x = random_tensor(x_shape, 40);
      const auto w = random_tensor(w_shape, 41);
      const auto b = random_tensor({m}, 42);
      Tensor want(DataType::float32, y_shape);
      const int64_t in_plane = product(t.in), out_plane = product(out), k_plane = product(t.kernel);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t mm = 0; mm < m; ++mm)
          for (int64_t i = 0; i < out_plane; ++i)
            want.data<float>()[(n * m + mm) * out_plane + i] = b.data<float>()[mm];
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < t.c; ++c)
          for (int64_t mm = 0; mm < t.m_per_group; ++mm)
            for_each_index(t.in, [&](const Ints& i) {
              for_each_index(t.kernel, [&](const Ints& k) {
                Ints o(n_axes);
                for (std::size_t d = 0; d < n_axes; ++d) {
                  o[d] = i[d] * t.stride[d] - t.pad_begin[d] + k[d] * t.dilation[d];
                  if (o[d] < 0 || o[d] >= out[d]) return;
                }
                const int64_t out_c = (c / cg) * t.m_per_group + mm;
                want.data<float>()[(n * m + out_c) * out_plane + flat(o, out)] +=
                    x.data<float>()[(n * t.c + c) * in_plane + flat(i, t.in)] *
                    w.data<float>()[(c * t.m_per_group + mm) * k_plane + flat(k, t.kernel)];
              });
            });
      Ints pads = t.pad_begin;
      pads.insert(pads.end(), t.pad_end.begin(), t.pad_end.end());
      ModelBuilder mb(11);
      mb.input("x", DataType::float32, x_shape)
          .initializer("w", w)
          .initializer("b", b)
          .output("y")
          .node("ConvTranspose", {"x", "w", "b"}, {"y"},
                {attr("strides", t.stride), attr("dilations", t.dilation), attr("pads", pads), attr("group", t.group),
                 attr("output_padding", t.output_padding)});
      check_close(run_one(mb.model(), {x}, {.threads = 3}), want);
    }
  }

  TEST_CASE("Conv on 3-D and 4-D windows matches the definition (groups, strides, dilations, pads, Relu)") {
    struct Case {
      Ints in, kernel, stride, dilation, pad_begin, pad_end;
      int64_t c, m, group;
      bool relu;
    };
    for (const Case& t :
         {Case{{4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 3, 4, 1, false},
          Case{{5, 6, 7}, {2, 3, 2}, {2, 1, 3}, {1, 2, 1}, {0, 1, 1}, {1, 0, 2}, 4, 6, 2, true},
          Case{{3, 9, 4}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, 4, 4, 4, false},
          Case{{2, 3, 4, 5}, {2, 2, 1, 3}, {1, 2, 1, 1}, {1, 1, 2, 1}, {0, 1, 0, 1}, {1, 0, 0, 1}, 2, 3, 1, false}}) {
      const std::size_t n_axes = t.in.size();
      CAPTURE(n_axes);
      CAPTURE(t.group);
      Ints out(n_axes);
      for (std::size_t d = 0; d < n_axes; ++d) {
        out[d] = (t.in[d] + t.pad_begin[d] + t.pad_end[d] - ((t.kernel[d] - 1) * t.dilation[d] + 1)) / t.stride[d] + 1;
      }
      const int64_t cg = t.c / t.group, mg = t.m / t.group;
      Ints x_shape{2, t.c}, w_shape{t.m, cg}, y_shape{2, t.m};
      x_shape.insert(x_shape.end(), t.in.begin(), t.in.end());
      w_shape.insert(w_shape.end(), t.kernel.begin(), t.kernel.end());
      y_shape.insert(y_shape.end(), out.begin(), out.end());
      const auto x = random_tensor(x_shape, 60);
      const auto w = random_tensor(w_shape, 61);
      const auto b = random_tensor({t.m}, 62);
      Tensor want(DataType::float32, y_shape);
      const int64_t in_plane = product(t.in), out_plane = product(out), k_plane = product(t.kernel);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t m = 0; m < t.m; ++m)
          for_each_index(out, [&](const Ints& o) {
            double sum = b.data<float>()[m];
            const int64_t g = m / mg;
            for (int64_t c = 0; c < cg; ++c)
              for_each_index(t.kernel, [&](const Ints& k) {
                Ints i(n_axes);
                for (std::size_t d = 0; d < n_axes; ++d) {
                  i[d] = o[d] * t.stride[d] - t.pad_begin[d] + k[d] * t.dilation[d];
                  if (i[d] < 0 || i[d] >= t.in[d]) return;
                }
                sum += static_cast<double>(x.data<float>()[(n * t.c + g * cg + c) * in_plane + flat(i, t.in)]) *
                    w.data<float>()[(m * cg + c) * k_plane + flat(k, t.kernel)];
              });
            want.data<float>()[(n * t.m + m) * out_plane + flat(o, out)] =
                t.relu ? std::max(0.0f, static_cast<float>(sum)) : static_cast<float>(sum);
          });
      Ints pads = t.pad_begin;
      pads.insert(pads.end(), t.pad_end.begin(), t.pad_end.end());
      ModelBuilder mb(11);
      mb.input("x", DataType::float32, x_shape).initializer("w", w).initializer("b", b).output("y");
      const std::vector<onnx::AttributeProto> attrs{attr("strides", t.stride), attr("dilations", t.dilation),
                                                    attr("pads", pads), attr("group", t.group)};
      if (t.relu) {
        mb.node("Conv", {"x", "w", "b"}, {"c"}, attrs, "conv").node("Relu", {"c"}, {"y"});
      } else {
        mb.node("Conv", {"x", "w", "b"}, {"y"}, attrs, "conv");
      }
      check_close(run_one(mb.model(), {x}, {.threads = 3}), want);
    }
  }
}
