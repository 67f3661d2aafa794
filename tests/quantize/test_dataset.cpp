// The calibration dataset reader: the toolkit's DATASET.txt, images and .npy arrays, MaxShape.
#include "dataset.hpp"
#include "scratch_dir.hpp"

#include <rknnxx/io/npy.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#ifdef RKNNXX_QUANTIZE_IMAGES
#include "../../examples/ocr/image.hpp"
#endif

#include <filesystem>
#include <fstream>
#include <string>

using namespace rknnxx::host;
using namespace rknnxx::host::quantize;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& p, std::string_view text) { std::ofstream(p, std::ios::binary) << text; }

std::string error_of(const auto& f) {
  try {
    f();
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

CalibrationInput nchw(std::string name, std::vector<std::int64_t> shape) {
  CalibrationInput in;
  in.name = std::move(name);
  in.shape = std::move(shape);
  return in;
}

}  // namespace

TEST_CASE("parse: one sample per line, files separated by spaces, relative to the dataset's folder") {
  const auto samples = parse_dataset("a.npy b.npy\n\n  /abs/c.npy\td.png  \r\n", "/data/set", 2, "ds.txt");
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].line == 1);
  CHECK(samples[0].files[0] == fs::path("/data/set/a.npy"));
  CHECK(samples[0].files[1] == fs::path("/data/set/b.npy"));
  CHECK(samples[1].line == 3);
  CHECK(samples[1].files[0] == fs::path("/abs/c.npy"));
  CHECK(samples[1].files[1] == fs::path("/data/set/d.png"));
}

TEST_CASE("parse: a wrong count of files, a NUL byte or no sample is one line naming the dataset line") {
  CHECK(error_of([] { (void)parse_dataset("a.npy b.npy\nc.npy\n", "/d", 2, "ds.txt"); }) ==
        "ds.txt:2: 1 file for a model of 2 inputs (one file per input, separated by spaces, on each line)");
  CHECK(error_of([] {
          (void)parse_dataset(std::string_view("a.npy\0b", 7), "/d", 1, "ds.txt");
        }).starts_with("ds.txt:1: a NUL byte"));
  CHECK(error_of([] { (void)parse_dataset(" \n\n", "/d", 1, "ds.txt"); }).starts_with("ds.txt: no samples"));
  CHECK(error_of([] { (void)read_dataset("/nonexistent/ds.txt", 1); }).find("cannot open") != std::string::npos);
}

TEST_CASE("npy samples: the calibration shape exactly, input dtypes, mean/std as the runtime applies them") {
  const rknnxx::test::TempDir dir;
  const std::vector<std::int64_t> shape{1, 2, 1, 2};
  const std::vector<float> values{10, 20, 30, 40};
  rknnxx::io::write_npy(dir.path() / "a.npy", std::span<const std::int64_t>(shape), std::span<const float>(values));
  const std::vector<std::int64_t> other{1, 2, 2, 2};
  const std::vector<float> eight(8, 1.0f);
  rknnxx::io::write_npy(dir.path() / "big.npy", std::span<const std::int64_t>(other), std::span<const float>(eight));
  const std::vector<std::int64_t> ints{1, 2, 3, 4};
  rknnxx::io::write_npy(dir.path() / "ints.npy", std::span<const std::int64_t>(shape),
                        std::span<const std::int64_t>(ints));
  write_text(dir.path() / "ds.txt", "a.npy\nbig.npy\nints.npy\nmissing.npy\nnotes.txt\n");
  const auto samples = read_dataset(dir.path() / "ds.txt", 1);
  REQUIRE(samples.size() == 5);

  CalibrationInput in = nchw("x", shape);
  in.mean = {10, 20};
  in.std = {2, 4};
  const auto tensors = load_sample(samples[0], std::span(&in, 1), "ds.txt");
  REQUIRE(tensors.size() == 1);
  const auto got = tensors[0].values<float>();
  CHECK(got[0] == 0.0f);  // (10 - 10) / 2
  CHECK(got[1] == 5.0f);  // (20 - 10) / 2
  CHECK(got[2] == 2.5f);  // (30 - 20) / 4
  CHECK(got[3] == 5.0f);  // (40 - 20) / 4

  CHECK(error_of([&] { (void)load_sample(samples[1], std::span(&in, 1), "ds.txt"); }) ==
        fmt::format("ds.txt:2: {}: shape [1, 2, 2, 2], input 'x' is calibrated with shape [1, 2, 1, 2]",
                    (dir.path() / "big.npy").string()));
  CHECK(error_of([&] {
          (void)load_sample(samples[2], std::span(&in, 1), "ds.txt");
        }).find("dtype int64 is not an input type") != std::string::npos);
  CHECK(error_of([&] { (void)load_sample(samples[3], std::span(&in, 1), "ds.txt"); }) ==
        fmt::format("ds.txt:4: {}: no such file", (dir.path() / "missing.npy").string()));
  write_text(dir.path() / "notes.txt", "x");
  CHECK(error_of([&] {
          (void)load_sample(samples[4], std::span(&in, 1), "ds.txt");
        }).find("unknown file type '.txt'") != std::string::npos);
  write_text(dir.path() / "a.npy", "not an array");
  CHECK(error_of([&] { (void)load_sample(samples[0], std::span(&in, 1), "ds.txt"); }).starts_with("ds.txt:1: "));
}

TEST_CASE("calibration inputs: the MaxShape group of dynamic_input; a dynamic model needs one") {
  rknnxx::toolkit::Config config;
  const std::vector<rknnxx::toolkit::ModelInput> model{{"a", {1, -1}, -1}, {"b", {1, -1}, -1}};
  CHECK(error_of([&] { (void)calibration_inputs(model, config); }).find("input 'a' has the dynamic shape [1, -1]") !=
        std::string::npos);
  config.dynamic_input = rknnxx::toolkit::DynamicInput{{{1, 112}, {1, 80}}, {{1, 224}, {1, 40}}};
  config.quant_img_RGB2BGR = {false, true};
  const auto inputs = calibration_inputs(model, config);
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].shape == std::vector<std::int64_t>{1, 224});  // 224 + 40 = 264 > 112 + 80 = 192
  CHECK(inputs[1].shape == std::vector<std::int64_t>{1, 40});
  CHECK(!inputs[0].rgb2bgr);
  CHECK(inputs[1].rgb2bgr);
}

#ifdef RKNNXX_QUANTIZE_IMAGES
TEST_CASE("image samples: resized bilinear to the calibration shape, RGB2BGR per input, mean/std") {
  const rknnxx::test::TempDir dir;
  rknnxx::image::Image img(4, 2, 3);
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x) {
      img.at(x, y)[0] = 200;                                // R
      img.at(x, y)[1] = 100;                                // G
      img.at(x, y)[2] = static_cast<std::uint8_t>(x * 10);  // B varies
    }
  rknnxx::image::write_image(dir.path() / "img.png", img);
  write_text(dir.path() / "bad.png", "not a png");
  write_text(dir.path() / "ds.txt", "img.png\nbad.png\n");
  const auto samples = read_dataset(dir.path() / "ds.txt", 1);

  CalibrationInput in = nchw("image", {1, 3, 2, 8});
  auto t = load_sample(samples[0], std::span(&in, 1));
  REQUIRE(t[0].shape() == std::vector<std::int64_t>{1, 3, 2, 8});
  const auto rgb = t[0].values<float>();
  const auto expected = rknnxx::image::resize(img, 8, 2);
  for (int x = 0; x < 8; ++x) {
    CHECK(rgb[static_cast<std::size_t>(x)] == 200.0f);                     // channel 0 = R
    CHECK(rgb[32 + static_cast<std::size_t>(x)] == expected.at(x, 0)[2]);  // channel 2 = B, resized
  }

  in.rgb2bgr = true;
  in.mean = {0, 100, 0};
  in.std = {1, 1, 2};
  t = load_sample(samples[0], std::span(&in, 1));
  const auto bgr = t[0].values<float>();
  CHECK(bgr[0] == expected.at(0, 0)[2]);  // channel 0 = B
  CHECK(bgr[16] == 0.0f);                 // G - 100
  CHECK(bgr[32] == 100.0f);               // R / 2

  CHECK(error_of([&] {
          (void)load_sample(samples[1], std::span(&in, 1), "ds.txt");
        }).find("not a readable PNG or JPEG image") != std::string::npos);
  CalibrationInput gray = nchw("g", {1, 1, 2, 2});
  CHECK(error_of([&] {
          (void)load_sample(samples[0], std::span(&gray, 1), "ds.txt");
        }).find("a RGB image for input 'g', which takes 1 channel") != std::string::npos);
  CalibrationInput flat = nchw("f", {1, 12});
  CHECK(error_of([&] { (void)load_sample(samples[0], std::span(&flat, 1), "ds.txt"); }).find("does not take images") !=
        std::string::npos);
}
#endif
