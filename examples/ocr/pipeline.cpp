#include "pipeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace rknnxx::ocr {

Letterbox letterbox(const image::Image& rgb, int width, int height, const std::uint8_t (&fill)[3]) {
  Letterbox out;
  out.scale = std::min(static_cast<double>(width) / rgb.width, static_cast<double>(height) / rgb.height);
  const int w = std::clamp(static_cast<int>(std::lround(rgb.width * out.scale)), 1, width);
  const int h = std::clamp(static_cast<int>(std::lround(rgb.height * out.scale)), 1, height);
  out.input = image::Image(width, height, 3);
  for (std::size_t i = 0; i < out.input.pixels.size(); i += 3)
    for (std::size_t k = 0; k < 3; ++k) out.input.pixels[i + k] = fill[k];
  image::paste(out.input, w == rgb.width && h == rgb.height ? rgb : image::resize(rgb, w, h), 0, 0);
  return out;
}

std::vector<TextBox> find_text_boxes(std::span<const float> probability, int width, int height,
                                     const DbParams& params) {
  const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height);
  if (probability.size() != w * h)
    throw std::invalid_argument(
        fmt::format("find_text_boxes: {} probabilities for a {}x{} map", probability.size(), width, height));
  // 8-connected regions of text pixels (what contour tracing in PaddleOCR finds), by flood fill.
  std::vector<std::uint8_t> seen(w * h, 0);
  std::vector<std::size_t> stack;
  std::vector<TextBox> boxes;
  for (std::size_t start = 0; start < w * h; ++start) {
    if (seen[start] || probability[start] <= params.threshold) continue;
    std::size_t x0 = w, y0 = h, x1 = 0, y1 = 0;
    seen[start] = 1;
    stack.assign(1, start);
    while (!stack.empty()) {
      const std::size_t p = stack.back();
      stack.pop_back();
      const std::size_t px = p % w, py = p / w;
      x0 = std::min(x0, px), x1 = std::max(x1, px), y0 = std::min(y0, py), y1 = std::max(y1, py);
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const auto nx = static_cast<std::ptrdiff_t>(px) + dx, ny = static_cast<std::ptrdiff_t>(py) + dy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          const std::size_t q = static_cast<std::size_t>(ny) * w + static_cast<std::size_t>(nx);
          if (seen[q] || probability[q] <= params.threshold) continue;
          seen[q] = 1;
          stack.push_back(q);
        }
    }
    const double bw = static_cast<double>(x1 - x0 + 1), bh = static_cast<double>(y1 - y0 + 1);
    if (std::min(bw, bh) < params.min_size) continue;
    // Box score as PaddleOCR's "fast" mode: the mean probability over the box.
    double sum = 0;
    for (std::size_t y = y0; y <= y1; ++y)
      for (std::size_t x = x0; x <= x1; ++x) sum += probability[y * w + x];
    const auto score = static_cast<float>(sum / (bw * bh));
    if (score < params.box_threshold) continue;
    // Unclip: offset every side by area * ratio / perimeter (pyclipper's offset of a rectangle).
    const double d = bw * bh * params.unclip_ratio / (2 * (bw + bh));
    const double ex0 = static_cast<double>(x0) - d, ey0 = static_cast<double>(y0) - d;
    const double ew = bw + 2 * d, eh = bh + 2 * d;
    if (std::min(ew, eh) < params.min_size + 2) continue;
    boxes.push_back({image::Rect{static_cast<int>(std::lround(ex0)), static_cast<int>(std::lround(ey0)),
                                 static_cast<int>(std::lround(ew)), static_cast<int>(std::lround(eh))},
                     score});
  }
  // Reading order: by top edge, and boxes whose tops are within half a line height of each
  // other are one line, read left to right (PaddleOCR's sorted_boxes uses 10 px).
  std::sort(boxes.begin(), boxes.end(), [](const TextBox& a, const TextBox& b) {
    return a.rect.y != b.rect.y ? a.rect.y < b.rect.y : a.rect.x < b.rect.x;
  });
  for (std::size_t i = 1; i < boxes.size(); ++i)
    for (std::size_t j = i; j > 0; --j) {
      const auto& a = boxes[j - 1].rect;
      const auto& b = boxes[j].rect;
      if (std::abs(b.y - a.y) * 2 < std::min(a.height, b.height) && b.x < a.x) std::swap(boxes[j - 1], boxes[j]);
      else break;
    }
  return boxes;
}

image::Rect to_image(const image::Rect& box, double scale, int image_width, int image_height) {
  const auto map = [&](int v, int limit) { return std::clamp(static_cast<int>(std::lround(v / scale)), 0, limit); };
  const int x0 = map(box.x, image_width), y0 = map(box.y, image_height);
  const int x1 = map(box.x + box.width, image_width), y1 = map(box.y + box.height, image_height);
  return {x0, y0, x1 - x0, y1 - y0};
}

Dictionary Dictionary::load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open the dictionary", path.string()));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  if (lines.empty()) throw std::runtime_error(fmt::format("{}: the dictionary is empty", path.string()));
  return Dictionary(std::move(lines));
}

Recognition ctc_greedy_decode(std::span<const float> probabilities, std::size_t steps, const Dictionary& dictionary) {
  const std::size_t classes = dictionary.classes();
  if (probabilities.size() != steps * classes)
    throw std::invalid_argument(
        fmt::format("ctc_greedy_decode: {} values for {} steps of {} classes (the dictionary's)", probabilities.size(),
                    steps, classes));
  Recognition out;
  double sum = 0;
  std::size_t kept = 0, previous = 0;
  for (std::size_t t = 0; t < steps; ++t) {
    const auto row = probabilities.subspan(t * classes, classes);
    const auto best = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
    if (best != 0 && best != previous) {
      out.text += dictionary.text_of(best);
      sum += row[best];
      ++kept;
    }
    previous = best;
  }
  out.confidence = kept ? static_cast<float>(sum / static_cast<double>(kept)) : 0.0F;
  return out;
}

LineInput line_input(const image::Image& crop, int height, std::span<const int> widths) {
  if (widths.empty()) throw std::invalid_argument("line_input: no widths to choose from");
  const int needed =
      std::max(1, static_cast<int>(std::ceil(static_cast<double>(height) * crop.width / std::max(1, crop.height))));
  int chosen = *std::max_element(widths.begin(), widths.end());
  for (int w : widths)
    if (w >= needed && w < chosen) chosen = w;
  LineInput out;
  out.width = chosen;
  out.input = image::Image(chosen, height, 3, 127);
  image::paste(out.input, image::resize(crop, std::min(needed, chosen), height), 0, 0);
  return out;
}

}  // namespace rknnxx::ocr
