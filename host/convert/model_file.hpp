#pragma once
// The host model file: everything rknn_init on the host runtime needs, in one file written by
// `rknnxx convert` (an ONNX model plus the toolkit's config()).
//
// Extension ".hrknn" ("host rknn"): rknn_init on a board takes vendor .rknn files, and this is not one;
// a distinct extension keeps users from copying it to a board or feeding a vendor file to the host by
// mistake. Readers never trust the extension: the magic decides, and a vendor .rknn file is recognised
// by its own magic and refused with a message saying so.
//
// Layout (all integers little-endian):
//   header, 32 bytes
//     0  char[8]  magic "RKNNXXHM"
//     8  u32      format version (model_file_version); a reader refuses any other
//     12 u32      section count
//     16 u64      file size in bytes, trailer included (detects truncation before anything is parsed)
//     24 u32      reserved, written 0, ignored
//     28 u32      CRC-32 of bytes 0..27
//   sections, in any order, each
//     u32 tag (4 ASCII characters), u32 flags (bit 0 "required"), u64 payload length,
//     payload, u32 CRC-32 of tag, flags, length and payload
//   trailer
//     u32 CRC-32 of every byte before it
// Sections of this version:
//   "info" required  target platform, float dtype, producer, custom string (length-prefixed strings)
//   "conf" required  the normalized config() as JSON text (quant_img_RGB2BGR is not recorded)
//   "prep" optional  per-input preprocessing: u32 inputs; per input u32 channels, f64 mean[c], f64 std[c]
//                    (absent: no preprocessing, i.e. means 0 and stds 1)
//   "dyns" optional  dynamic shape set: u32 groups, u32 inputs, u32 rank per input, then i64 dims
//                    group by group, input by input (absent: a static model)
//   "qnt8" required  quantization (docs/quantization.md); absent: a float model. Present, the runtime
//                    runs the model with quantized semantics, so a reader that does not know it must refuse:
//                      str dtype ("w8a8", "w8a16", "w4a16", "w16a16i_dfp"), str algorithm ("normal", "kl_divergence",
//                      "mmse"; "gdq" with w8a16 and w4a16 only), str weight method ("layer", "channel",
//                      "group{SIZE}" with w4a16 only), u32 calibration samples (0 only for a
//                      w8a8 QDQ model, algorithm "normal", whose pairs gave the parameters; host/convert/qdq.hpp),
//                      u32 tensors; per tensor: str name (non-empty, unique), f32 scale (finite, > 0),
//                      i32 zero point (-128..127); with w16a16i_dfp (int16 dynamic fixed point) the scale
//                      is exactly 2^-fl, the tensor's fractional length fl in -64..64, and the zero point 0
//                    where str is a u32 length and that many bytes. The tensors are the graph inputs and
//                    every float value of the graph the quantizer rounds (by ONNX value name); none for
//                    the weight-only types w8a16 and w4a16, whose activations stay float16.
//                    With algorithm "gdq" the tensors are followed by u32 weights; per weight: str name
//                    (non-empty, unique), u32 ratios (>= 1), f32 ratio each (in [0.5, 1]): gdq's clip ratios.
//                    Then, w8a8 only and only when the model is hybrid (automatic hybrid quantization),
//                    u32 values (>= 1); per value: str name, one of the tensors above, unique: the
//                    values whose producing layers run in float16 (their weights stay float16); no
//                    bytes at all when there are none.
//   "onnx" required  the ONNX model bytes the engine loads
// Later versions add sections without breaking this reader: an unknown section
// without the required flag is skipped and kept verbatim; one with it makes this reader refuse the file
// with a message naming it, instead of running a model it only half understands.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <rknnxx/toolkit/config.hpp>

namespace rknnxx::host {

inline constexpr std::string_view model_file_extension = ".hrknn";
inline constexpr std::string_view model_file_magic = "RKNNXXHM";
inline constexpr std::uint32_t model_file_version = 1;

// Per-input preprocessing fused into the model: (x - mean[c]) / std[c], one value per channel.
struct InputPreprocess {
  std::vector<double> mean;
  std::vector<double> std;
  friend bool operator==(const InputPreprocess&, const InputPreprocess&) = default;
};

// A section this reader does not know (from a newer writer), kept so that a rewrite does not drop it.
struct ExtraSection {
  std::string tag;  // 4 characters
  bool required = false;
  std::vector<std::byte> payload;
  friend bool operator==(const ExtraSection&, const ExtraSection&) = default;
};

// One tensor's affine parameters: x = scale * (q - zero_point), q in [-128, 127]; with w16a16i_dfp,
// q in int16, scale = 2^-fl and zero_point = 0.
struct QuantizedTensor {
  std::string name;
  float scale = 1.0f;
  std::int32_t zero_point = 0;
  friend bool operator==(const QuantizedTensor&, const QuantizedTensor&) = default;
};

// gdq's choice for one weight (docs/quantization.md): the ratio its range was scaled by, one per set
// of weight parameters (per layer, channel or group), each in [0.5, 1].
struct ClippedWeight {
  std::string name;
  std::vector<float> ratios;
  friend bool operator==(const ClippedWeight&, const ClippedWeight&) = default;
};

// The "qnt8" section: how the model was quantized and every activation's parameters (none for the
// weight-only types w8a16 and w4a16).
struct ModelQuantization {
  toolkit::QuantizedDtype dtype = toolkit::QuantizedDtype::w8a8;
  toolkit::QuantizedAlgorithm algorithm = toolkit::QuantizedAlgorithm::normal;
  toolkit::QuantizedMethod method = toolkit::QuantizedMethod::channel();
  std::uint32_t samples = 0;
  std::vector<QuantizedTensor> tensors;
  std::vector<ClippedWeight> clipped;  // gdq only; a weight not listed keeps its minimum and maximum
  std::vector<std::string> float16;    // w8a8 only: values of float16 layers (hybrid quantization)
  friend bool operator==(const ModelQuantization&, const ModelQuantization&) = default;
};

struct ModelFile {
  toolkit::Platform target_platform = toolkit::Platform::rk3588;
  toolkit::FloatDtype float_dtype = toolkit::FloatDtype::float16;
  std::string producer;                                // e.g. "rknnxx 0.1.0"
  std::optional<std::string> custom_string;            // what RKNN_QUERY_CUSTOM_STRING returns
  std::string config_json;                             // the normalized config, for inspection
  std::vector<InputPreprocess> preprocess;             // empty: none; otherwise one per model input
  std::optional<toolkit::DynamicInput> dynamic_input;  // nullopt: a static model
  std::optional<ModelQuantization> quantization;       // nullopt: a float model
  std::vector<std::byte> onnx;
  std::vector<ExtraSection> extra_sections;

  friend bool operator==(const ModelFile&, const ModelFile&) = default;
};

// Every reading and writing failure; the message starts with "model file: " and names what is wrong.
class ModelFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// CRC-32 as in zlib, gzip and PNG (reflected polynomial 0xEDB88320), so that `python3 -c "import zlib"`
// can check a file by hand. `crc` continues a running checksum.
[[nodiscard]] std::uint32_t crc32(std::span<const std::byte> bytes, std::uint32_t crc = 0) noexcept;

// Throws ModelFileError when the value cannot be written as a valid file (e.g. a custom string that does
// not fit the runtime's 1024 bytes, or preprocessing lists of unequal length).
[[nodiscard]] std::vector<std::byte> serialize_model_file(const ModelFile& model);
void save_model_file(const std::filesystem::path& path, const ModelFile& model);

// Checks everything before trusting it: magic, version, checksums, every length against the bytes that
// remain (so no allocation exceeds the input's size), and the values of the known sections.
[[nodiscard]] ModelFile parse_model_file(std::span<const std::byte> bytes);
[[nodiscard]] ModelFile load_model_file(const std::filesystem::path& path);

// The most bytes a model file may have: what rknn_init takes from memory (its size is 32-bit).
inline constexpr std::uint64_t max_model_file_bytes = 0xFFFFFFFFU;

// The bytes of the model file at `path`, for any reader (rknn_init, load_model_file): a regular file
// of at most max_model_file_bytes, read in full. A directory, FIFO, device or socket, a larger file, or
// one that changes size while read is refused with a ModelFileError naming the path and what it is,
// instead of blocking or reading without end.
[[nodiscard]] std::vector<std::byte> read_model_file_bytes(const std::filesystem::path& path);

}  // namespace rknnxx::host
