#pragma once
// The calibration dataset in the toolkit's format (docs/quantization.md): a text file with one
// sample per line; a sample of a model with several inputs lists one file per input, separated by
// spaces, in the model's input order. Each file is an image (.jpg, .jpeg, .png, .bmp) or a NumPy
// array (.npy); a relative path is relative to the dataset file's folder.
//
// Images are resized (bilinear, as OpenCV's resize) to the calibration shape, swapped to BGR when
// quant_img_RGB2BGR asks for it, and normalized with the config's mean and std; arrays must have
// the calibration shape exactly and are normalized as the runtime normalizes 4-D inputs. For a
// dynamic model the calibration shape is the MaxShape group of dynamic_input.
//
// Every problem is a DatasetError whose message is one line naming the dataset line and the file.

#include "tensor.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::host::quantize {

class DatasetError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct DatasetSample {
  std::size_t line = 0;                      // 1-based line of the dataset file
  std::vector<std::filesystem::path> files;  // one per model input, relative paths resolved
};

// Parses the dataset text (no file is opened). `source` names the file in messages; `base` is the
// folder relative paths resolve against. Blank lines are skipped; a line with another number of
// files than `inputs`, a NUL byte, or a text without any sample is refused.
std::vector<DatasetSample> parse_dataset(std::string_view text, const std::filesystem::path& base, std::size_t inputs,
                                         std::string_view source = "dataset");
// Reads and parses a dataset file (relative paths resolve against its folder).
std::vector<DatasetSample> read_dataset(const std::filesystem::path& path, std::size_t inputs);

// How one model input is fed during calibration.
struct CalibrationInput {
  std::string name;
  std::vector<std::int64_t> shape;  // the calibration shape, in the model's (ONNX) order
  bool rgb2bgr = false;             // quant_img_RGB2BGR (images only)
  std::vector<double> mean;         // per channel; empty: 0
  std::vector<double> std;          // per channel; empty: 1
};

// The calibration inputs of a model with these inputs (names and declared shapes, a negative
// dimension being dynamic) under `config`: the MaxShape group of dynamic_input when it is set,
// else the model's shapes, which must then be fixed. Throws DatasetError naming the input.
std::vector<CalibrationInput> calibration_inputs(std::span<const rknnxx::toolkit::ModelInput> inputs,
                                                 const rknnxx::toolkit::Config& config);

// Whether this build reads images (stb_image available); without it only .npy samples load.
bool reads_images() noexcept;

// Loads one sample as float32 tensors in input order. Throws DatasetError.
std::vector<Tensor> load_sample(const DatasetSample& sample, std::span<const CalibrationInput> inputs,
                                std::string_view source = "dataset");

}  // namespace rknnxx::host::quantize
