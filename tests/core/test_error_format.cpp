#include <doctest/doctest.h>
#include <rknnxx/core/format.hpp>

#include <fmt/format.h>

#include <cstring>

using namespace rknnxx;

TEST_CASE("error: the rknn category and the exception's context") {
  const std::error_code ec = Errc::param_invalid;
  CHECK(ec.value() == -5);
  CHECK(std::string(ec.category().name()) == "rknn");
  CHECK(ec.message() == "RKNN_ERR_PARAM_INVALID (invalid parameter)");
  CHECK(std::error_code(Errc::incompatile_pre_compile_model) == Errc::incompatible_pre_compile_model);
  CHECK(make_error_code(static_cast<Errc>(-99)).message() == "unknown rknn return code -99");
  CHECK(errc_name(Errc::incompatile_optimization_level_version) == "RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION");

  const Error e(Errc::input_invalid, "rknn_set_io_mem", "expected NHWC, given NC1HWC2", TensorId::input(0, "images"));
  CHECK(std::string(e.what()) ==
        "rknn_set_io_mem(input 0 \"images\"): expected NHWC, given NC1HWC2: RKNN_ERR_INPUT_INVALID (invalid input)");
  CHECK(e.call() == "rknn_set_io_mem");
  CHECK(e.tensor().index == 0u);
  CHECK(e.tensor().name == "images");
  CHECK(e.errc() == Errc::input_invalid);
  CHECK(e.code() == Errc::input_invalid);
  const std::system_error& base = e;  // catchable as the standard type
  CHECK(base.code().category() == rknn_category());

  CHECK_FALSE(to_error_code(RKNN_SUCC));
  CHECK(to_error_code(RKNN_ERR_MODEL_INVALID) == Errc::model_invalid);
  CHECK(to_error_code(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE) == Errc::skip_custom_op_compute);
  CHECK_NOTHROW(check(RKNN_SUCC, "rknn_run"));
  try {
    check(RKNN_ERR_TIMEOUT, "rknn_run", TensorId::output(2));
    FAIL("check did not throw");
  } catch (const Error& err) {
    CHECK(err.errc() == Errc::timeout);
    CHECK(std::string(err.what()) == "rknn_run(output 2): RKNN_ERR_TIMEOUT (execution timed out)");
  }
}

TEST_CASE("format: one-line dumps like the runtime's") {
  CHECK(fmt::format("{}", Dims{1, 3, 224, 224}) == "[1, 3, 224, 224]");
  CHECK(fmt::format("{}", Dims{}) == "[]");
  CHECK(fmt::format("{} {} {} {}", TensorType::float16, TensorFormat::nc1hwc2, Platform::rv1106b, Errc::ctx_invalid) ==
        "FP16 NC1HWC2 RV1106B RKNN_ERR_CTX_INVALID");
  CHECK(fmt::format("{:>6}", TensorType::int8) == "  INT8");
  CHECK(fmt::format("{}", CoreMask::core_0_1_2) == "0x7");
  CHECK(fmt::format("{} {} {}", Float16(1.5f), BFloat16(-2.0f), Int4(-3)) == "1.5 -2 -3");
  CHECK(fmt::format("{} {}", layout::NHWC{}, layout::Undefined{}) == "NHWC UNDEFINED");
  CHECK(fmt::format("{}", layout::NC1HWC2::mapping({1, 255, 80, 80}, 8)) == "NC1HWC2 [1, 32, 80, 80, 8], span=1638400");
  CHECK(fmt::format("{}", RuntimeLayout(TensorFormat::nhwc, {1, 224, 225, 3}, 232)) ==
        "NHWC [1, 224, 225, 3], w_stride=232, h_stride=0");
  CHECK(fmt::format("{}", Extents4{3, 19, 4, 5}) == "n=3, c=19, h=4, w=5");
  CHECK(fmt::format("{}", geometry<Platform::rk3568, std::int8_t, layout::NC1HWC2>({1, 255, 80, 80})) ==
        "fmt=NC1HWC2, type=INT8, dims=[1, 32, 80, 80, 8], n_elems=1632000, size=1632000, w_stride=80, h_stride=80, "
        "size_with_stride=1638400, channels=255");
  CHECK(fmt::format("{}", platform_traits<Platform::rk3568>.matmul_float16) ==
        "k_align=16, n_align=8, a_sub_k=4, b_sub_n=8, b_sub_k=16");
  CHECK(fmt::format("{}", platform_traits<Platform::rk3588>).find("matmul_int4={k_align=32, n_align=64") !=
        std::string::npos);
  CHECK(fmt::format("{}", TensorId::input(1, "x")) == "input 1 \"x\"");
}

TEST_CASE("format: shape sets and the query structs") {
  constexpr ShapeSet seed{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}, Dims{1, 80}}}};
  CHECK(fmt::format("{}", seed) == "[[[1, 224], [1, 40]], [[1, 112], [1, 80]]]");
  CHECK(fmt::format("MaxShape is dynamic_input[{}] = [{}, {}]", seed.max_shape_index(), seed.max_shape()[0],
                    seed.max_shape()[1]) == "MaxShape is dynamic_input[0] = [[1, 224], [1, 40]]");
  CHECK(fmt::format("{}", ShapeSet<>(seed)) == fmt::format("{}", seed));

  rknn_input_range r{};
  std::strcpy(r.name, "data");
  r.shape_number = 2;
  r.n_dims = 4;
  r.fmt = RKNN_TENSOR_NHWC;
  const std::uint32_t shapes[2][4] = {{1, 224, 224, 3}, {1, 112, 224, 3}};
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 4; ++k) r.dyn_range[s][k] = shapes[s][k];
  // The toolkit's dump, character for character.
  CHECK(fmt::format("{}", r) ==
        "index=0, name=data, shape_number=2, range=[[1, 224, 224, 3],[1, 112, 224, 3]], fmt = NHWC");

  rknn_tensor_attr a{};
  geometry<Platform::rk3588, std::uint8_t, layout::NHWC>({1, 224, 224, 3}).fill(a);
  std::strcpy(a.name, "data");
  a.qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
  a.zp = -128;
  a.scale = 0.5f;
  CHECK(fmt::format("{}", a) ==
        "index=0, name=data, n_dims=4, dims=[1, 224, 224, 3], n_elems=150528, size=150528, w_stride = 224, "
        "size_with_stride=150528, fmt=NHWC, type=UINT8, qnt_type=AFFINE, zp=-128, scale=0.500000");
  // A name without its terminator is bounded by the array, and n_dims beyond 16 is clamped.
  std::memset(a.name, 'x', sizeof a.name);
  a.n_dims = 40;
  CHECK(fmt::format("{}", a).find(std::string(256, 'x') + ", n_dims=40") != std::string::npos);
  CHECK(fmt::format("{}", rknn_input_output_num{1, 3}) == "model input num: 1, output num: 3");
}
