// bfloat16 as an element type of the host engine (docs/conformance.md "bfloat16"): the conversions
// against the library's BFloat16, Cast and CastLike (rounding to nearest even, not truncating),
// element-wise arithmetic, and MatMul and Gemm computed in float32 and rounded once.

#include "engine_test_model.hpp"

#include <rknnxx/core/bfloat16.hpp>

#include <bit>
#include <limits>
#include <random>

using namespace rknnxx::host;
using namespace rknnxx::host::testing;

namespace {

Tensor bf16_tensor(std::vector<int64_t> shape, const std::vector<float>& values) {
  std::vector<bfloat16> bits;
  for (float v : values) bits.push_back(bfloat16{float_to_bfloat16_bits(v)});
  return Tensor::from<bfloat16>(std::move(shape), std::span<const bfloat16>(bits));
}

std::vector<float> widened(const Tensor& t) {
  std::vector<float> v;
  for (bfloat16 b : t.values<bfloat16>()) v.push_back(bfloat16_bits_to_float(b.bits));
  return v;
}

float round_bf16(float v) { return bfloat16_bits_to_float(float_to_bfloat16_bits(v)); }

}  // namespace

TEST_SUITE("engine.bfloat16") {
  TEST_CASE("the engine's bfloat16 conversions give the bits of rknnxx::BFloat16") {
    // Every sign and exponent with the mantissas around each rounding boundary, then random bits.
    std::size_t checked = 0, differ = 0;
    auto check = [&](uint32_t u) {
      const float f = std::bit_cast<float>(u);
      ++checked;
      if (float_to_bfloat16_bits(f) != rknnxx::BFloat16(f).bits() && differ++ < 5) {
        MESSAGE("float bits " << u);
      }
    };
    for (uint32_t sign = 0; sign < 2; ++sign) {
      for (uint32_t exponent = 0; exponent < 256; ++exponent) {
        for (uint32_t low : {0x0u, 0x1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
          for (uint32_t kept : {0x0u, 0x1u, 0x2u, 0x7eu, 0x7fu}) {
            check((sign << 31) | (exponent << 23) | (kept << 16) | low);
          }
        }
      }
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 1 << 20; ++i) check(static_cast<uint32_t>(rng()));
    CHECK(differ == 0);
    CHECK(checked > 1000000);
    for (uint32_t b = 0; b < 0x10000; ++b) {
      const auto bits = static_cast<uint16_t>(b);
      const float mine = bfloat16_bits_to_float(bits);
      const float library = static_cast<float>(rknnxx::BFloat16::from_bits(bits));
      if (std::bit_cast<uint32_t>(mine) != std::bit_cast<uint32_t>(library)) {
        FAIL("bfloat16 bits " << b << " widen differently");
      }
    }
  }

  TEST_CASE("Cast float32 to bfloat16 rounds to nearest even; bfloat16 to float32 and int32 is exact") {
    // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: even is 1. 1 + 3 * 2^-8 lies halfway between
    // 1 + 2^-7 (odd) and 1 + 2^-6 (even). Truncation would give 1 and 1 + 2^-7.
    const std::vector<float> in{1.0f + 0x1p-8f,
                                1.0f + 3 * 0x1p-8f,
                                1.0f + 0x1p-8f + 0x1p-20f,
                                -2.5f,
                                std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN(),
                                3.4e38f};
    ModelBuilder m(13);
    m.input("x", DataType::float32, {7})
        .output("y")
        .node("Cast", {"x"}, {"y"}, {attr("to", static_cast<int64_t>(DataType::bfloat16))});
    const Tensor y = run_one(m.model(), {Tensor::from<float>({7}, std::span<const float>(in))});
    REQUIRE(y.dtype() == DataType::bfloat16);
    const auto v = widened(y);
    CHECK(v[0] == 1.0f);
    CHECK(v[1] == 1.0f + 0x1p-6f);
    CHECK(v[2] == 1.0f + 0x1p-7f);  // just above the halfway point
    CHECK(v[3] == -2.5f);
    CHECK(v[4] == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(v[5]));
    CHECK(v[6] == std::numeric_limits<float>::infinity());  // above the largest bfloat16's rounding bound
    ModelBuilder back(15);
    back.input("x", DataType::bfloat16, {3})
        .input("like", DataType::int32, {1})
        .output("f")
        .output("i")
        .node("Cast", {"x"}, {"f"}, {attr("to", static_cast<int64_t>(DataType::float32))})
        .node("CastLike", {"x", "like"}, {"i"});
    const auto out = Session(back.model())
                         .run(std::vector{bf16_tensor({3}, {1.5f, -7.0f, 300.0f}), Tensor::from<int32_t>({1}, {0})});
    CHECK(out[0].values<float>()[0] == 1.5f);
    CHECK(out[0].values<float>()[2] == 300.0f);
    CHECK(out[1].values<int32_t>()[1] == -7);
  }

  TEST_CASE("Add, Sub, Mul, Div on bfloat16 compute in float32 and round once, with broadcasting") {
    const auto a = bf16_tensor({2, 3}, {1.0f, 2.0f, 3.0f, -4.0f, 0.5f, 100.0f});
    const auto b = bf16_tensor({3}, {0x1p-8f, 3.0f, 7.0f});
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      CAPTURE(op);
      ModelBuilder m(14);
      m.input("a", DataType::bfloat16, {2, 3})
          .input("b", DataType::bfloat16, {3})
          .output("y")
          .node(op, {"a", "b"}, {"y"});
      const Tensor y = Session(m.model()).run(std::vector{a, b})[0];
      REQUIRE(y.dtype() == DataType::bfloat16);
      const auto av = widened(a), bv = widened(b), yv = widened(y);
      for (std::size_t i = 0; i < 6; ++i) {
        const float x = av[i], z = bv[i % 3];
        const float exact = op[0] == 'A' ? x + z : op[0] == 'S' ? x - z : op[0] == 'M' ? x * z : x / z;
        CHECK(yv[i] == round_bf16(exact));
      }
    }
    // 1 + 2^-8 rounds to 1 (ties to even): the sum is not truncated nor rounded twice.
    CHECK(widened(bf16_tensor({1}, {1.0f + 0x1p-8f}))[0] == 1.0f);
  }

  TEST_CASE("MatMul and Gemm on bfloat16: float32 products of the bfloat16 values, rounded to bfloat16") {
    const auto af = random_floats(2 * 3 * 5, 1), bf = random_floats(5 * 4, 2), cf = random_floats(4, 3);
    const auto a = bf16_tensor({2, 3, 5}, af), b = bf16_tensor({5, 4}, bf), c = bf16_tensor({4}, cf);
    const auto av = widened(a), bv = widened(b), cv = widened(c);
    ModelBuilder m(13);
    m.input("a", DataType::bfloat16, {2, 3, 5})
        .input("b", DataType::bfloat16, {5, 4})
        .output("y")
        .node("MatMul", {"a", "b"}, {"y"});
    const Tensor y = Session(m.model()).run(std::vector{a, b})[0];
    REQUIRE(y.dtype() == DataType::bfloat16);
    REQUIRE(y.shape() == std::vector<int64_t>{2, 3, 4});
    const auto yv = widened(y);
    std::size_t off_by_more_than_rounding = 0;
    for (int64_t r = 0; r < 6; ++r) {
      for (int64_t j = 0; j < 4; ++j) {
        double sum = 0.0;
        for (int64_t t = 0; t < 5; ++t) sum += static_cast<double>(av[r * 5 + t]) * bv[t * 4 + j];
        // The float32 sum may differ from the double one in its last bits; rounded to bfloat16 the
        // two agree unless they straddle a rounding boundary, where they differ by one bfloat16 unit.
        const float got = yv[static_cast<std::size_t>(r * 4 + j)];
        const float want = round_bf16(static_cast<float>(sum));
        if (got != want && std::fabs(got - want) > std::fabs(want) * 0x1p-7f) ++off_by_more_than_rounding;
      }
    }
    CHECK(off_by_more_than_rounding == 0);
    ModelBuilder g(13);
    g.input("a", DataType::bfloat16, {5, 3})
        .input("b", DataType::bfloat16, {5, 4})
        .input("c", DataType::bfloat16, {4})
        .output("y")
        .node("Gemm", {"a", "b", "c"}, {"y"}, {attr("transA", int64_t{1}), attr("alpha", 2.0f), attr("beta", 0.5f)});
    const auto at = bf16_tensor({5, 3}, std::vector<float>(af.begin(), af.begin() + 15));
    const Tensor gy = Session(g.model()).run(std::vector{at, b, c})[0];
    REQUIRE(gy.dtype() == DataType::bfloat16);
    const auto atv = widened(at), gv = widened(gy);
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        double sum = 0.0;
        for (int64_t t = 0; t < 5; ++t) sum += static_cast<double>(atv[t * 3 + i]) * bv[t * 4 + j];
        const float want = round_bf16(static_cast<float>(2.0 * sum + 0.5 * cv[static_cast<std::size_t>(j)]));
        CHECK(gv[static_cast<std::size_t>(i * 4 + j)] == doctest::Approx(want).epsilon(0x1p-7));
      }
    }
  }

  TEST_CASE("Transpose, Concat and Reshape move bfloat16 bits unchanged") {
    const auto a = bf16_tensor({2, 3}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f});
    ModelBuilder m(13);
    m.input("a", DataType::bfloat16, {2, 3})
        .initializer("shape", Tensor::from<int64_t>({1}, {-1}))
        .output("y")
        .node("Transpose", {"a"}, {"t"})
        .node("Concat", {"t", "t"}, {"c"}, {attr("axis", int64_t{0})})
        .node("Reshape", {"c", "shape"}, {"y"});
    const Tensor y = run_one(m.model(), {a});
    REQUIRE(y.dtype() == DataType::bfloat16);
    CHECK(widened(y) == std::vector<float>{1, 4, 2, 5, 3, 6, 1, 4, 2, 5, 3, 6});
  }

  TEST_CASE("an operator without bfloat16 and mixed element types are refused, naming the node") {
    ModelBuilder m(14);
    m.input("x", DataType::bfloat16, {2}).output("y").node("Relu", {"x"}, {"y"}, {}, "relu");
    CHECK(planning_refusal(m.model()).find("node 'relu' (Relu): input 0 has element type bfloat16") == 0);
    ModelBuilder mixed(13);
    mixed.input("a", DataType::bfloat16, {2, 2})
        .input("b", DataType::float32, {2, 2})
        .output("y")
        .node("MatMul", {"a", "b"}, {"y"}, {}, "mm");
    CHECK(planning_refusal(mixed.model()) ==
          "node 'mm' (MatMul): input 1 has element type float32, input 0 has bfloat16");
  }
}
