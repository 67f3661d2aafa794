#include "dataset.hpp"

#include <rknnxx/core/dims.hpp>
#include <rknnxx/io/npy.hpp>

#ifdef RKNNXX_QUANTIZE_IMAGES
#include "../../examples/ocr/image.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace rknnxx::host::quantize {

namespace {

std::string lower_extension(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

bool is_image(const std::string& ext) { return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp"; }

// (x - mean[c]) / std[c] over axis 1 of a 4-D NCHW tensor, as the runtime normalizes 4-D inputs
// (docs/quantization.md); other ranks are taken as they are.
void normalize(Tensor& t, const CalibrationInput& input) {
  if (t.rank() != 4 || (input.mean.empty() && input.std.empty())) return;
  const auto n = static_cast<std::size_t>(t.dim(0));
  const auto c = static_cast<std::size_t>(t.dim(1));
  const auto plane = static_cast<std::size_t>(t.dim(2) * t.dim(3));
  float* data = t.data<float>();
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t k = 0; k < c; ++k) {
      const double mean = k < input.mean.size() ? input.mean[k] : 0.0;
      const double deviation = k < input.std.size() ? input.std[k] : 1.0;
      float* p = data + (b * c + k) * plane;
      for (std::size_t i = 0; i < plane; ++i) p[i] = static_cast<float>((p[i] - mean) / deviation);
    }
}

Tensor load_npy(const std::filesystem::path& path, const CalibrationInput& input) {
  io::NpyArray array;
  try {
    array = io::read_npy(path);
  } catch (const io::NpyError& e) {
    throw DatasetError(e.what());
  }
  if (array.shape != input.shape)
    throw DatasetError(fmt::format("{}: shape {}, input '{}' is calibrated with shape {}", path.string(),
                                   dims_text(array.shape), input.name, dims_text(input.shape)));
  Tensor t(DataType::float32, input.shape);
  float* out = t.data<float>();
  const std::size_t n = array.element_count();
  switch (array.type) {
    case io::NpyType::float32: std::copy_n(array.values<float>().data(), n, out); break;
    case io::NpyType::float64:
      std::transform(array.values<double>().begin(), array.values<double>().end(), out,
                     [](double v) { return static_cast<float>(v); });
      break;
    case io::NpyType::float16:
      std::transform(array.values<std::uint16_t>().begin(), array.values<std::uint16_t>().end(), out,
                     [](std::uint16_t bits) { return half_bits_to_float(bits); });
      break;
    case io::NpyType::uint8: std::copy_n(array.values<std::uint8_t>().data(), n, out); break;
    case io::NpyType::int8: std::copy_n(array.values<std::int8_t>().data(), n, out); break;
    default:
      throw DatasetError(fmt::format("{}: dtype {} is not an input type (float32, float16, float64, uint8 or int8)",
                                     path.string(), io::npy_type_name(array.type)));
  }
  normalize(t, input);
  return t;
}

#ifdef RKNNXX_QUANTIZE_IMAGES
Tensor load_image(const std::filesystem::path& path, const CalibrationInput& input) {
  const auto& s = input.shape;
  if (s.size() != 4 || s[0] != 1 || (s[1] != 1 && s[1] != 3))
    throw DatasetError(
        fmt::format("{}: input '{}' of shape {} does not take images (they need [1,3,H,W] or [1,1,H,W]); "
                    "give an .npy array",
                    path.string(), input.name, dims_text(s)));
  image::Image img;
  try {
    img = image::read_image(path);
  } catch (const image::ImageError& e) {
    throw DatasetError(e.what());
  }
  if (s[1] == 1 && img.channels != 1)
    throw DatasetError(fmt::format("{}: a {} image for input '{}', which takes 1 channel (gray)", path.string(),
                                   image::channel_name(img.channels), input.name));
  if (s[1] == 3) img = image::to_rgb(img);
  const auto height = static_cast<int>(s[2]);
  const auto width = static_cast<int>(s[3]);
  if (img.width != width || img.height != height) img = image::resize(img, width, height);
  Tensor t(DataType::float32, s);
  float* out = t.data<float>();
  const auto channels = static_cast<std::size_t>(s[1]);
  const std::size_t plane = static_cast<std::size_t>(width) * static_cast<std::size_t>(height);
  for (std::size_t c = 0; c < channels; ++c) {
    const std::size_t from = input.rgb2bgr && channels == 3 ? 2 - c : c;
    for (std::size_t i = 0; i < plane; ++i) out[c * plane + i] = img.pixels[i * channels + from];
  }
  normalize(t, input);
  return t;
}
#endif

}  // namespace

bool reads_images() noexcept {
#ifdef RKNNXX_QUANTIZE_IMAGES
  return true;
#else
  return false;
#endif
}

std::vector<CalibrationInput> calibration_inputs(std::span<const rknnxx::toolkit::ModelInput> inputs,
                                                 const rknnxx::toolkit::Config& config) {
  const auto group = config.max_shape_group();
  if (config.dynamic_input && group && (*config.dynamic_input)[*group].size() != inputs.size())
    throw DatasetError(fmt::format("dynamic_input gives {} shapes per group, the model has {} inputs",
                                   (*config.dynamic_input)[*group].size(), inputs.size()));
  std::vector<CalibrationInput> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    CalibrationInput in;
    in.name = inputs[i].name;
    in.shape = group ? (*config.dynamic_input)[*group][i] : inputs[i].shape;
    if (std::any_of(in.shape.begin(), in.shape.end(), [](std::int64_t d) { return d < 0; }))
      throw DatasetError(fmt::format("input '{}' has the dynamic shape {}: give dynamic_input in the config to choose "
                                     "the shapes (calibration uses its MaxShape group)",
                                     in.name, dims_text(in.shape)));
    in.rgb2bgr = config.rgb2bgr_for(i);
    if (config.mean_values && i < config.mean_values->size()) in.mean = (*config.mean_values)[i];
    if (config.std_values && i < config.std_values->size()) in.std = (*config.std_values)[i];
    out.push_back(std::move(in));
  }
  return out;
}

std::vector<Tensor> load_sample(const DatasetSample& sample, std::span<const CalibrationInput> inputs,
                                std::string_view source) {
  if (sample.files.size() != inputs.size())
    throw DatasetError(fmt::format("{}:{}: {} files for a model of {} inputs", source, sample.line, sample.files.size(),
                                   inputs.size()));
  std::vector<Tensor> tensors;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& file = sample.files[i];
    try {
      std::error_code ec;
      if (!std::filesystem::exists(file, ec)) throw DatasetError(fmt::format("{}: no such file", file.string()));
      const std::string ext = lower_extension(file);
      if (ext == ".npy") {
        tensors.push_back(load_npy(file, inputs[i]));
      } else if (is_image(ext)) {
#ifdef RKNNXX_QUANTIZE_IMAGES
        tensors.push_back(load_image(file, inputs[i]));
#else
        throw DatasetError(
            fmt::format("{}: this rknnxx was built without stb (libstb-dev): give .npy arrays", file.string()));
#endif
      } else {
        throw DatasetError(fmt::format("{}: unknown file type '{}' (a dataset lists .jpg, .png, .bmp or .npy files)",
                                       file.string(), ext));
      }
    } catch (const DatasetError& e) {
      throw DatasetError(fmt::format("{}:{}: {}", source, sample.line, e.what()));
    } catch (const std::exception& e) {  // allocation or engine errors while loading
      throw DatasetError(fmt::format("{}:{}: {}: {}", source, sample.line, file.string(), e.what()));
    }
  }
  return tensors;
}

}  // namespace rknnxx::host::quantize
