// The dataset file's text: parsed apart from loading the samples, so that the parser can be
// fuzzed on its own (tests/fuzz/dataset_fuzz.cpp) without the engine.
#include "dataset.hpp"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace rknnxx::host::quantize {

std::vector<DatasetSample> parse_dataset(std::string_view text, const std::filesystem::path& base, std::size_t inputs,
                                         std::string_view source) {
  std::vector<DatasetSample> samples;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (line.find('\0') != std::string_view::npos)
      throw DatasetError(fmt::format("{}:{}: a NUL byte: a dataset is a text file of paths", source, line_number));
    DatasetSample sample{line_number, {}};
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      std::size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      if (j > i) {
        const std::filesystem::path file(std::string(line.substr(i, j - i)));
        sample.files.push_back(file.is_absolute() ? file : base / file);
      }
      i = j;
    }
    if (sample.files.empty()) continue;
    if (sample.files.size() != inputs)
      throw DatasetError(fmt::format("{}:{}: {} file{} for a model of {} input{} (one file per input, separated by "
                                     "spaces, on each line)",
                                     source, line_number, sample.files.size(), sample.files.size() == 1 ? "" : "s",
                                     inputs, inputs == 1 ? "" : "s"));
    samples.push_back(std::move(sample));
  }
  if (samples.empty())
    throw DatasetError(fmt::format("{}: no samples (one line per sample, listing its files)", source));
  return samples;
}

std::vector<DatasetSample> read_dataset(const std::filesystem::path& path, std::size_t inputs) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw DatasetError(fmt::format("{}: is a directory, not a dataset file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DatasetError(fmt::format("{}: cannot open the dataset file", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw DatasetError(fmt::format("{}: read error", path.string()));
  const std::filesystem::path base = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  return parse_dataset(text.str(), base, inputs, path.string());
}

}  // namespace rknnxx::host::quantize
