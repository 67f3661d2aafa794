#pragma once
// A model input read from a file for `rknnxx run` and `rknnxx bench`: a .npy array (float32,
// float16, uint8 or int8; in the runtime's NHWC order or the model's NCHW order) or a PNG/JPEG
// image (resized to the input's height and width, stretched or letterboxed, uint8 NHWC, RGB or
// BGR; its channel count must be the input's). What cannot be fed is an exception whose message
// names the file and the problem.

#include <rknnxx/runtime/context.hpp>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/element_type.hpp>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/tensor/attr.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rknnxx::tool {

struct InputFile {
  std::filesystem::path path;
  std::vector<std::byte> bytes;
  TensorType type = TensorType::uint8;
  TensorFormat format = TensorFormat::nhwc;
  std::vector<std::int64_t> shape;  // as the file gives it
  std::string kind;                 // "npy" or "image"
};

// The file's dims as the runtime would report them for an input (4-D: NHWC), when it is a .npy;
// nullopt for an image (it takes any size). For choosing a shape of a dynamic model.
[[nodiscard]] std::optional<std::vector<std::int64_t>> npy_shape(const std::filesystem::path& path);

// How an image becomes an input: stretched to the input's size, or scaled to fit with its aspect
// ratio kept and centred on gray (114, as YOLO-style detectors are trained: "letterbox"); channels
// in the file's RGB order or swapped to BGR (for models converted from BGR-trained networks).
enum class ResizeMode : std::uint8_t { stretch, letterbox };
struct ImageOptions {
  ResizeMode resize = ResizeMode::stretch;
  bool bgr = false;
};

// Reads `path` for the input described by `info` (the current attribute: 4-D inputs NHWC).
[[nodiscard]] InputFile read_input(const std::filesystem::path& path, const TensorInfo& info, ImageOptions image = {});

// For a dynamic model, switches to the shape group named by --shape texts (one per input, "1x3x48x320"
// or "1,48,320,3": the runtime's NHWC order or the model's NCHW order), else to the group the .npy
// files fit, else keeps group 0 (the MaxShape). Returns a line saying what was chosen (empty for a
// static model). --shape on a static model, or a shape outside the set, throws naming it.
std::string select_shape(Context& ctx, std::span<const std::string> shape_texts, std::span<const std::string> files);

// One file per input, read for the current shape; then fed with rknn_inputs_set.
[[nodiscard]] std::vector<InputFile> read_inputs(const Context& ctx, std::span<const std::string> files,
                                                 ImageOptions image = {});
// The files, or without any a deterministic pattern in the current shape (uint8 NHWC for 4-D
// inputs, as a camera frame; float32 otherwise): what bench and profile feed.
[[nodiscard]] std::vector<InputFile> inputs_or_pattern(const Context& ctx, std::span<const std::string> files);
void set_inputs(Context& ctx, std::span<const InputFile> inputs);

// "1x3x224x224"
[[nodiscard]] std::string shape_text(std::span<const std::int64_t> shape);
[[nodiscard]] std::string shape_text(const Dims& dims);

}  // namespace rknnxx::tool
