// OCR with PaddleOCR v4 (text detection + recognition) through rknnxx: the same binary runs on a
// board with the vendor runtime (librknnrt.so, .rknn models from the vendor toolkit) and on a PC
// with the host runtime (.hrknn models from `rknnxx convert`); RKNNXX_RUNTIME=vendor|host|PATH
// forces one.
//
//   ocr IMAGE [--models DIR] [--det MODEL] [--rec MODEL] [--dict FILE] [--output PNG]
//
// DIR defaults to build/models/ocr-converted (where ./scripts/demo.sh puts the converted models),
// holding det.hrknn, rec.hrknn and dict.txt. Both models are converted with a dynamic_input shape
// set and mean/std (examples/ocr/det.json, rec.json): the application feeds uint8 RGB NHWC, picks
// the detector's shape closest to the image's aspect and, per text line, the narrowest recognizer
// width that holds it.

#include "image.hpp"
#include "pipeline.hpp"

#include <rknnxx/runtime/context.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  fs::path image;
  fs::path det, rec, dict;
  fs::path output;
};

[[noreturn]] void usage_error(const std::string& what) {
  throw std::invalid_argument(fmt::format(
      "{}\nusage: ocr IMAGE [--models DIR] [--det MODEL] [--rec MODEL] [--dict FILE] [--output PNG]", what));
}

Options parse(int argc, char** argv) {
  Options o;
  fs::path models = "build/models/ocr-converted";
  std::optional<fs::path> det, rec, dict;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> fs::path {
      if (i + 1 >= argc) usage_error(fmt::format("{} needs a value", arg));
      return argv[++i];
    };
    if (arg == "--models") models = value();
    else if (arg == "--det") det = value();
    else if (arg == "--rec") rec = value();
    else if (arg == "--dict") dict = value();
    else if (arg == "--output" || arg == "-o") o.output = value();
    else if (arg == "-h" || arg == "--help") usage_error("OCR of the text lines in IMAGE");
    else if (!arg.empty() && arg[0] == '-') usage_error(fmt::format("unknown option {}", arg));
    else if (o.image.empty()) o.image = arg;
    else usage_error(fmt::format("one image at a time ({} and {} given)", o.image.string(), arg));
  }
  if (o.image.empty()) usage_error("no image given");
  o.det = det.value_or(models / "det.hrknn");
  o.rec = rec.value_or(models / "rec.hrknn");
  o.dict = dict.value_or(models / "dict.txt");
  if (o.output.empty()) o.output = o.image.stem().string() + "_ocr.png";
  for (const auto& [path, what] :
       {std::pair{o.det, "detection model"}, std::pair{o.rec, "recognition model"}, std::pair{o.dict, "dictionary"}})
    if (!fs::exists(path))
      throw std::runtime_error(fmt::format(
          "{}: no such file (the {}; ./scripts/demo.sh makes it, or give --models DIR)", path.string(), what));
  return o;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The detector's shape group whose aspect is nearest the image's (of equal aspects, the largest).
// A static model has one shape: its current one.
std::optional<std::size_t> detector_group(const rknnxx::Context& det, const rknnxx::image::Image& rgb) {
  if (!det.is_dynamic()) return std::nullopt;
  const auto& set = *det.shape_set();
  const double aspect = std::log(static_cast<double>(rgb.height) / rgb.width);
  std::size_t best = 0;
  double best_cost = 1e300;
  for (std::size_t g = 0; g < set.num_shapes(); ++g) {
    const auto& d = set.shape(g, 0);  // NHWC
    const double cost =
        std::abs(std::log(static_cast<double>(d[1]) / d[2]) - aspect) * 1e6 - static_cast<double>(d[1]) * d[2];
    if (cost < best_cost) best_cost = cost, best = g;
  }
  return best;
}

// The recognizer's widths, one per shape group (a static model: its one width).
std::vector<int> recognizer_widths(const rknnxx::Context& rec) {
  std::vector<int> widths;
  if (!rec.is_dynamic()) {
    widths.push_back(static_cast<int>(rec.current_inputs().at(0).dims()[2]));
    return widths;
  }
  const auto& set = *rec.shape_set();
  for (std::size_t g = 0; g < set.num_shapes(); ++g) widths.push_back(static_cast<int>(set.shape(g, 0)[2]));
  return widths;
}

int run(const Options& o) {
  using namespace rknnxx;
  const auto t_start = Clock::now();
  const image::Image rgb = image::to_rgb(image::read_image(o.image));
  const auto dictionary = ocr::Dictionary::load(o.dict);

  auto det = Context::from_file(o.det.string());
  auto rec = Context::from_file(o.rec.string());
  const auto& rt = det.runtime();
  const auto sdk = det.sdk_version();
  fmt::print("runtime: {} ({}), SDK {}, driver {}\n", rt.is_host() ? "host" : "vendor", rt.path(), sdk.api, sdk.driver);

  // Detection: letterbox into the detector's input, probability map, boxes.
  auto t0 = Clock::now();
  if (const auto g = detector_group(det, rgb)) det.set_input_shapes(*g);
  const Dims din = det.current_inputs().at(0).dims();  // [1, H, W, 3]
  const int det_h = static_cast<int>(din[1]), det_w = static_cast<int>(din[2]);
  const std::uint8_t mean_rgb[3] = {124, 116, 104};  // det.json's mean_values: padding normalises to ~0
  const auto boxed = ocr::letterbox(rgb, det_w, det_h, mean_rgb);
  det.set_inputs(nhwc_view(boxed.input.pixels.data(), {.n = 1, .c = 3, .h = din[1], .w = din[2]}));
  det.run();
  std::vector<ocr::TextBox> boxes;
  {
    const auto out = det.outputs();
    const auto prob = out[0].as<float>();
    boxes = ocr::find_text_boxes(prob, det_w, det_h);
  }
  const double det_ms = ms_since(t0);

  // Recognition: each box cropped, scaled to the recognizer's height and the narrowest width that holds it.
  t0 = Clock::now();
  const auto widths = recognizer_widths(rec);
  const int rec_h = static_cast<int>(rec.current_inputs().at(0).dims()[1]);
  image::Image annotated = rgb;
  int lines = 0;
  fmt::print("{} text box{} in {} ({}x{}; detector input {}x{})\n", boxes.size(), boxes.size() == 1 ? "" : "es",
             o.image.string(), rgb.width, rgb.height, det_w, det_h);
  for (const auto& box : boxes) {
    const image::Rect r = ocr::to_image(box.rect, boxed.scale, rgb.width, rgb.height);
    if (r.width < 2 || r.height < 2) continue;
    const auto line = ocr::line_input(image::crop(rgb, r), rec_h, widths);
    if (rec.is_dynamic()) {
      const auto w = static_cast<std::size_t>(std::find(widths.begin(), widths.end(), line.width) - widths.begin());
      if (rec.current_shape_group() != w) rec.set_input_shapes(w);
    }
    rec.set_inputs(nhwc_view(
        line.input.pixels.data(),
        {.n = 1, .c = 3, .h = static_cast<std::uint32_t>(rec_h), .w = static_cast<std::uint32_t>(line.width)}));
    rec.run();
    const auto out = rec.outputs();
    const Dims od = out[0].dims();  // [1, steps, classes]
    if (od.rank() != 3 || od[2] != dictionary.classes())
      throw std::runtime_error(
          fmt::format("the recognizer outputs {} classes, the dictionary {} has {} (blank + lines + space)",
                      od.rank() == 3 ? od[2] : 0, o.dict.string(), dictionary.classes()));
    const auto text = ocr::ctc_greedy_decode(out[0].as<float>(), od[1], dictionary);
    if (text.text.empty()) continue;
    ++lines;
    fmt::print("  [{:4d},{:4d} {:4d}x{:<3d}] {:.3f}  {}\n", r.x, r.y, r.width, r.height, text.confidence, text.text);
    image::draw_rect(annotated, r, {230, 40, 40}, 2);
  }
  const double rec_ms = ms_since(t0);
  image::write_image(o.output, annotated);
  fmt::print("{} line{} read; detection {:.0f} ms, recognition {:.0f} ms, total {:.0f} ms; annotated image: {}\n",
             lines, lines == 1 ? "" : "s", det_ms, rec_ms, ms_since(t_start), o.output.string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "ocr: {}\n", e.what());
    return 1;
  }
}
