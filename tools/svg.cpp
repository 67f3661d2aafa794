#include "svg.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace rknnxx::tool {

std::string xml_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string shortened(std::string_view text, std::size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max - 3)) + "...";
}

std::string svg_begin(int width, int height, std::string_view title, std::string_view subtitle) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                     "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
                     "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                     "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{2}</text>\n"
                     "<text x=\"12\" y=\"42\" fill=\"#555\">{3}</text>\n",
                     width, height, xml_escaped(title), xml_escaped(subtitle));
}

void write_text_file(const std::filesystem::path& path, std::string_view text, std::string_view option) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.close();
  if (!out)
    throw std::runtime_error(fmt::format("{} {}: cannot be written ({})", option, path.string(), std::strerror(errno)));
}

}  // namespace rknnxx::tool
