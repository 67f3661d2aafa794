// A quantized (w8a8) model through the runtime layer: the small CNN of
// tests/host_runtime/make_int8_model.py, converted with `rknnxx convert --dataset` by
// run_runtime_tests.sh. Context attributes, outputs as float32 and as int8 with copy()
// dequantizing, and IoBinding with BindAs float32 and native int8 NC1HWC2 over the int8 outputs.
#include <rknnxx/runtime/context.hpp>
#include <rknnxx/runtime/io_binding.hpp>
#include <rknnxx/tensor/convert.hpp>
#include <rknnxx/tensor/view.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace rknnxx;

namespace {

std::string int8_model() {
  const char* dir = std::getenv("RKNNXX_INT8_MODEL_DIR");
  REQUIRE_MESSAGE(dir != nullptr, "run through run_runtime_tests.sh, which converts the quantized model");
  const std::string path = std::string(dir) + "/small_cnn_int8.hrknn";
  REQUIRE_MESSAGE(std::filesystem::exists(path), path << " was not made (see the convert log next to it)");
  return path;
}

std::vector<std::uint8_t> image(std::uint32_t seed) {
  std::vector<std::uint8_t> img(8 * 8 * 3);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<std::uint8_t>((i * 29 + seed * 83) % 256);
  return img;
}

constexpr Extents4 y_extents{.n = 1, .c = 4, .h = 8, .w = 8};

// y (want_float: dequantized by the runtime) for an image, through the general flow.
std::vector<float> general_y(Context& ctx, const std::vector<std::uint8_t>& img) {
  ctx.set_inputs(nhwc_view(img.data(), {.n = 1, .c = 3, .h = 8, .w = 8}));
  ctx.run();
  auto out = ctx.outputs();
  const auto v = out["y"].as<float>();
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("a quantized model through Context: INT8 AFFINE attributes, float and int8 outputs") {
  auto ctx = Context::from_file(int8_model());
  CHECK(ctx.custom_string() == "rknnxx runtime tests: a w8a8 model");
  const TensorInfo& in = ctx.current_inputs().at(0);
  CHECK(in.type() == TensorType::int8);
  CHECK(in.format() == TensorFormat::nhwc);
  CHECK(in.dims() == Dims{1, 8, 8, 3});
  CHECK(in.quantization().affine);
  CHECK(in.quantization().scale > 0.0f);
  const TensorInfo& y = ctx.current_outputs().at(0);
  CHECK(y.type() == TensorType::int8);
  CHECK(y.dims() == Dims{1, 4, 8, 8});
  const Quantization yq = y.quantization();
  REQUIRE(yq.affine);

  const auto img = image(1);
  const std::vector<float> want = general_y(ctx, img);
  REQUIRE(want.size() == 256);
  CHECK(want != general_y(ctx, image(2)));  // the comparisons below are not vacuous

  // The outputs as the model's int8: a typed view carries the quantization, and copy() dequantizes.
  ctx.set_inputs(nhwc_view(img.data(), {.n = 1, .c = 3, .h = 8, .w = 8}));
  ctx.run();
  auto raw = ctx.outputs(OutputType::native);
  const OutputData y_raw = raw["y"];
  REQUIRE(y_raw.type() == TensorType::int8);
  const auto q = y_raw.as<std::int8_t>();
  REQUIRE(q.size() == 256);
  for (std::size_t i = 0; i < q.size(); ++i) CHECK(yq.dequantize(q[i]) == want[i]);
  std::vector<float> dequantized(256);
  copy(y_raw.view<std::int8_t, layout::NCHW>(), nchw_view(dequantized.data(), y_extents));
  CHECK(dequantized == want);
}

TEST_CASE("a quantized model through IoBinding: uint8 input, outputs bound float32 or native int8") {
  auto ctx = Context::from_file(int8_model());
  const auto img = image(3);
  const std::vector<float> want = general_y(ctx, img);

  // The board's zero-copy demo: a UINT8 NHWC input the NPU normalizes and quantizes; outputs the
  // runtime writes dequantized.
  {
    IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::type(TensorType::float32));
    CHECK(io.bound_output("y").type() == TensorType::float32);
    io.write("image", nhwc_view(img.data(), {.n = 1, .c = 3, .h = 8, .w = 8}));
    io.run();
    const auto y = io.output<float>("y");
    CHECK(std::vector<float>(y.begin(), y.end()) == want);
  }
  // Outputs in their native int8 layout (NC1HWC2, C2 = 16 on RK3588): read() unblocks and dequantizes.
  {
    IoBinding io(ctx, BindAs::type(TensorType::uint8, TensorFormat::nhwc), BindAs::native_layout());
    const TensorInfo& bound = io.bound_output("y");
    CHECK(bound.type() == TensorType::int8);
    CHECK(bound.format() == TensorFormat::nc1hwc2);
    CHECK(bound.dims() == Dims{1, 1, 8, 8, 16});
    CHECK(bound.quantization() == ctx.current_outputs().at(0).quantization());
    io.write("image", nhwc_view(img.data(), {.n = 1, .c = 3, .h = 8, .w = 8}));
    io.run();
    std::vector<float> y(256);
    io.read("y", nchw_view(y.data(), y_extents));
    CHECK(y == want);
    // The raw window: channel c of pixel 0 is lane c of the first block.
    const auto blocked = io.output<std::int8_t>("y");
    for (std::size_t c = 0; c < 4; ++c) CHECK(bound.quantization().dequantize(blocked[c]) == want[c * 64]);
  }
}
