// The matmul API of the host runtime through its C interface (docs/matmul.md): every
// rknn_matmul_type against a naive reference written here (exact for integer results, within
// one rounding of the result type for float ones), the io_attr geometry of the normal, native
// and transposed layouts, quantization parameters, dynamic shapes and misuse.

#include <rknnxx/abi/c_matmul_api.h>
#include <rknnxx/core/bfloat16.hpp>
#include <rknnxx/core/float16.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" const char* rknnxx_host_last_error(void);

using namespace rknnxx;

namespace {

enum class Kind { f16, i8, i4 };

struct TypeCase {
  rknn_matmul_type type;
  Kind a;
  Kind b;
  rknn_tensor_type c;
};

const TypeCase all_types[] = {
    {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, Kind::f16, Kind::f16, RKNN_TENSOR_FLOAT32},
    {RKNN_INT8_MM_INT8_TO_INT32, Kind::i8, Kind::i8, RKNN_TENSOR_INT32},
    {RKNN_INT8_MM_INT8_TO_INT8, Kind::i8, Kind::i8, RKNN_TENSOR_INT8},
    {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, Kind::f16, Kind::f16, RKNN_TENSOR_FLOAT16},
    {RKNN_FLOAT16_MM_INT8_TO_FLOAT32, Kind::f16, Kind::i8, RKNN_TENSOR_FLOAT32},
    {RKNN_FLOAT16_MM_INT8_TO_FLOAT16, Kind::f16, Kind::i8, RKNN_TENSOR_FLOAT16},
    {RKNN_FLOAT16_MM_INT4_TO_FLOAT32, Kind::f16, Kind::i4, RKNN_TENSOR_FLOAT32},
    {RKNN_FLOAT16_MM_INT4_TO_FLOAT16, Kind::f16, Kind::i4, RKNN_TENSOR_FLOAT16},
    {RKNN_INT8_MM_INT8_TO_FLOAT32, Kind::i8, Kind::i8, RKNN_TENSOR_FLOAT32},
    {RKNN_INT4_MM_INT4_TO_INT16, Kind::i4, Kind::i4, RKNN_TENSOR_INT16},
    {RKNN_INT8_MM_INT4_TO_INT32, Kind::i8, Kind::i4, RKNN_TENSOR_INT32},
    {RKNN_FLOAT16_MM_INT4_TO_BFLOAT16, Kind::f16, Kind::i4, RKNN_TENSOR_BFLOAT16},
    {RKNN_INT8_MM_INT4_TO_FLOAT16, Kind::i8, Kind::i4, RKNN_TENSOR_FLOAT16},
};

std::string last_error() { return rknnxx_host_last_error(); }

// A matrix of logical values (rows x cols) and where each element goes in bytes.
struct Packing {
  Kind kind;
  std::vector<unsigned char> bytes;
  void put(std::size_t index, double value) {
    switch (kind) {
      case Kind::f16: {
        const std::uint16_t bits = Float16(value).bits();
        std::memcpy(&bytes[index * 2], &bits, 2);
        break;
      }
      case Kind::i8: bytes[index] = static_cast<unsigned char>(static_cast<std::int8_t>(value)); break;
      case Kind::i4: {
        const auto nibble = static_cast<unsigned char>(static_cast<int>(value) & 0xF);
        unsigned char& byte = bytes[index / 2];
        byte = index % 2 == 0 ? static_cast<unsigned char>((byte & 0xF0) | nibble)
                              : static_cast<unsigned char>((byte & 0x0F) | (nibble << 4));
        break;
      }
    }
  }
};

double random_value(Kind kind, std::mt19937& rng) {
  switch (kind) {
    case Kind::f16: return static_cast<double>(Float16(std::uniform_real_distribution<float>(-2, 2)(rng)));
    case Kind::i8: return std::uniform_int_distribution<int>(-128, 127)(rng);
    case Kind::i4: return std::uniform_int_distribution<int>(-8, 7)(rng);
  }
  return 0;
}

// Element offsets of the layouts as docs/matmul.md describes them, from the reported dims.
std::size_t a_index(const rknn_matmul_tensor_attr& attr, std::size_t m, std::size_t k, std::size_t M, std::size_t K) {
  if (attr.n_dims == 2) return m * K + k;
  const std::size_t sub_k = attr.dims[2];
  return ((k / sub_k) * M + m) * sub_k + k % sub_k;
}
std::size_t b_index(const rknn_matmul_tensor_attr& attr, int layout, std::size_t k, std::size_t n, std::size_t K,
                    std::size_t N, std::size_t segment_k = 0) {
  if (layout == RKNN_MM_LAYOUT_NORM) return k * N + n;
  if (layout == RKNN_MM_LAYOUT_TP_NORM) return n * K + k;
  const std::size_t sub_n = attr.dims[2], sub_k = attr.dims[3];
  if (segment_k == 0) segment_k = K;
  const std::size_t first = k / segment_k * segment_k, rows = std::min(segment_k, K - first), kk = k - first;
  return first * N + ((n / sub_n * (rows / sub_k) + kk / sub_k) * sub_n + n % sub_n) * sub_k + kk % sub_k;
}
std::size_t c_index(const rknn_matmul_tensor_attr& attr, std::size_t m, std::size_t n, std::size_t M, std::size_t N) {
  if (attr.n_dims == 2) return m * N + n;
  const std::size_t sub_n = attr.dims[2];
  return ((n / sub_n) * M + m) * sub_n + n % sub_n;
}

double read_c(const unsigned char* bytes, rknn_tensor_type type, std::size_t index) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32: {
      float v;
      std::memcpy(&v, bytes + index * 4, 4);
      return v;
    }
    case RKNN_TENSOR_INT32: {
      std::int32_t v;
      std::memcpy(&v, bytes + index * 4, 4);
      return v;
    }
    case RKNN_TENSOR_INT16: {
      std::int16_t v;
      std::memcpy(&v, bytes + index * 2, 2);
      return v;
    }
    case RKNN_TENSOR_INT8: return static_cast<std::int8_t>(bytes[index]);
    case RKNN_TENSOR_FLOAT16: {
      std::uint16_t v;
      std::memcpy(&v, bytes + index * 2, 2);
      return Float16::from_bits(v).to_double();
    }
    case RKNN_TENSOR_BFLOAT16: {
      std::uint16_t v;
      std::memcpy(&v, bytes + index * 2, 2);
      return BFloat16::from_bits(v).to_double();
    }
    default: FAIL("unexpected C type"); return 0;
  }
}

struct Quant {
  int b_quant_type = RKNN_QUANT_TYPE_PER_LAYER_SYM;
  int group_size = 0;
  float a_scale = 1, c_scale = 1;
  int a_zp = 0, c_zp = 0;
  std::vector<float> b_scale{1.0f};
  std::vector<int> b_zp{0};
};

struct Run {
  int m, k, n;
  int b_layout = RKNN_MM_LAYOUT_NORM;
  int ac_layout = RKNN_MM_LAYOUT_NORM;
};

int set_quant(rknn_matmul_ctx ctx, const char* name, std::vector<float> scale, std::vector<int> zp) {
  rknn_quant_params p;
  std::memset(&p, 0, sizeof p);
  std::snprintf(p.name, sizeof p.name, "%s", name);
  p.scale = scale.data();
  p.scale_len = static_cast<int32_t>(scale.size());
  p.zp = zp.data();
  p.zp_len = static_cast<int32_t>(zp.size());
  return rknn_matmul_set_quant_params(ctx, &p);
}

// Runs one multiplication through the C interface and checks C against the reference.
void check_matmul(const TypeCase& tc, const Run& run, const Quant& q = {}) {
  CAPTURE(get_matmul_type_string(tc.type));
  CAPTURE(run.m);
  CAPTURE(run.k);
  CAPTURE(run.n);
  CAPTURE(run.b_layout);
  CAPTURE(run.ac_layout);
  const std::size_t M = static_cast<std::size_t>(run.m), K = static_cast<std::size_t>(run.k),
                    N = static_cast<std::size_t>(run.n);
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof info);
  info.M = run.m;
  info.K = run.k;
  info.N = run.n;
  info.type = tc.type;
  info.B_layout = static_cast<int16_t>(run.b_layout);
  info.AC_layout = static_cast<int16_t>(run.ac_layout);
  info.B_quant_type = static_cast<int16_t>(q.b_quant_type);
  info.group_size = static_cast<int16_t>(q.group_size);
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  REQUIRE_MESSAGE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC, last_error());
  CHECK(std::string(io.A.name) == "A");
  CHECK(io.C.type == tc.c);

  std::mt19937 rng(static_cast<unsigned>(tc.type * 1000 + run.m));
  std::vector<double> a(M * K), b(K * N);
  for (auto& v : a) v = random_value(tc.a, rng);
  for (auto& v : b) v = random_value(tc.b, rng);
  Packing pa{tc.a, std::vector<unsigned char>(io.A.size)}, pb{tc.b, std::vector<unsigned char>(io.B.size)};
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t k = 0; k < K; ++k) pa.put(a_index(io.A, m, k, M, K), a[m * K + k]);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t n = 0; n < N; ++n) pb.put(b_index(io.B, run.b_layout, k, n, K, N), b[k * N + n]);

  if (tc.a != Kind::f16) REQUIRE_MESSAGE(set_quant(ctx, "A", {q.a_scale}, {q.a_zp}) == RKNN_SUCC, last_error());
  if (tc.b != Kind::f16) REQUIRE_MESSAGE(set_quant(ctx, "B", q.b_scale, q.b_zp) == RKNN_SUCC, last_error());
  if (tc.c == RKNN_TENSOR_INT8) REQUIRE_MESSAGE(set_quant(ctx, "C", {q.c_scale}, {q.c_zp}) == RKNN_SUCC, last_error());

  rknn_tensor_mem* mem_a = rknn_create_mem(ctx, io.A.size);
  rknn_tensor_mem* mem_b = rknn_create_mem(ctx, io.B.size);
  rknn_tensor_mem* mem_c = rknn_create_mem(ctx, io.C.size);
  REQUIRE((mem_a && mem_b && mem_c));
  std::memcpy(mem_a->virt_addr, pa.bytes.data(), io.A.size);
  std::memcpy(mem_b->virt_addr, pb.bytes.data(), io.B.size);
  REQUIRE(rknn_matmul_set_io_mem(ctx, mem_a, &io.A) == RKNN_SUCC);
  REQUIRE(rknn_matmul_set_io_mem(ctx, mem_b, &io.B) == RKNN_SUCC);
  REQUIRE(rknn_matmul_set_io_mem(ctx, mem_c, &io.C) == RKNN_SUCC);
  REQUIRE_MESSAGE(rknn_matmul_run(ctx) == RKNN_SUCC, last_error());

  // The reference: dequantize, multiply in double, round once to C's type.
  const bool a_int = tc.a != Kind::f16, b_int = tc.b != Kind::f16;
  const auto b_param = [&](std::size_t k, std::size_t n) -> std::size_t {
    if (q.b_quant_type == 2 || q.b_quant_type == 3) return n;  // per channel
    const std::size_t group = static_cast<std::size_t>(q.group_size);
    if (q.b_quant_type >= 4) return n * (K / group) + k / group;  // per group
    return 0;
  };
  const bool integer_c = tc.c == RKNN_TENSOR_INT32 || tc.c == RKNN_TENSOR_INT16;
  const double common = *std::max_element(q.b_scale.begin(), q.b_scale.end());
  const auto* c_bytes = static_cast<const unsigned char*>(mem_c->virt_addr);
  int mismatches = 0;
  for (std::size_t m = 0; m < M; ++m)
    for (std::size_t n = 0; n < N; ++n) {
      double expected = 0;
      if (integer_c) {
        long long sum = 0;
        for (std::size_t k = 0; k < K; ++k) {
          double bv = b[k * N + n] - q.b_zp[b_param(k, n)];
          if (q.b_scale.size() > 1) bv = std::nearbyint(bv * q.b_scale[b_param(k, n)] / common);
          sum += static_cast<long long>(a[m * K + k] - q.a_zp) * static_cast<long long>(bv);
        }
        const long long limit = tc.c == RKNN_TENSOR_INT16 ? 32767 : 2147483647LL;
        expected = static_cast<double>(std::clamp(sum, -limit - 1, limit));
      } else {
        for (std::size_t k = 0; k < K; ++k) {
          const double av = a[m * K + k] - (a_int ? q.a_zp : 0);
          const double bv = b[k * N + n] - (b_int ? q.b_zp[b_param(k, n)] : 0);
          expected += av * (b_int ? bv * q.b_scale[b_param(k, n)] : bv);
        }
        if (a_int) expected *= q.a_scale;
        if (tc.c == RKNN_TENSOR_INT8)
          expected = std::clamp(std::nearbyint(expected / q.c_scale) + q.c_zp, -128.0, 127.0);
      }
      const double got = read_c(c_bytes, tc.c, c_index(io.C, m, n, M, N));
      double tolerance = 0;  // integers: exact
      if (tc.c == RKNN_TENSOR_FLOAT32) tolerance = std::abs(expected) * 1e-6 + 1e-6;
      if (tc.c == RKNN_TENSOR_FLOAT16) tolerance = std::abs(expected) * 0x1p-11 + 0x1p-24;
      if (tc.c == RKNN_TENSOR_BFLOAT16) tolerance = std::abs(expected) * 0x1p-8;
      if (std::abs(got - expected) > tolerance && ++mismatches <= 3)
        FAIL_CHECK("C[" << m << "][" << n << "] = " << got << ", expected " << expected);
    }
  CHECK(mismatches == 0);
  CHECK(rknn_destroy_mem(ctx, mem_a) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, mem_b) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, mem_c) == RKNN_SUCC);
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
}

int n_for(const TypeCase& tc) { return tc.b == Kind::i4 ? 64 : 32; }

struct PlatformScope {  // RKNNXX_HOST_PLATFORM for one test case
  explicit PlatformScope(const char* name) { setenv("RKNNXX_HOST_PLATFORM", name, 1); }
  ~PlatformScope() { unsetenv("RKNNXX_HOST_PLATFORM"); }
};

}  // namespace

TEST_CASE("every matmul type, every layout, equals the naive reference (RK3588)") {
  for (const TypeCase& tc : all_types)
    for (int b_layout : {RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_TP_NORM})
      for (int ac_layout : {RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NATIVE})
        check_matmul(tc, {5, 64, n_for(tc), b_layout, ac_layout});
}

TEST_CASE("quantization: per-layer asymmetric, per-channel and per-group B, int8 C") {
  const TypeCase int8_to_int8 = all_types[2];
  Quant layer;
  layer.b_quant_type = RKNN_QUANT_TYPE_PER_LAYER_ASYM;
  layer.a_scale = 0.05f;
  layer.a_zp = 3;
  layer.b_scale = {0.02f};
  layer.b_zp = {-5};
  layer.c_scale = 2.5f;
  layer.c_zp = -7;
  check_matmul(int8_to_int8, {4, 64, 32}, layer);

  Quant channel;
  channel.b_quant_type = RKNN_QUANT_TYPE_PER_CHANNEL_SYM;
  channel.b_scale.clear();
  for (int n = 0; n < 64; ++n) channel.b_scale.push_back(0.01f * static_cast<float>(n + 1));
  channel.b_zp.assign(64, 0);
  check_matmul(all_types[6], {3, 64, 64}, channel);   // float16 x int4 -> float32
  check_matmul(all_types[10], {3, 64, 64}, channel);  // int8 x int4 -> int32: B brought to one scale

  Quant group;
  group.b_quant_type = RKNN_QUANT_TYPE_PER_GROUP_SYM;
  group.group_size = 32;
  group.b_scale.clear();
  for (int i = 0; i < 32 * 2; ++i) group.b_scale.push_back(0.5f + 0.125f * static_cast<float>(i % 7));
  group.b_zp.assign(64, 0);
  check_matmul(all_types[8], {2, 64, 32}, group);  // int8 x int8 -> float32, per group
}

TEST_CASE("io_attr: the dims and sizes of the layouts (docs/matmul.md)") {
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof info);
  info.M = 4;
  info.K = 64;
  info.N = 32;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  info.B_layout = RKNN_MM_LAYOUT_NATIVE;
  info.AC_layout = RKNN_MM_LAYOUT_NATIVE;
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  REQUIRE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC);
  CHECK(io.A.n_dims == 3);
  CHECK((io.A.dims[0] == 4 && io.A.dims[1] == 4 && io.A.dims[2] == 16));  // [K/16, M, 16]
  CHECK(io.A.size == 4 * 64);
  CHECK(io.B.n_dims == 4);
  CHECK((io.B.dims[0] == 1 && io.B.dims[1] == 2 && io.B.dims[2] == 32 && io.B.dims[3] == 32));
  CHECK(io.C.n_dims == 3);
  CHECK((io.C.dims[0] == 8 && io.C.dims[1] == 4 && io.C.dims[2] == 4));  // [N/4, M, 4] for int32
  CHECK(io.C.size == 4 * 32 * 4);
  CHECK(io.A.type == RKNN_TENSOR_INT8);
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);

  info.type = RKNN_FLOAT16_MM_INT4_TO_FLOAT16;
  info.N = 64;
  info.B_layout = RKNN_MM_LAYOUT_TP_NORM;
  REQUIRE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC);
  CHECK((io.B.n_dims == 2 && io.B.dims[0] == 64 && io.B.dims[1] == 64));  // [N, K]
  CHECK(io.B.size == 64 * 64 / 2);
  CHECK((io.A.dims[0] == 8 && io.A.dims[2] == 8));  // float16 A: subK 8
  CHECK((io.C.dims[0] == 8 && io.C.dims[2] == 8));  // float16 C: subN 8
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
}

TEST_CASE("rknn_B_normal_layout_to_native_layout, with B in segments past K 8192 on RK3588") {
  for (int k : {64, 8192 + 64}) {
    CAPTURE(k);
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof info);
    info.M = 1;
    info.K = k;
    info.N = 32;
    info.type = RKNN_INT8_MM_INT8_TO_INT32;
    info.B_layout = RKNN_MM_LAYOUT_NATIVE;
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    REQUIRE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC);
    const std::size_t K = static_cast<std::size_t>(k), N = 32;
    std::vector<std::int8_t> normal(K * N), native(io.B.size), expected(io.B.size);
    for (std::size_t i = 0; i < normal.size(); ++i) normal[i] = static_cast<std::int8_t>(i * 7 % 251);
    for (std::size_t kk = 0; kk < K; ++kk)
      for (std::size_t n = 0; n < N; ++n) expected[b_index(io.B, 1, kk, n, K, N, 8192)] = normal[kk * N + n];
    REQUIRE(rknn_B_normal_layout_to_native_layout(normal.data(), native.data(), k, 32, &info) == RKNN_SUCC);
    CHECK(native == expected);
    CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
  }
  check_matmul(all_types[1], {2, 8192 + 64, 32, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_NORM});
}

TEST_CASE("dynamic shapes: one context, several M, switched with rknn_matmul_set_dynamic_shape") {
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof info);
  info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
  info.B_layout = RKNN_MM_LAYOUT_NATIVE;
  rknn_matmul_shape shapes[] = {{1, 64, 32}, {4, 64, 32}, {9, 64, 32}};
  rknn_matmul_io_attr io[3];
  rknn_matmul_ctx ctx = 0;
  REQUIRE_MESSAGE(rknn_matmul_create_dynamic_shape(&ctx, &info, 3, shapes, io) == RKNN_SUCC, last_error());
  CHECK(io[0].A.dims[0] == 1);
  CHECK(io[2].A.dims[0] == 9);
  CHECK(io[2].C.size == 9 * 32 * 4);
  rknn_tensor_mem* a = rknn_create_mem(ctx, io[2].A.size);
  rknn_tensor_mem* b = rknn_create_mem(ctx, io[2].B.size);
  rknn_tensor_mem* c = rknn_create_mem(ctx, io[2].C.size);
  REQUIRE((a && b && c));
  // A = ones, B native with B[k][n] = n: C[m][n] = 64 n for every m.
  auto* a_half = static_cast<std::uint16_t*>(a->virt_addr);
  for (int i = 0; i < 9 * 64; ++i) a_half[i] = Float16(1.0f).bits();
  std::vector<std::uint16_t> b_normal(64 * 32);
  for (int k = 0; k < 64; ++k)
    for (int n = 0; n < 32; ++n) b_normal[static_cast<std::size_t>(k * 32 + n)] = Float16(static_cast<float>(n)).bits();
  REQUIRE(rknn_B_normal_layout_to_native_layout(b_normal.data(), b->virt_addr, 64, 32, &info) == RKNN_SUCC);
  for (int s = 0; s < 3; ++s) {
    CAPTURE(s);
    REQUIRE(rknn_matmul_set_dynamic_shape(ctx, &shapes[s]) == RKNN_SUCC);
    REQUIRE(rknn_matmul_set_io_mem(ctx, a, &io[s].A) == RKNN_SUCC);
    REQUIRE(rknn_matmul_set_io_mem(ctx, b, &io[s].B) == RKNN_SUCC);
    REQUIRE(rknn_matmul_set_io_mem(ctx, c, &io[s].C) == RKNN_SUCC);
    std::memset(c->virt_addr, 0, io[2].C.size);
    REQUIRE_MESSAGE(rknn_matmul_run(ctx) == RKNN_SUCC, last_error());
    const auto* out = static_cast<const float*>(c->virt_addr);
    for (int m = 0; m < shapes[s].M; ++m)
      for (int n = 0; n < 32; ++n) CHECK(out[m * 32 + n] == doctest::Approx(64.0 * n));
    CHECK(out[shapes[s].M * 32] == 0.0f);  // nothing written past the current shape's C
  }
  rknn_matmul_shape unknown{2, 64, 32};
  CHECK(rknn_matmul_set_dynamic_shape(ctx, &unknown) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("not one of the 3 shapes") != std::string::npos);
  rknn_matmul_shape other_k[] = {{1, 64, 32}, {1, 128, 32}};
  rknn_matmul_ctx ctx2 = 0;
  CHECK(rknn_matmul_create_dynamic_shape(&ctx2, &info, 2, other_k, io) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("only B_layout 2") != std::string::npos);
  info.B_layout = RKNN_MM_LAYOUT_TP_NORM;
  REQUIRE(rknn_matmul_create_dynamic_shape(&ctx2, &info, 2, other_k, io) == RKNN_SUCC);
  CHECK(io[1].B.dims[1] == 128);
  CHECK(rknn_matmul_destroy(ctx2) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, a) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, b) == RKNN_SUCC);
  CHECK(rknn_destroy_mem(ctx, c) == RKNN_SUCC);
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
}

TEST_CASE("quant params: get returns what set stored, and B's common scale") {
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof info);
  info.M = 2;
  info.K = 64;
  info.N = 32;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  info.B_quant_type = RKNN_QUANT_TYPE_PER_CHANNEL_SYM;
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  REQUIRE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC);
  std::vector<float> scales(32);
  for (int n = 0; n < 32; ++n) scales[static_cast<std::size_t>(n)] = 0.25f + 0.01f * static_cast<float>(n);
  REQUIRE(set_quant(ctx, "B", scales, {}) == RKNN_SUCC);
  rknn_quant_params p;
  std::memset(&p, 0, sizeof p);
  std::snprintf(p.name, sizeof p.name, "B");
  std::vector<float> got(32);
  p.scale = got.data();
  p.scale_len = 32;
  float common = 0;
  REQUIRE(rknn_matmul_get_quant_params(ctx, &p, &common) == RKNN_SUCC);
  CHECK(got == scales);
  CHECK(common == scales.back());
  // Wrong counts, names and values are refused with the reason.
  CHECK(set_quant(ctx, "B", {1.0f}, {}) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("B takes 32 scale(s)") != std::string::npos);
  CHECK(set_quant(ctx, "D", {1.0f}, {}) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("\"D\"") != std::string::npos);
  CHECK(set_quant(ctx, "A", {-1.0f}, {}) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("finite and positive") != std::string::npos);
  CHECK(set_quant(ctx, "B", scales, std::vector<int>(32, 1)) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("symmetric") != std::string::npos);
  CHECK(set_quant(ctx, "C", {1.0f}, {}) == RKNN_ERR_PARAM_INVALID);  // an int32 C takes none
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
}

TEST_CASE("misuse: refused with RKNN_ERR_PARAM_INVALID and a reason, never a crash") {
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof info);
  info.M = 4;
  info.K = 48;
  info.N = 32;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("K=48 must be a multiple of 32") != std::string::npos);
  info.K = 64;
  info.N = 48;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("N=48 must be a multiple of 32") != std::string::npos);
  info.N = 32;
  info.M = 0;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  info.M = 0x10000;
  info.K = 0x10000;  // M x K bytes do not fit the 32-bit size field
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("32-bit size") != std::string::npos);
  info.M = 4;
  info.K = 64;
  info.type = static_cast<rknn_matmul_type>(13);
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("type 13") != std::string::npos);
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  info.AC_layout = RKNN_MM_LAYOUT_TP_NORM;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  info.AC_layout = 0;
  info.AC_quant_type = 1;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  info.AC_quant_type = 0;
  info.B_quant_type = RKNN_QUANT_TYPE_PER_GROUP_SYM;  // group_size 0
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  info.B_quant_type = 0;
  CHECK(rknn_matmul_create(nullptr, &info, &io) == RKNN_ERR_PARAM_INVALID);
  CHECK(rknn_matmul_create(&ctx, &info, nullptr) == RKNN_ERR_PARAM_INVALID);

  REQUIRE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC);
  CHECK(rknn_matmul_run(ctx) == RKNN_ERR_PARAM_INVALID);  // nothing bound
  CHECK(last_error().find("no memory is bound to A") != std::string::npos);
  rknn_tensor_mem* small = rknn_create_mem(ctx, 16);
  REQUIRE(small != nullptr);
  CHECK(rknn_matmul_set_io_mem(ctx, small, &io.A) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("16 bytes") != std::string::npos);
  CHECK(rknn_matmul_set_core_mask(ctx, RKNN_NPU_CORE_0_1_2) == RKNN_SUCC);
  CHECK(rknn_matmul_set_core_mask(ctx, static_cast<rknn_core_mask>(5)) == RKNN_ERR_PARAM_INVALID);
  CHECK(rknn_destroy_mem(ctx, small) == RKNN_SUCC);
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
  CHECK(rknn_matmul_destroy(ctx) == RKNN_ERR_CTX_INVALID);
  CHECK(rknn_matmul_run(ctx) == RKNN_ERR_CTX_INVALID);
  CHECK(rknn_create_mem(ctx, 16) == nullptr);  // a destroyed matmul context owns no new memory
}

TEST_CASE("RKNNXX_HOST_PLATFORM: the blocking and core rules of another platform") {
  PlatformScope rk3566("RK3566");
  rknn_matmul_info info;
  std::memset(&info, 0, sizeof info);
  info.M = 4;
  info.K = 32;
  info.N = 16;
  info.type = RKNN_INT8_MM_INT8_TO_INT32;
  info.B_layout = RKNN_MM_LAYOUT_NATIVE;
  info.AC_layout = RKNN_MM_LAYOUT_NATIVE;
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  REQUIRE_MESSAGE(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC, last_error());
  CHECK((io.A.dims[0] == 4 && io.A.dims[2] == 8));                          // RK3566 int8 A: subK 8
  CHECK((io.B.dims[2] == 16 && io.B.dims[3] == 32));                        // (subN, subK) = (16, 32)
  CHECK(rknn_matmul_set_core_mask(ctx, RKNN_NPU_CORE_0) == RKNN_ERR_FAIL);  // single core
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC);
  check_matmul(all_types[1], {3, 32, 16, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_NATIVE});
  info.type = RKNN_INT4_MM_INT4_TO_INT16;
  info.N = 64;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID);
  CHECK(last_error().find("RKNN_INT4_MM_INT4_TO_INT16 is not supported on RK3566") != std::string::npos);
}
