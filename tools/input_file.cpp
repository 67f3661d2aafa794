#include "input_file.hpp"

#if RKNNXX_TOOL_IMAGES
#include "../examples/ocr/image.hpp"
#endif

#include <rknnxx/io/npy.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

namespace rknnxx::tool {

namespace {

std::string lower_extension(const std::filesystem::path& path) {
  auto ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::vector<std::int64_t> to_shape(const Dims& dims) { return {dims.begin(), dims.end()}; }

std::string describe(const TensorInfo& info) { return fmt::format("input {} \"{}\"", info.index(), info.name()); }

std::optional<TensorType> tensor_type_of(io::NpyType t) {
  switch (t) {
    case io::NpyType::float32: return TensorType::float32;
    case io::NpyType::float16: return TensorType::float16;
    case io::NpyType::uint8: return TensorType::uint8;
    case io::NpyType::int8: return TensorType::int8;
    default: return std::nullopt;
  }
}

InputFile read_npy_input(const std::filesystem::path& path, const TensorInfo& info) {
  io::NpyArray array = io::read_npy(path);
  const auto type = tensor_type_of(array.type);
  if (!type)
    throw std::runtime_error(fmt::format("{}: a {} array; {} takes float32, float16, uint8 or int8 data", path.string(),
                                         io::npy_type_name(array.type), describe(info)));
  InputFile in{path, std::move(array.data), *type, info.format(), array.shape, "npy"};
  const auto want = to_shape(info.dims());
  if (in.shape == want) return in;
  // A 4-D NHWC input also takes the model's own NCHW order (what ONNX tools write).
  if (info.format() == TensorFormat::nhwc && want.size() == 4) {
    const std::vector<std::int64_t> nchw = nhwc_to_nchw(want);
    if (in.shape == nchw) {
      in.format = TensorFormat::nchw;
      return in;
    }
    throw std::runtime_error(fmt::format("{}: shape {}; {} takes {} (NHWC) or {} (NCHW)", path.string(),
                                         shape_text(in.shape), describe(info), shape_text(want), shape_text(nchw)));
  }
  throw std::runtime_error(
      fmt::format("{}: shape {}; {} takes {}", path.string(), shape_text(in.shape), describe(info), shape_text(want)));
}

#if RKNNXX_TOOL_IMAGES
// The image at the input's size: stretched, or scaled to fit and centred on gray 114.
image::Image fit(const image::Image& source, int width, int height, ResizeMode mode) {
  if (mode == ResizeMode::stretch) return image::resize(source, width, height);
  const double scale = std::min(static_cast<double>(width) / source.width, static_cast<double>(height) / source.height);
  const int w = std::clamp(static_cast<int>(source.width * scale + 0.5), 1, width);
  const int h = std::clamp(static_cast<int>(source.height * scale + 0.5), 1, height);
  image::Image canvas(width, height, source.channels, 114);
  image::paste(canvas, image::resize(source, w, h), (width - w) / 2, (height - h) / 2);
  return canvas;
}
#endif

InputFile read_image_input(const std::filesystem::path& path, const TensorInfo& info,
                           [[maybe_unused]] ImageOptions options) {
#if !RKNNXX_TOOL_IMAGES
  throw std::runtime_error(fmt::format("{}: this rknnxx was built without stb (libstb-dev): give {} as .npy",
                                       path.string(), describe(info)));
#else
  const Dims dims = info.dims();
  if (dims.rank() != 4 || info.format() != TensorFormat::nhwc)
    throw std::runtime_error(fmt::format("{}: {} is {} {}, not an image (4-D NHWC); give a .npy file", path.string(),
                                         describe(info), shape_text(dims), name_of(info.format())));
  const auto image = image::read_image(path);
  const auto channels = static_cast<int>(dims[3]);
  if (image.channels != channels)
    throw std::runtime_error(fmt::format("{}: a {} image ({} channel{}); {} takes {} channel{} ({})", path.string(),
                                         image::channel_name(image.channels), image.channels,
                                         image.channels == 1 ? "" : "s", describe(info), channels,
                                         channels == 1 ? "" : "s", shape_text(dims)));
  auto resized = fit(image, static_cast<int>(dims[2]), static_cast<int>(dims[1]), options.resize);
  if (options.bgr) {
    if (channels < 3)
      throw std::runtime_error(fmt::format("{}: --bgr swaps red and blue, and {} takes {} channel{}", path.string(),
                                           describe(info), channels, channels == 1 ? "" : "s"));
    for (std::size_t p = 0; p + 2 < resized.pixels.size(); p += static_cast<std::size_t>(channels))
      std::swap(resized.pixels[p], resized.pixels[p + 2]);
  }
  InputFile in{path, {}, TensorType::uint8, TensorFormat::nhwc, to_shape(dims), "image"};
  in.bytes.resize(resized.pixels.size());
  std::memcpy(in.bytes.data(), resized.pixels.data(), resized.pixels.size());
  return in;
#endif
}

}  // namespace

std::string shape_text(std::span<const std::int64_t> shape) { return fmt::format("{}", fmt::join(shape, "x")); }
std::string shape_text(const Dims& dims) { return fmt::format("{}", fmt::join(dims.span(), "x")); }

namespace {
std::string set_text_group(const ShapeSet<>& set, std::size_t g) {
  std::vector<std::string> shapes;
  for (const Dims& d : set.group(g)) shapes.push_back(shape_text(d));
  return fmt::format("{}", fmt::join(shapes, " + "));
}
}  // namespace

std::optional<std::vector<std::int64_t>> npy_shape(const std::filesystem::path& path) {
  if (lower_extension(path) != ".npy") return std::nullopt;
  return io::read_npy(path).shape;
}

InputFile read_input(const std::filesystem::path& path, const TensorInfo& info, ImageOptions image) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(fmt::format("{}: {}", path.string(),
                                         std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  const auto ext = lower_extension(path);
  if (ext == ".npy") return read_npy_input(path, info);
  if (ext == ".png" || ext == ".jpg" || ext == ".jpeg") return read_image_input(path, info, image);
  throw std::runtime_error(fmt::format("{}: unknown input type '{}' (give .npy, .png or .jpg)", path.string(), ext));
}

namespace {

std::vector<std::uint32_t> parse_shape(const std::string& text) {
  std::vector<std::uint32_t> dims;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(text.substr(i), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || v == 0 || v > UINT32_MAX)
      throw std::runtime_error(fmt::format("--shape {}: not a shape (write it as 1x3x48x320)", text));
    dims.push_back(static_cast<std::uint32_t>(v));
    i += used;
    if (i < text.size()) {
      if (text[i] != 'x' && text[i] != ',')
        throw std::runtime_error(fmt::format("--shape {}: not a shape (write it as 1x3x48x320)", text));
      ++i;
    }
  }
  if (dims.empty()) throw std::runtime_error("--shape: empty shape");
  return dims;
}

std::string set_text(const ShapeSet<>& set) {
  std::vector<std::string> groups;
  for (std::size_t g = 0; g < set.num_shapes(); ++g) groups.push_back(set_text_group(set, g));
  return fmt::format("{}", fmt::join(groups, ", "));
}

// The group holding `shapes` in the runtime's order or in NCHW order.
std::optional<std::size_t> find_group(const ShapeSet<>& set, const std::vector<Dims>& shapes) {
  if (auto g = set.find(shapes)) return g;
  std::vector<Dims> nhwc = shapes;
  for (auto& d : nhwc)
    if (d.rank() == 4) d = nchw_to_nhwc(d);
  return set.find(nhwc);
}

}  // namespace

std::string select_shape(Context& ctx, std::span<const std::string> shape_texts, std::span<const std::string> files) {
  if (!ctx.is_dynamic()) {
    if (!shape_texts.empty())
      throw std::runtime_error(fmt::format(
          "--shape {}: the model has static shapes (input 0 \"{}\" is {}); it takes no --shape", shape_texts.front(),
          ctx.current_inputs().at(0).name(), shape_text(ctx.current_inputs().at(0).dims())));
    return {};
  }
  const auto& set = *ctx.shape_set();
  if (!shape_texts.empty()) {
    if (shape_texts.size() != set.num_inputs())
      throw std::runtime_error(
          fmt::format("{} --shape given; the model has {} inputs (one --shape each, in input order)",
                      shape_texts.size(), set.num_inputs()));
    std::vector<Dims> shapes;
    for (const auto& t : shape_texts) {
      const auto d = parse_shape(t);
      if (d.size() > RKNN_MAX_DIMS)
        throw std::runtime_error(fmt::format("--shape {}: more than {} dims", t, RKNN_MAX_DIMS));
      shapes.emplace_back(std::span<const std::uint32_t>(d));
    }
    const auto g = find_group(set, shapes);
    if (!g)
      throw std::runtime_error(
          fmt::format("--shape {}: not in the model's shape set ({}; NHWC, or NCHW as in dynamic_input)",
                      fmt::join(shape_texts, " "), set_text(set)));
    ctx.set_input_shapes(*g);
    return fmt::format("shape group {} of {}: {}", *g, set.num_shapes(), set_text_group(set, *g));
  }
  std::vector<Dims> from_files;
  for (const auto& f : files) {
    const auto shape = npy_shape(f);
    if (!shape) break;
    std::vector<std::uint32_t> d;
    for (auto v : *shape) d.push_back(v > 0 && v <= UINT32_MAX ? static_cast<std::uint32_t>(v) : 0);
    if (d.empty() || d.size() > RKNN_MAX_DIMS) break;
    from_files.emplace_back(std::span<const std::uint32_t>(d));
  }
  std::size_t group = 0;
  if (from_files.size() == set.num_inputs())
    if (const auto g = find_group(set, from_files)) group = *g;
  ctx.set_input_shapes(group);
  return fmt::format("shape group {} of {}: {}", group, set.num_shapes(), set_text_group(set, group));
}

std::vector<InputFile> read_inputs(const Context& ctx, std::span<const std::string> files, ImageOptions image) {
  const auto& current = ctx.current_inputs();
  if (files.size() != current.size())
    throw std::runtime_error(fmt::format("{} input file{} given; the model has {} input{} (one --input each, in order)",
                                         files.size(), files.size() == 1 ? "" : "s", current.size(),
                                         current.size() == 1 ? "" : "s"));
  std::vector<InputFile> inputs;
  for (std::size_t i = 0; i < files.size(); ++i) inputs.push_back(read_input(files[i], current[i], image));
  return inputs;
}

std::vector<InputFile> inputs_or_pattern(const Context& ctx, std::span<const std::string> files) {
  if (!files.empty()) return read_inputs(ctx, files);
  std::vector<InputFile> inputs;
  for (const auto& info : ctx.current_inputs()) {
    const Dims d = info.dims();
    InputFile in;
    in.path = "(pattern)";
    in.kind = "pattern";
    in.shape.assign(d.begin(), d.end());
    const bool image = d.rank() == 4 && info.format() == TensorFormat::nhwc;
    in.type = image ? TensorType::uint8 : TensorType::float32;
    in.format = image ? TensorFormat::nhwc : info.format();
    const std::size_t n = d.elements();
    in.bytes.resize(image ? n : n * sizeof(float));
    if (image) {
      for (std::size_t i = 0; i < n; ++i) in.bytes[i] = static_cast<std::byte>((i * 37) & 0xff);
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(static_cast<int>(i % 17) - 8) / 8.0F;
        std::memcpy(in.bytes.data() + i * sizeof(float), &v, sizeof v);
      }
    }
    inputs.push_back(std::move(in));
  }
  return inputs;
}

namespace {

template <class T> InputData input_data(const InputFile& in) {
  const auto* data = reinterpret_cast<const T*>(in.bytes.data());
  const std::size_t n = in.bytes.size() / sizeof(T);
  const auto d = [&](std::size_t i) { return static_cast<std::uint32_t>(in.shape[i]); };
  if (in.shape.size() == 4 && in.format == TensorFormat::nhwc)
    return nhwc_view(std::span<const T>(data, n), {.n = d(0), .c = d(3), .h = d(1), .w = d(2)});
  if (in.shape.size() == 4 && in.format == TensorFormat::nchw)
    return nchw_view(std::span<const T>(data, n), {.n = d(0), .c = d(1), .h = d(2), .w = d(3)});
  std::vector<std::uint32_t> dims;
  for (std::size_t i = 0; i < in.shape.size(); ++i) dims.push_back(d(i));
  return flat_view(std::span<const T>(data, n), Dims(std::span<const std::uint32_t>(dims)));
}

}  // namespace

void set_inputs(Context& ctx, std::span<const InputFile> inputs) {
  std::vector<InputData> data;
  for (const auto& in : inputs) {
    switch (in.type) {
      case TensorType::float32: data.push_back(input_data<float>(in)); break;
      case TensorType::float16: data.push_back(input_data<Float16>(in)); break;
      case TensorType::uint8: data.push_back(input_data<std::uint8_t>(in)); break;
      case TensorType::int8: data.push_back(input_data<std::int8_t>(in)); break;
      default: throw std::runtime_error(fmt::format("{}: {} data cannot be fed", in.path.string(), name_of(in.type)));
    }
  }
  ctx.set_inputs(data);
}

}  // namespace rknnxx::tool
