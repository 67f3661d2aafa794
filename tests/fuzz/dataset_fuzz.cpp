// libFuzzer target for the calibration dataset's text (host/quantize/dataset_text.cpp): any input
// either parses into samples of exactly `inputs` files each, or throws DatasetError. Anything else
// (a crash, a sanitizer report, another exception) is a bug. Run with tests/fuzz/run_dataset.sh.
#include "quantize/dataset.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the model's input count (1..4); the rest is the dataset text.
  const std::size_t inputs = 1 + data[0] % 4;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const auto samples = rknnxx::host::quantize::parse_dataset(text, "/base", inputs, "fuzz.txt");
    std::size_t previous = 0;
    for (const auto& s : samples) {
      if (s.files.size() != inputs || s.line <= previous) std::abort();
      previous = s.line;
    }
  } catch (const rknnxx::host::quantize::DatasetError&) {}
  return 0;
}
