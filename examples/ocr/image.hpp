#pragma once
// 8-bit images for the OCR example and the rknnxx tool: read PNG/JPEG (stb_image), write PNG,
// bilinear resize, crop, and rectangles for annotation. Pixels are interleaved (HWC), rows packed.
// Errors are ImageError with one line naming the file and the problem.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace rknnxx::image {

class ImageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;                  // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  std::vector<std::uint8_t> pixels;  // height * width * channels

  Image() = default;
  Image(int w, int h, int c, std::uint8_t fill = 0);

  [[nodiscard]] std::uint8_t* at(int x, int y) noexcept {
    return pixels.data() +
        (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)) *
        static_cast<std::size_t>(channels);
  }
  [[nodiscard]] const std::uint8_t* at(int x, int y) const noexcept { return const_cast<Image*>(this)->at(x, y); }
};

struct Rect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

// "gray", "gray+alpha", "RGB", "RGBA".
[[nodiscard]] std::string channel_name(int channels);

// Reads a PNG, JPEG (or BMP/TGA/PNM: what stb_image reads) with the channels the file has.
[[nodiscard]] Image read_image(const std::filesystem::path& path);
// Gray and alpha images to RGB (alpha composited over white, as a viewer shows it); RGB unchanged.
[[nodiscard]] Image to_rgb(const Image& image);
// Writes a PNG; the format follows the extension (.png, .jpg/.jpeg).
void write_image(const std::filesystem::path& path, const Image& image);

// Bilinear resize with pixel centres at half-integers (what OpenCV's INTER_LINEAR does).
[[nodiscard]] Image resize(const Image& image, int width, int height);
// The part of the image inside rect (clamped to the image).
[[nodiscard]] Image crop(const Image& image, Rect rect);
// Copies src into dst with its top-left corner at (x, y); both with the same channel count.
void paste(Image& dst, const Image& src, int x, int y);
// A rectangle outline `thickness` pixels wide, in colour rgb (the first `channels` bytes used).
void draw_rect(Image& image, Rect rect, const std::uint8_t (&rgb)[3], int thickness = 2);

}  // namespace rknnxx::image
