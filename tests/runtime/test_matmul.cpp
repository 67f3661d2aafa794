// rknnxx::MatMul on the host runtime (docs/matmul.md): typed creation, Mem operands, dynamic
// shapes, the geometry check against a platform, ownership (move, release).

#include <rknnxx/runtime/matmul.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

using namespace rknnxx;

namespace {

std::shared_ptr<const Runtime> host() { return Runtime::load(RuntimeChoice::host()); }

MatMulOptions on_host(MatmulLayout b_layout = MatmulLayout::normal) {
  MatMulOptions o;
  o.runtime = host();
  o.b_layout = b_layout;
  o.platform = Platform::rk3588;  // the host runtime's default (RKNNXX_HOST_PLATFORM unset)
  return o;
}

}  // namespace

static_assert(MatMul<Float16, Float16, float>::type == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32);
static_assert(MatMul<std::int8_t, Int4, std::int32_t>::type == RKNN_INT8_MM_INT4_TO_INT32);
static_assert(MatmulElements<Float16, Int4, BFloat16>);
static_assert(!MatmulElements<float, float, float>, "float32 inputs are no rknn_matmul_type");
static_assert(!std::is_copy_constructible_v<MatMul<Float16, Float16, float>>);
static_assert(std::is_nothrow_move_constructible_v<MatMul<Float16, Float16, float>>);
// The calculator is constexpr: a board's layout is known at compile time.
static_assert(matmul_geometry(platform_traits<Platform::rk3588>, RKNN_INT8_MM_INT8_TO_INT32, {4, 64, 32},
                              MatmulLayout::native, MatmulLayout::native)
                  .c.dims[2] == 4);

TEST_CASE("MatMul<int8, int8, int32>: C = A x B through Mem operands") {
  auto mm = MatMul<std::int8_t, std::int8_t, std::int32_t>::create({2, 64, 32}, on_host());
  CHECK(mm.attr(Operand::a).size == 2 * 64);
  Mem a = mm.create_mem(Operand::a), b = mm.create_mem(Operand::b), c = mm.create_mem(Operand::c);
  {
    auto w = a.write();
    auto values = w.as<std::int8_t>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int8_t>(static_cast<int>(i % 7) - 3);
  }
  {
    auto w = b.write();
    auto values = w.as<std::int8_t>();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int8_t>(static_cast<int>(i % 5) - 2);
  }
  mm.bind(a, b, c);
  mm.run();
  auto r = c.read();
  auto out = r.as<std::int32_t>();
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 32; ++n) {
      int expected = 0;
      for (int k = 0; k < 64; ++k) expected += ((m * 64 + k) % 7 - 3) * ((k * 32 + n) % 5 - 2);
      CHECK(out[static_cast<std::size_t>(m * 32 + n)] == expected);
    }
}

TEST_CASE("MatMul: dynamic shapes share memory sized for the largest") {
  auto mm = MatMul<Float16, Float16, float>::create({{1, 32, 16}, {3, 32, 16}}, on_host(MatmulLayout::native));
  CHECK(mm.shapes().size() == 2);
  Mem a = mm.create_mem(Operand::a), b = mm.create_mem(Operand::b), c = mm.create_mem(Operand::c);
  CHECK(a.size() == 3 * 32 * 2);
  {
    auto w = a.write();
    for (auto& v : w.as<Float16>()) v = Float16(0.5f);
  }
  {
    auto w = b.write();
    for (auto& v : w.as<Float16>()) v = Float16(2.0f);  // every element: layout does not matter
  }
  for (MatmulShape shape : {MatmulShape{3, 32, 16}, MatmulShape{1, 32, 16}}) {
    mm.set_shape(shape);
    CHECK(mm.shape() == shape);
    mm.bind(a, b, c);
    mm.run();
    auto r = c.read();
    for (std::size_t i = 0; i < shape.m * shape.n; ++i) CHECK(r.as<float>()[i] == 32.0f);
  }
  CHECK_THROWS_WITH_AS(mm.set_shape({2, 32, 16}), doctest::Contains("not one of the 2 shapes"), Error);
}

TEST_CASE("MatMul: the platform's geometry is checked against the runtime's") {
  auto options = on_host();
  options.platform = Platform::rk3566;  // the host runtime answers as RK3588: A native differs
  options.ac_layout = MatmulLayout::native;
  using Int8MatMul = MatMul<std::int8_t, std::int8_t, std::int32_t>;
  CHECK_THROWS_WITH_AS((void)Int8MatMul::create({4, 64, 32}, options),
                       doctest::Contains("the runtime is not for RK3566"), Error);
}

TEST_CASE("MatMul: refusals carry the runtime's reason") {
  using HalfMatMul = MatMul<Float16, Float16, float>;
  CHECK_THROWS_WITH_AS((void)HalfMatMul::create({4, 40, 32}, on_host()),
                       doctest::Contains("K=40 must be a multiple of 32"), Error);
}

TEST_CASE("MatMul: quantization, move and release") {
  auto mm = MatMul<std::int8_t, std::int8_t, std::int8_t>::create({1, 32, 32}, on_host());
  const float scale[] = {0.5f};
  mm.set_quant(Operand::c, scale);
  CHECK_THROWS_AS(mm.set_quant(Operand::b, std::vector<float>(2, 1.0f)), Error);  // per layer: one scale
  auto moved = std::move(mm);
  CHECK_THROWS_AS((void)mm.native_handle(), Error);  // NOLINT: use after move is the point
  Mem c = moved.create_mem(Operand::c);
  const rknn_matmul_ctx handle = moved.release();
  CHECK(handle != 0);
  CHECK_THROWS_AS(moved.run(), Error);
  CHECK(c.size() == 32);  // still usable: the caller owns the context now
  c.reset();
  CHECK(host()->api().rknn_matmul_destroy(handle) == RKNN_SUCC);
}

TEST_CASE("MatMul: move assignment (self-move included) and reset") {
  using Mm = MatMul<std::int8_t, std::int8_t, std::int32_t>;
  static_assert(std::is_nothrow_move_assignable_v<Mm>);
  auto mm = Mm::create({2, 64, 32}, on_host());
  const rknn_matmul_ctx handle = mm.native_handle();
  Mm& alias = mm;
  mm = std::move(alias);
  CHECK(mm.native_handle() == handle);
  auto other = Mm::create({1, 32, 32}, on_host());
  Mem kept = other.create_mem(Operand::a);
  other = std::move(mm);  // other's context goes, and its memory with it
  CHECK(other.native_handle() == handle);
  CHECK(other.shape() == MatmulShape{2, 64, 32});
  CHECK_THROWS_WITH_AS((void)kept.size(), doctest::Contains("outlived its Context"), Error);
  Mem a = other.create_mem(Operand::a);
  other.reset();
  CHECK_THROWS_WITH_AS((void)other.native_handle(), doctest::Contains("reset"), Error);
  CHECK(other.shapes().empty());
  CHECK_THROWS_WITH_AS((void)a.size(), doctest::Contains("outlived its Context"), Error);
  other.reset();  // idempotent
}

TEST_CASE("MatMul: native B written from normal layout gives the normal-layout result") {
  std::vector<std::int8_t> a_values(2 * 64), b_values(64 * 32);
  for (std::size_t i = 0; i < a_values.size(); ++i) a_values[i] = static_cast<std::int8_t>(static_cast<int>(i % 9) - 4);
  for (std::size_t i = 0; i < b_values.size(); ++i)
    b_values[i] = static_cast<std::int8_t>(static_cast<int>(i % 23) - 11);
  std::vector<std::int32_t> results[2];
  for (MatmulLayout layout : {MatmulLayout::normal, MatmulLayout::native}) {
    auto mm = MatMul<std::int8_t, std::int8_t, std::int32_t>::create({2, 64, 32}, on_host(layout));
    Mem a = mm.create_mem(Operand::a), b = mm.create_mem(Operand::b), c = mm.create_mem(Operand::c);
    {
      auto w = a.write();
      std::memcpy(w.data(), a_values.data(), a_values.size());
    }
    if (layout == MatmulLayout::native) {
      mm.write_native_b(std::as_bytes(std::span(b_values)), b);
      CHECK_THROWS_WITH_AS(mm.write_native_b(std::as_bytes(std::span(b_values)).first(100), b),
                           doctest::Contains("needs 2048 bytes, 100 given"), Error);
    } else {
      auto w = b.write();
      std::memcpy(w.data(), b_values.data(), b_values.size());
    }
    mm.bind(a, b, c);
    mm.run();
    auto r = c.read();
    const auto out = r.as<std::int32_t>();
    results[layout == MatmulLayout::native].assign(out.begin(), out.end());
  }
  CHECK(results[0] == results[1]);
  CHECK(results[0][0] != 0);
}
