#pragma once
// What the tool's SVG charts share (profile's bar chart, accuracy's cosine plot): escaping, the
// document's opening with its title, and writing the file.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace rknnxx::tool {

// Text for XML content and attribute values.
[[nodiscard]] std::string xml_escaped(std::string_view text);
// At most `max` characters (max >= 4), "..." ending a cut text.
[[nodiscard]] std::string shortened(std::string_view text, std::size_t max);

// The opening of a chart of width x height pixels: the svg element, a white background, the title
// in bold and a grey subtitle under it (both escaped), 56 pixels tall together. Close it with
// svg_end.
[[nodiscard]] std::string svg_begin(int width, int height, std::string_view title, std::string_view subtitle);
inline constexpr std::string_view svg_end = "</svg>\n";

// Writes `text` to `path` (replacing it). Throws std::runtime_error "OPTION PATH: cannot be
// written (why)" naming the option that chose the path.
void write_text_file(const std::filesystem::path& path, std::string_view text, std::string_view option);

}  // namespace rknnxx::tool
