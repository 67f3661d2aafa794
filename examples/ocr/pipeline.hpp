#pragma once
// PaddleOCR's text detection (DB) and recognition (CTC) around the models, without the models:
// what the application does before and after each inference. Follows PaddleOCR's
// DBPostProcess and CTCLabelDecode, with axis-aligned boxes (the example reads horizontal text).
//
// The normalisation PaddleOCR applies ((x - mean) / std) is not here: the models are converted with
// mean_values/std_values (examples/ocr/det.json, rec.json), so the application feeds uint8 RGB, and
// the runtime normalises, as the NPU does on a board.

#include "image.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rknnxx::ocr {

// An image placed in a fixed-size input: scaled by `scale` (aspect kept) to the top-left corner,
// the rest filled. Detector coordinates divided by scale are image coordinates.
struct Letterbox {
  image::Image input;  // width x height, RGB
  double scale = 1.0;
};

// The fill is the normalisation mean, so that the padding normalises to 0 (what a model trained on
// unpadded images sees as "nothing").
[[nodiscard]] Letterbox letterbox(const image::Image& rgb, int width, int height, const std::uint8_t (&fill)[3]);

struct DbParams {
  float threshold = 0.3F;      // text pixel when probability > threshold
  float box_threshold = 0.6F;  // keep a box whose mean probability is >= this
  float unclip_ratio = 1.5F;   // DB's shrunk kernels grow back by area * ratio / perimeter
  int min_size = 3;            // smaller sides are noise
};

struct TextBox {
  image::Rect rect;  // in the coordinates of the probability map
  float score = 0;   // mean probability inside the unexpanded box
};

// Connected regions of the thresholded probability map (height x width, row-major) as boxes,
// expanded by the unclip rule, sorted top to bottom then left to right (a line at a time).
[[nodiscard]] std::vector<TextBox> find_text_boxes(std::span<const float> probability, int width, int height,
                                                   const DbParams& params = {});

// Box in map coordinates -> box in the image the letterbox was made from (clamped to it).
[[nodiscard]] image::Rect to_image(const image::Rect& box, double scale, int image_width, int image_height);

// PaddleOCR's character list: class 0 is the CTC blank, class i the dictionary's line i (1-based),
// and the class after the last line the space.
class Dictionary {
public:
  explicit Dictionary(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  [[nodiscard]] static Dictionary load(const std::filesystem::path& path);
  // The number of classes the recognizer must output: blank + lines + space.
  [[nodiscard]] std::size_t classes() const noexcept { return lines_.size() + 2; }
  [[nodiscard]] std::string_view text_of(std::size_t cls) const noexcept {
    if (cls == 0) return {};
    if (cls <= lines_.size()) return lines_[cls - 1];
    return " ";
  }

private:
  std::vector<std::string> lines_;
};

struct Recognition {
  std::string text;
  float confidence = 0;  // mean of the kept characters' probabilities (0 when nothing was read)
};

// Greedy CTC: the most likely class per time step, repeats merged, blanks dropped.
// probabilities: steps x classes, row-major (the recognizer's softmax output for one image).
[[nodiscard]] Recognition ctc_greedy_decode(std::span<const float> probabilities, std::size_t steps,
                                            const Dictionary& dictionary);

// The recognizer's input for one text crop: scaled to `height` with the aspect kept, to the
// smallest of `widths` that holds it (or squeezed into the largest), padded right with grey
// (127: normalises to 0 with mean = std = 127.5, as PaddleOCR pads).
struct LineInput {
  image::Image input;
  int width = 0;  // the chosen width, one of `widths`
};
[[nodiscard]] LineInput line_input(const image::Image& crop, int height, std::span<const int> widths);

}  // namespace rknnxx::ocr
