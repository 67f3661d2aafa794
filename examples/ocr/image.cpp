// stb_image reads, stb_image_write writes (Debian libstb-dev: headers in /usr/include/stb; the
// implementations are compiled here, so nothing links against libstb.so). They are system
// headers, so their own warnings stay out of our -Werror build.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "image.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <system_error>

namespace rknnxx::image {

Image::Image(int w, int h, int c, std::uint8_t fill)
    : width(w), height(h), channels(c),
      pixels(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * static_cast<std::size_t>(c), fill) {}

std::string channel_name(int channels) {
  switch (channels) {
    case 1: return "gray";
    case 2: return "gray+alpha";
    case 3: return "RGB";
    case 4: return "RGBA";
    default: return fmt::format("{} channels", channels);
  }
}

Image read_image(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw ImageError(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(path, ec))
    throw ImageError(fmt::format("{}: is a directory, not an image", path.string()));
  int w = 0, h = 0, c = 0;
  const std::unique_ptr<stbi_uc, void (*)(void*)> data(stbi_load(path.c_str(), &w, &h, &c, 0), stbi_image_free);
  if (!data)
    throw ImageError(fmt::format("{}: not a readable PNG or JPEG image ({})", path.string(), stbi_failure_reason()));
  Image image(w, h, c);
  std::memcpy(image.pixels.data(), data.get(), image.pixels.size());
  return image;
}

Image to_rgb(const Image& image) {
  if (image.channels == 3) return image;
  Image rgb(image.width, image.height, 3);
  const std::size_t n = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height);
  const auto c = static_cast<std::size_t>(image.channels);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* p = image.pixels.data() + i * c;
    const bool gray = image.channels <= 2;
    const int alpha = image.channels == 2 ? p[1] : image.channels == 4 ? p[3] : 255;
    for (std::size_t k = 0; k < 3; ++k) {
      const int v = gray ? p[0] : p[k];
      rgb.pixels[i * 3 + k] = static_cast<std::uint8_t>((v * alpha + 255 * (255 - alpha) + 127) / 255);
    }
  }
  return rgb;
}

void write_image(const std::filesystem::path& path, const Image& image) {
  auto ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  int ok = 0;
  if (ext == ".jpg" || ext == ".jpeg")
    ok = stbi_write_jpg(path.c_str(), image.width, image.height, image.channels, image.pixels.data(), 90);
  else if (ext == ".png")
    ok = stbi_write_png(path.c_str(), image.width, image.height, image.channels, image.pixels.data(),
                        image.width * image.channels);
  else throw ImageError(fmt::format("{}: cannot write images of type '{}' (use .png or .jpg)", path.string(), ext));
  if (ok == 0) throw ImageError(fmt::format("{}: could not write the image", path.string()));
}

Image resize(const Image& image, int width, int height) {
  if (width <= 0 || height <= 0) throw ImageError(fmt::format("cannot resize to {}x{}", width, height));
  Image out(width, height, image.channels);
  const double sx = static_cast<double>(image.width) / width;
  const double sy = static_cast<double>(image.height) / height;
  const auto c = static_cast<std::size_t>(image.channels);
  for (int y = 0; y < height; ++y) {
    const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, image.height - 1.0);
    const int y0 = static_cast<int>(fy);
    const int y1 = std::min(y0 + 1, image.height - 1);
    const double wy = fy - y0;
    for (int x = 0; x < width; ++x) {
      const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, image.width - 1.0);
      const int x0 = static_cast<int>(fx);
      const int x1 = std::min(x0 + 1, image.width - 1);
      const double wx = fx - x0;
      const std::uint8_t *a = image.at(x0, y0), *b = image.at(x1, y0), *d = image.at(x0, y1), *e = image.at(x1, y1);
      std::uint8_t* o = out.at(x, y);
      for (std::size_t k = 0; k < c; ++k) {
        const double v = (a[k] * (1 - wx) + b[k] * wx) * (1 - wy) + (d[k] * (1 - wx) + e[k] * wx) * wy;
        o[k] = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
      }
    }
  }
  return out;
}

Image crop(const Image& image, Rect rect) {
  const int x0 = std::clamp(rect.x, 0, image.width), y0 = std::clamp(rect.y, 0, image.height);
  const int x1 = std::clamp(rect.x + rect.width, x0, image.width);
  const int y1 = std::clamp(rect.y + rect.height, y0, image.height);
  Image out(x1 - x0, y1 - y0, image.channels);
  const auto row = static_cast<std::size_t>(out.width) * static_cast<std::size_t>(image.channels);
  for (int y = 0; y < out.height; ++y)
    if (row > 0) std::memcpy(out.at(0, y), image.at(x0, y0 + y), row);
  return out;
}

void paste(Image& dst, const Image& src, int x, int y) {
  if (dst.channels != src.channels)
    throw ImageError(fmt::format("paste: {} into {}", channel_name(src.channels), channel_name(dst.channels)));
  for (int sy = 0; sy < src.height; ++sy) {
    const int dy = y + sy;
    if (dy < 0 || dy >= dst.height) continue;
    for (int sx = 0; sx < src.width; ++sx) {
      const int dx = x + sx;
      if (dx < 0 || dx >= dst.width) continue;
      std::memcpy(dst.at(dx, dy), src.at(sx, sy), static_cast<std::size_t>(src.channels));
    }
  }
}

void draw_rect(Image& image, Rect rect, const std::uint8_t (&rgb)[3], int thickness) {
  const auto put = [&](int x, int y) {
    if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
    std::uint8_t* p = image.at(x, y);
    for (int k = 0; k < std::min(image.channels, 3); ++k) p[k] = rgb[k];
  };
  for (int t = 0; t < thickness; ++t) {
    const int left = rect.x - t, top = rect.y - t, right = rect.x + rect.width - 1 + t,
              bottom = rect.y + rect.height - 1 + t;
    for (int x = left; x <= right; ++x) {
      put(x, top);
      put(x, bottom);
    }
    for (int y = top; y <= bottom; ++y) {
      put(left, y);
      put(right, y);
    }
  }
}

}  // namespace rknnxx::image
