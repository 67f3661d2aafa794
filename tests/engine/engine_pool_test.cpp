// MaxPool's fast paths (host/engine/ops/pool.cpp: four outputs at once, and the maximum of rows then of
// columns) against a direct loop with the rule of the walk in kernel order: the first maximum wins, so a
// NaN in a window's first tap is the result, a later NaN is skipped, and of equal values (0 and -0) the
// first is kept. A plane holding a NaN or -0 is walked in kernel order; the others take the rows first.

#include "engine_test_model.hpp"

#include <cmath>
#include <limits>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

struct PoolCase {
  int64_t h, w, k, stride, dilation, pad;
  bool ceil = false;
};

Tensor naive_max_pool(const PoolCase& p, const Tensor& x, int64_t out_h, int64_t out_w) {
  const auto& s = x.shape();
  Tensor y(DataType::float32, {s[0], s[1], out_h, out_w});
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  for (int64_t plane = 0; plane < s[0] * s[1]; ++plane) {
    for (int64_t oh = 0; oh < out_h; ++oh) {
      for (int64_t ow = 0; ow < out_w; ++ow) {
        float best = std::numeric_limits<float>::lowest();
        bool first = true;
        for (int64_t i = 0; i < p.k; ++i) {
          for (int64_t j = 0; j < p.k; ++j) {
            const int64_t ih = oh * p.stride - p.pad + i * p.dilation, iw = ow * p.stride - p.pad + j * p.dilation;
            if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
            const float v = xd[(plane * p.h + ih) * p.w + iw];
            if (first || v > best) best = v;
            first = false;
          }
        }
        yd[(plane * out_h + oh) * out_w + ow] = best;
      }
    }
  }
  return y;
}

// Where the input holds values whose maximum depends on the order of the walk.
enum class Specials { everywhere, none, one_plane };

void check_max_pool(const PoolCase& p, Specials specials = Specials::everywhere) {
  CAPTURE(p.h);
  CAPTURE(p.w);
  CAPTURE(p.k);
  CAPTURE(p.stride);
  CAPTURE(p.dilation);
  CAPTURE(p.pad);
  CAPTURE(p.ceil);
  CAPTURE(static_cast<int>(specials));
  Tensor x = random_tensor({1, 3, p.h, p.w}, 7, -1.0f, 1.0f);
  float* xd = x.data<float>();
  // Where the NaNs and -0s go: everywhere, nowhere (ties of 0 and 0 instead) or the second plane only.
  const int64_t plane = p.h * p.w, first = specials == Specials::one_plane ? plane : 0;
  const int64_t last = specials == Specials::none ? 0 : specials == Specials::one_plane ? 2 * plane : x.elements();
  for (int64_t i = 0; i < x.elements(); i += 5) {
    xd[i] = (i / 5) % 2 == 0 || i < first || i >= last ? 0.0f : -0.0f;  // ties of 0 and -0
  }
  for (int64_t i = first + 3; i < last; i += 23) xd[i] = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 1; i < x.elements(); i += 7) {                              // windows with negative maxima
    if (xd[i] != 0.0f || (i >= first && i < last)) xd[i] = -std::fabs(xd[i]);  // -fabs(0) is -0
  }
  ModelBuilder m(13);
  m.input("x", DataType::float32, {1, 3, p.h, p.w})
      .output("y")
      .node("MaxPool", {"x"}, {"y"},
            {attr("kernel_shape", std::vector<int64_t>{p.k, p.k}),
             attr("strides", std::vector<int64_t>{p.stride, p.stride}),
             attr("dilations", std::vector<int64_t>{p.dilation, p.dilation}),
             attr("pads", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}),
             attr("ceil_mode", int64_t{p.ceil ? 1 : 0})});
  const Tensor y = run_one(m.model(), {x}, {.threads = 2});
  const Tensor want = naive_max_pool(p, x, y.dim(2), y.dim(3));
  REQUIRE(y.shape() == want.shape());
  const auto got = y.values<float>(), expected = want.values<float>();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool same = std::isnan(expected[i])
        ? std::isnan(got[i])
        : got[i] == expected[i] && std::signbit(got[i]) == std::signbit(expected[i]);
    if (!same && bad++ < 5) MESSAGE("element " << i << ": got " << got[i] << ", want " << expected[i]);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_SUITE("engine.pool") {
  TEST_CASE("MaxPool's vector interior keeps the first maximum in kernel order, NaN and -0 included") {
    check_max_pool({9, 37, 3, 2, 1, 0, true});   // squeezenet's 3x3/2 with ceil_mode
    check_max_pool({4, 111, 3, 2, 1, 0, true});  // its row width
    check_max_pool({4, 64, 3, 1, 1, 0});         // stride 1
    check_max_pool({8, 29, 3, 1, 1, 1});
    check_max_pool({7, 40, 2, 2, 1, 0});
    check_max_pool({10, 45, 3, 3, 2, 2});
    check_max_pool({5, 6, 3, 1, 1, 0});  // narrower than one vector of outputs
  }

  TEST_CASE("MaxPool's row maxima: strides 1, 2 and 3, dilations, pads, ceil_mode; planes with a NaN walked alone") {
    for (const Specials specials : {Specials::none, Specials::one_plane}) {
      check_max_pool({9, 37, 3, 2, 1, 0, true}, specials);
      check_max_pool({12, 111, 3, 2, 1, 0, true}, specials);
      check_max_pool({6, 64, 3, 1, 1, 0}, specials);
      check_max_pool({8, 29, 3, 1, 1, 1}, specials);
      check_max_pool({7, 40, 2, 2, 1, 0}, specials);
      check_max_pool({10, 45, 3, 3, 2, 2}, specials);
      check_max_pool({11, 13, 2, 2, 1, 1, true}, specials);
      check_max_pool({9, 21, 4, 2, 2, 3}, specials);
      check_max_pool({5, 6, 3, 1, 1, 0}, specials);
      check_max_pool({3, 3, 1, 1, 1, 0}, specials);
      check_max_pool({6, 7, 5, 1, 1, 0}, specials);  // a window as large as the plane
    }
  }
}
