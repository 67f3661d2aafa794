#include "model_file.hpp"

#include "../quantize/affine.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rknnxx/version.hpp>

namespace rknnxx::host {

namespace {

// CRC-32 with our own tables rather than zlib's crc32(): the format then needs no library (the runtime
// shared object and the aarch64 build stay free of a zlib dependency and its :arm64 -dev package), and
// slicing by 8 bytes checks a few GB/s, so loading a large model is not held up by it. The checksum is
// the same as zlib's; a test pins the standard check value.
using CrcTable = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr CrcTable make_crc_tables() {
  CrcTable t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s)
    for (std::size_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFU];
  return t;
}
constexpr CrcTable crc_tables = make_crc_tables();

constexpr std::size_t header_size = 32;
constexpr std::size_t section_header_size = 16;
constexpr std::size_t checksum_size = 4;
constexpr std::uint32_t section_required = 1U;
// A file needs fewer than this many sections for years; more is damage, not content.
constexpr std::uint32_t max_sections = 4096;

constexpr std::string_view tag_info = "info";
constexpr std::string_view tag_conf = "conf";
constexpr std::string_view tag_prep = "prep";
constexpr std::string_view tag_dyns = "dyns";
constexpr std::string_view tag_onnx = "onnx";
constexpr std::string_view tag_qnt8 = "qnt8";

[[noreturn]] void fail(std::string message) { throw ModelFileError(std::move(message)); }

std::uint32_t load_u32(const std::byte* p) noexcept {
  return std::to_integer<std::uint32_t>(p[0]) | std::to_integer<std::uint32_t>(p[1]) << 8 |
      std::to_integer<std::uint32_t>(p[2]) << 16 | std::to_integer<std::uint32_t>(p[3]) << 24;
}
std::uint64_t load_u64(const std::byte* p) noexcept {
  return std::uint64_t{load_u32(p)} | std::uint64_t{load_u32(p + 4)} << 32;
}

// Printable form of raw bytes for messages: 'RKNN..' with dots for anything else, plus hex.
std::string printable(std::span<const std::byte> bytes) {
  std::string text, hex;
  for (std::byte b : bytes) {
    auto c = std::to_integer<unsigned char>(b);
    text += (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '.';
    hex += fmt::format("{:02x}", c);
  }
  return fmt::format("'{}' (0x{})", text, hex);
}

class Writer {
public:
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::byte>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v));
    u32(static_cast<std::uint32_t>(v >> 32));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
  void raw(std::span<const std::byte> b) { bytes_.insert(bytes_.end(), b.begin(), b.end()); }
  void raw(std::string_view s) { raw(std::as_bytes(std::span(s.data(), s.size()))); }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    raw(s);
  }
  std::vector<std::byte>& bytes() { return bytes_; }

private:
  std::vector<std::byte> bytes_;
};

// Reads one section's payload; every read is checked against what is left, and every count is checked
// against the bytes it needs before anything is allocated.
class Reader {
public:
  Reader(std::span<const std::byte> bytes, std::string_view section) : bytes_(bytes), section_(section) {}

  void need(std::uint64_t n, std::string_view what) const {
    if (n > left())
      fail(fmt::format("model file: section '{}': {} needs {} bytes, {} left", section_, what, n, left()));
  }
  std::uint32_t u32(std::string_view what) {
    need(4, what);
    auto v = load_u32(bytes_.data() + pos_);
    pos_ += 4;
    return v;
  }
  std::uint64_t u64(std::string_view what) {
    need(8, what);
    auto v = load_u64(bytes_.data() + pos_);
    pos_ += 8;
    return v;
  }
  std::int64_t i64(std::string_view what) { return static_cast<std::int64_t>(u64(what)); }
  double f64(std::string_view what) { return std::bit_cast<double>(u64(what)); }
  float f32(std::string_view what) { return std::bit_cast<float>(u32(what)); }
  std::string str(std::string_view what) {
    std::uint32_t n = u32(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  std::size_t left() const noexcept { return bytes_.size() - pos_; }
  void expect_end() const {
    if (left() != 0)
      fail(fmt::format("model file: section '{}': {} unexpected bytes after its content", section_, left()));
  }
  [[noreturn]] void bad(std::string_view what) const {
    fail(fmt::format("model file: section '{}': {}", section_, what));
  }

private:
  std::span<const std::byte> bytes_;
  std::string_view section_;
  std::size_t pos_ = 0;
};

std::string producer_name() { return fmt::format("rknnxx {}", rknnxx::version_string); }

void check_custom_string(const std::string& s, std::string_view where) {
  if (s.size() >= toolkit::custom_string_capacity || s.find('\0') != std::string::npos)
    fail(fmt::format("model file: {}custom string of {} bytes does not fit the runtime's rknn_custom_string ({} bytes "
                     "and a NUL, no NUL inside)",
                     where, s.size(), toolkit::custom_string_capacity - 1));
}

// --- payload encoders and decoders ---------------------------------------------------------------------

std::vector<std::byte> encode_info(const ModelFile& m) {
  Writer w;
  w.str(toolkit::spelling(m.target_platform));
  w.str(toolkit::spelling(m.float_dtype));
  w.str(m.producer.empty() ? producer_name() : m.producer);
  w.u32(m.custom_string ? 1 : 0);
  w.str(m.custom_string.value_or(std::string()));
  return std::move(w.bytes());
}

void decode_info(std::span<const std::byte> payload, ModelFile& m) {
  Reader r(payload, tag_info);
  std::string platform = r.str("target platform");
  auto p = toolkit::parse_name<toolkit::Platform>(platform);
  if (!p) r.bad(fmt::format("unknown target platform {}", printable(std::as_bytes(std::span(platform)))));
  m.target_platform = *p;
  std::string dtype = r.str("float dtype");
  auto d = toolkit::parse_name<toolkit::FloatDtype>(dtype);
  if (!d) r.bad(fmt::format("unknown float dtype {}", printable(std::as_bytes(std::span(dtype)))));
  m.float_dtype = *d;
  m.producer = r.str("producer");
  std::uint32_t has_custom = r.u32("custom string flag");
  std::string custom = r.str("custom string");
  if (has_custom > 1) r.bad(fmt::format("custom string flag is {}, expected 0 or 1", has_custom));
  if (has_custom) {
    check_custom_string(custom, "section 'info': ");
    m.custom_string = std::move(custom);
  } else if (!custom.empty()) {
    r.bad("custom string given although its flag says there is none");
  }
  r.expect_end();
}

std::vector<std::byte> encode_prep(const ModelFile& m) {
  Writer w;
  w.u32(static_cast<std::uint32_t>(m.preprocess.size()));
  for (std::size_t i = 0; i < m.preprocess.size(); ++i) {
    const InputPreprocess& p = m.preprocess[i];
    if (p.mean.size() != p.std.size() || p.mean.empty())
      fail(fmt::format("model file: preprocessing of input {} has {} means and {} stds; expected the same number, at "
                       "least 1",
                       i, p.mean.size(), p.std.size()));
    w.u32(static_cast<std::uint32_t>(p.mean.size()));
    for (double v : p.mean) w.f64(v);
    for (double v : p.std) w.f64(v);
  }
  return std::move(w.bytes());
}

void decode_prep(std::span<const std::byte> payload, ModelFile& m) {
  Reader r(payload, tag_prep);
  std::uint32_t inputs = r.u32("input count");
  // Each input takes at least 4 + 16 bytes: refuse a count the payload cannot hold before reserving.
  r.need(std::uint64_t{inputs} * 20, fmt::format("preprocessing of {} inputs", inputs));
  m.preprocess.resize(inputs);
  for (std::uint32_t i = 0; i < inputs; ++i) {
    std::uint32_t channels = r.u32("channel count");
    if (channels == 0) r.bad(fmt::format("input {} has 0 channels", i));
    r.need(std::uint64_t{channels} * 16, fmt::format("mean and std of input {} ({} channels)", i, channels));
    InputPreprocess& p = m.preprocess[i];
    p.mean.resize(channels);
    p.std.resize(channels);
    for (double& v : p.mean) v = r.f64("mean");
    for (double& v : p.std) v = r.f64("std");
    for (std::uint32_t c = 0; c < channels; ++c)
      if (!std::isfinite(p.mean[c]) || !std::isfinite(p.std[c]) || p.std[c] == 0.0)
        r.bad(fmt::format("input {} channel {}: mean {} std {}; expected finite values and a std other than 0", i, c,
                          p.mean[c], p.std[c]));
  }
  r.expect_end();
}

std::vector<std::byte> encode_dyns(const toolkit::DynamicInput& groups) {
  std::vector<toolkit::ConfigProblem> problems;
  toolkit::detail::check_dynamic_input(groups, problems, "dynamic shape set");
  if (!problems.empty()) fail(fmt::format("model file: cannot write {}", problems.front().message));
  Writer w;
  w.u32(static_cast<std::uint32_t>(groups.size()));
  w.u32(static_cast<std::uint32_t>(groups.front().size()));
  for (const toolkit::Shape& s : groups.front()) w.u32(static_cast<std::uint32_t>(s.size()));
  for (const toolkit::ShapeGroup& g : groups)
    for (const toolkit::Shape& s : g)
      for (std::int64_t d : s) w.i64(d);
  return std::move(w.bytes());
}

void decode_dyns(std::span<const std::byte> payload, ModelFile& m) {
  Reader r(payload, tag_dyns);
  std::uint32_t groups = r.u32("group count");
  std::uint32_t inputs = r.u32("input count");
  if (groups == 0 || groups > toolkit::max_dynamic_shape_groups)
    r.bad(fmt::format("{} shape groups; expected 1 to {}", groups, toolkit::max_dynamic_shape_groups));
  if (inputs == 0) r.bad("0 inputs per shape group");
  r.need(std::uint64_t{inputs} * 4, "input ranks");
  std::vector<std::uint32_t> ranks(inputs);
  std::uint64_t dims_per_group = 0;
  for (std::uint32_t i = 0; i < inputs; ++i) {
    ranks[i] = r.u32("rank");
    if (ranks[i] == 0 || ranks[i] > toolkit::max_rank)
      r.bad(fmt::format("input {} has rank {}; expected 1 to {}", i, ranks[i], toolkit::max_rank));
    dims_per_group += ranks[i];
  }
  r.need(dims_per_group * groups * 8, fmt::format("{} shape groups of {} dimensions", groups, dims_per_group));
  toolkit::DynamicInput set(groups, toolkit::ShapeGroup(inputs));
  for (toolkit::ShapeGroup& g : set)
    for (std::uint32_t i = 0; i < inputs; ++i) {
      g[i].resize(ranks[i]);
      for (std::int64_t& d : g[i]) d = r.i64("dimension");
    }
  r.expect_end();
  std::vector<toolkit::ConfigProblem> problems;
  toolkit::detail::check_dynamic_input(set, problems, "dynamic shape set");
  if (!problems.empty()) r.bad(problems.front().message.substr(std::string_view("config: ").size()));
  m.dynamic_input = std::move(set);
}

// The rules of a valid "qnt8" section, for the writer and the reader alike; names the first problem.
std::optional<std::string> quantization_problem(const ModelQuantization& q) {
  using toolkit::QuantizedDtype;
  const bool weight_only = q.dtype == QuantizedDtype::w8a16 || q.dtype == QuantizedDtype::w4a16;
  const bool dfp = q.dtype == QuantizedDtype::w16a16i_dfp;  // int16 dynamic fixed point: scale 2^-fl, zero point 0
  if (q.dtype != QuantizedDtype::w8a8 && !weight_only && !dfp)
    return fmt::format("quantized dtype '{}'; only w8a8, w8a16, w4a16 and w16a16i_dfp are stored in this section",
                       toolkit::spelling(q.dtype));
  if (q.algorithm == toolkit::QuantizedAlgorithm::gdq && !weight_only)
    return fmt::format("algorithm 'gdq' with dtype '{}'; gdq rounds the weights of w8a16 and w4a16 only",
                       toolkit::spelling(q.dtype));
  if (!q.method.group_size_valid()) return fmt::format("weight method '{}' has an invalid group size", q.method.name());
  if (q.method.kind == toolkit::QuantizedMethod::Kind::group && q.dtype != QuantizedDtype::w4a16)
    return fmt::format("weight method '{}' with dtype '{}'; groups are for w4a16 only", q.method.name(),
                       toolkit::spelling(q.dtype));
  // 0 samples: the parameters came from the model's QuantizeLinear/DequantizeLinear pairs (w8a8 only).
  if (q.samples == 0 && (q.dtype != QuantizedDtype::w8a8 || q.algorithm != toolkit::QuantizedAlgorithm::normal))
    return fmt::format("0 calibration samples with dtype '{}' and algorithm '{}'; only a w8a8 QDQ model "
                       "(algorithm normal) has none",
                       toolkit::spelling(q.dtype), toolkit::spelling(q.algorithm));
  if (q.samples == 0 && q.tensors.empty()) return std::string("0 calibration samples and no tensors");
  if (weight_only && !q.tensors.empty())
    return fmt::format("{} activation tensors with dtype '{}', whose activations stay float16", q.tensors.size(),
                       toolkit::spelling(q.dtype));
  std::vector<std::string_view> names;
  for (const QuantizedTensor& t : q.tensors) {
    if (t.name.empty()) return std::string("a tensor without a name");
    if (!std::isfinite(t.scale) || !(t.scale > 0.0f))
      return fmt::format("tensor '{}' has scale {}; expected a finite scale above 0", t.name, t.scale);
    if (dfp && t.zero_point != 0)
      return fmt::format("tensor '{}' has zero point {}; w16a16i_dfp tensors have 0", t.name, t.zero_point);
    if (dfp && !quantize::dfp_fraction_length(t.scale))
      return fmt::format("tensor '{}' has scale {}; w16a16i_dfp expects 2^-fl with fl in {}..{}", t.name, t.scale,
                         quantize::dfp_min_fraction_length, quantize::dfp_max_fraction_length);
    if (t.zero_point < -128 || t.zero_point > 127)
      return fmt::format("tensor '{}' has zero point {}; expected -128..127", t.name, t.zero_point);
    names.push_back(t.name);
  }
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
    return fmt::format("tensor '{}' is listed twice", *twice);
  if (!q.clipped.empty() && q.algorithm != toolkit::QuantizedAlgorithm::gdq)
    return fmt::format("clip ratios with algorithm '{}'; only gdq clips weights", toolkit::spelling(q.algorithm));
  names.clear();
  for (const ClippedWeight& c : q.clipped) {
    if (c.name.empty()) return std::string("a clipped weight without a name");
    if (c.ratios.empty()) return fmt::format("weight '{}' has no clip ratios", c.name);
    for (float ratio : c.ratios)
      if (!(ratio >= 0.5f && ratio <= 1.0f))
        return fmt::format("weight '{}' has clip ratio {}; expected 0.5..1", c.name, ratio);
    names.push_back(c.name);
  }
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
    return fmt::format("weight '{}' is clipped twice", *twice);
  if (!q.float16.empty() && q.dtype != QuantizedDtype::w8a8)
    return fmt::format("{} float16 values with dtype '{}'; hybrid quantization is for w8a8 only", q.float16.size(),
                       toolkit::spelling(q.dtype));
  std::vector<std::string_view> tensors;
  for (const QuantizedTensor& t : q.tensors) tensors.push_back(t.name);
  std::sort(tensors.begin(), tensors.end());
  names.assign(q.float16.begin(), q.float16.end());
  for (std::string_view name : names)
    if (!std::binary_search(tensors.begin(), tensors.end(), name))
      return fmt::format("float16 value '{}' is not one of the section's tensors", name);
  std::sort(names.begin(), names.end());
  if (auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end())
    return fmt::format("float16 value '{}' is listed twice", *twice);
  return std::nullopt;
}

std::vector<std::byte> encode_qnt8(const ModelQuantization& q) {
  if (auto problem = quantization_problem(q)) fail(fmt::format("model file: cannot write quantization: {}", *problem));
  Writer w;
  w.str(toolkit::spelling(q.dtype));
  w.str(toolkit::spelling(q.algorithm));
  w.str(q.method.name());
  w.u32(q.samples);
  w.u32(static_cast<std::uint32_t>(q.tensors.size()));
  for (const QuantizedTensor& t : q.tensors) {
    w.str(t.name);
    w.f32(t.scale);
    w.u32(static_cast<std::uint32_t>(t.zero_point));
  }
  if (q.algorithm == toolkit::QuantizedAlgorithm::gdq) {
    w.u32(static_cast<std::uint32_t>(q.clipped.size()));
    for (const ClippedWeight& c : q.clipped) {
      w.str(c.name);
      w.u32(static_cast<std::uint32_t>(c.ratios.size()));
      for (float ratio : c.ratios) w.f32(ratio);
    }
  }
  if (!q.float16.empty()) {
    w.u32(static_cast<std::uint32_t>(q.float16.size()));
    for (const std::string& name : q.float16) w.str(name);
  }
  return std::move(w.bytes());
}

void decode_qnt8(std::span<const std::byte> payload, ModelFile& m) {
  Reader r(payload, tag_qnt8);
  ModelQuantization q;
  auto name_of = [&](std::string_view what) {
    std::string text = r.str(what);
    return std::pair(text, printable(std::as_bytes(std::span(text))));
  };
  const auto [dtype, dtype_text] = name_of("quantized dtype");
  const auto parsed_dtype = toolkit::parse_name<toolkit::QuantizedDtype>(dtype);
  if (!parsed_dtype) r.bad(fmt::format("unknown quantized dtype {}", dtype_text));
  q.dtype = *parsed_dtype;
  const auto [algorithm, algorithm_text] = name_of("algorithm");
  const auto parsed_algorithm = toolkit::parse_name<toolkit::QuantizedAlgorithm>(algorithm);
  if (!parsed_algorithm) r.bad(fmt::format("unknown quantized algorithm {}", algorithm_text));
  q.algorithm = *parsed_algorithm;
  const auto [method, method_text] = name_of("weight method");
  const auto parsed_method = toolkit::QuantizedMethod::parse(method);
  if (!parsed_method) r.bad(fmt::format("unknown weight method {}", method_text));
  q.method = *parsed_method;
  q.samples = r.u32("calibration samples");
  const std::uint32_t count = r.u32("tensor count");
  // Each tensor takes at least 4 + 4 + 4 bytes: refuse a count the payload cannot hold before reserving.
  r.need(std::uint64_t{count} * 12, fmt::format("{} quantized tensors", count));
  q.tensors.resize(count);
  for (QuantizedTensor& t : q.tensors) {
    t.name = r.str("tensor name");
    t.scale = r.f32("scale");
    t.zero_point = static_cast<std::int32_t>(r.u32("zero point"));
  }
  if (q.algorithm == toolkit::QuantizedAlgorithm::gdq) {
    const std::uint32_t weights = r.u32("clipped weight count");
    // Each takes at least 4 + 4 bytes (a name's length and a ratio count).
    r.need(std::uint64_t{weights} * 8, fmt::format("{} clipped weights", weights));
    q.clipped.resize(weights);
    for (ClippedWeight& c : q.clipped) {
      c.name = r.str("weight name");
      const std::uint32_t ratios = r.u32("clip ratio count");
      r.need(std::uint64_t{ratios} * 4, fmt::format("{} clip ratios", ratios));
      c.ratios.resize(ratios);
      for (float& ratio : c.ratios) ratio = r.f32("clip ratio");
    }
  }
  if (r.left() != 0) {  // a hybrid model's float16 values
    const std::uint32_t values = r.u32("float16 value count");
    if (values == 0) r.bad("a float16 value count of 0 (a model without float16 values has no count)");
    r.need(std::uint64_t{values} * 4, fmt::format("{} float16 values", values));  // a name's length each
    q.float16.resize(values);
    for (std::string& name : q.float16) name = r.str("float16 value name");
  }
  r.expect_end();
  if (auto problem = quantization_problem(q)) r.bad(*problem);
  m.quantization = std::move(q);
}

void append_section(Writer& w, std::string_view tag, bool required, std::span<const std::byte> payload) {
  const std::size_t start = w.bytes().size();
  w.raw(tag);
  w.u32(required ? section_required : 0);
  w.u64(payload.size());
  w.raw(payload);
  w.u32(crc32(std::span(w.bytes()).subspan(start)));
}

bool is_known_tag(std::string_view tag) {
  return tag == tag_info || tag == tag_conf || tag == tag_prep || tag == tag_dyns || tag == tag_onnx || tag == tag_qnt8;
}

}  // namespace

std::uint32_t crc32(std::span<const std::byte> bytes, std::uint32_t crc) noexcept {
  const auto& t = crc_tables;
  crc = ~crc;
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  while (n >= 8) {
    std::uint32_t lo = crc ^ load_u32(p);
    std::uint32_t hi = load_u32(p + 4);
    crc = t[7][lo & 0xFFU] ^ t[6][(lo >> 8) & 0xFFU] ^ t[5][(lo >> 16) & 0xFFU] ^ t[4][lo >> 24] ^ t[3][hi & 0xFFU] ^
        t[2][(hi >> 8) & 0xFFU] ^ t[1][(hi >> 16) & 0xFFU] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = t[0][(crc ^ std::to_integer<std::uint32_t>(*p++)) & 0xFFU] ^ (crc >> 8);
  return ~crc;
}

std::vector<std::byte> serialize_model_file(const ModelFile& m) {
  if (m.custom_string) check_custom_string(*m.custom_string, "");
  if (m.dynamic_input && !m.preprocess.empty() && !m.dynamic_input->empty() &&
      m.dynamic_input->front().size() != m.preprocess.size())
    fail(fmt::format("model file: {} inputs have preprocessing but the dynamic shape groups have {} inputs",
                     m.preprocess.size(), m.dynamic_input->front().size()));
  std::vector<std::pair<std::string_view, std::vector<std::byte>>> known;
  known.emplace_back(tag_info, encode_info(m));
  known.emplace_back(tag_conf,
                     std::vector<std::byte>(std::as_bytes(std::span(m.config_json)).begin(),
                                            std::as_bytes(std::span(m.config_json)).end()));
  if (!m.preprocess.empty()) known.emplace_back(tag_prep, encode_prep(m));
  if (m.dynamic_input) known.emplace_back(tag_dyns, encode_dyns(*m.dynamic_input));
  if (m.quantization) known.emplace_back(tag_qnt8, encode_qnt8(*m.quantization));

  for (const ExtraSection& x : m.extra_sections)
    if (x.tag.size() != 4 || is_known_tag(x.tag) ||
        std::count_if(m.extra_sections.begin(), m.extra_sections.end(),
                      [&](const ExtraSection& y) { return y.tag == x.tag; }) != 1)
      fail(fmt::format("model file: extra section tag {} is not 4 characters, is a known tag or repeats",
                       printable(std::as_bytes(std::span(x.tag)))));

  Writer w;
  w.raw(model_file_magic);
  w.u32(model_file_version);
  w.u32(static_cast<std::uint32_t>(known.size() + 1 + m.extra_sections.size()));
  w.u64(0);  // file size, patched below
  w.u32(0);
  w.u32(0);  // header CRC, patched below
  for (const auto& [tag, payload] : known) append_section(w, tag, tag != tag_prep && tag != tag_dyns, payload);
  for (const ExtraSection& x : m.extra_sections) append_section(w, x.tag, x.required, x.payload);
  append_section(w, tag_onnx, true, m.onnx);

  std::vector<std::byte>& out = w.bytes();
  const std::uint64_t file_size = out.size() + checksum_size;
  for (int i = 0; i < 8; ++i) out[16 + static_cast<std::size_t>(i)] = static_cast<std::byte>(file_size >> (8 * i));
  const std::uint32_t header_crc = crc32(std::span(out).first(28));
  for (int i = 0; i < 4; ++i) out[28 + static_cast<std::size_t>(i)] = static_cast<std::byte>(header_crc >> (8 * i));
  w.u32(crc32(out));
  return std::move(out);
}

ModelFile parse_model_file(std::span<const std::byte> bytes) {
  const std::size_t size = bytes.size();
  if (size == 0) fail("model file: empty (0 bytes)");

  // Magic first, on whatever is there, so that a foreign file is named as such even when short.
  const std::size_t magic_seen = std::min(size, model_file_magic.size());
  if (std::memcmp(bytes.data(), model_file_magic.data(), magic_seen) != 0) {
    auto head = bytes.first(magic_seen);
    if (size >= 4 && std::memcmp(bytes.data(), "RKNN", 4) == 0)
      fail(fmt::format("model file: wrong magic {}, expected '{}': probably a vendor .rknn model, which only the NPU "
                       "runtime runs; convert the ONNX model with `rknnxx convert` for the host",
                       printable(head), model_file_magic));
    if (std::to_integer<unsigned>(bytes[0]) == 0x08)
      fail(fmt::format("model file: wrong magic {}, expected '{}': this looks like an ONNX model; convert it with "
                       "`rknnxx convert` first",
                       printable(head), model_file_magic));
    fail(fmt::format("model file: wrong magic {}, expected '{}': not an rknnxx host model", printable(head),
                     model_file_magic));
  }
  if (size < header_size + checksum_size)
    fail(fmt::format("model file: truncated: {} bytes, shorter than the {}-byte header and checksum", size,
                     header_size + checksum_size));
  const std::byte* p = bytes.data();
  if (std::uint32_t version = load_u32(p + 8); version != model_file_version)
    fail(fmt::format("model file: format version {} is not supported (this reader reads version {}){}", version,
                     model_file_version, version > model_file_version ? "; it was written by a newer rknnxx" : ""));
  if (std::uint32_t stored = load_u32(p + 28), computed = crc32(bytes.first(28)); stored != computed)
    fail(fmt::format("model file: header checksum mismatch (stored 0x{:08x}, computed 0x{:08x})", stored, computed));
  const std::uint64_t declared = load_u64(p + 16);
  if (declared > size)
    fail(fmt::format("model file: truncated: the header says {} bytes, {} are there", declared, size));
  if (declared < size)
    fail(fmt::format("model file: {} bytes after the end the header gives ({} bytes)", size - declared, declared));
  const std::uint32_t section_count = load_u32(p + 12);
  if (section_count > max_sections)
    fail(fmt::format("model file: the header claims {} sections; at most {} are plausible", section_count,
                     max_sections));

  struct Found {
    std::string tag;
    bool required;
    std::span<const std::byte> payload;
  };
  std::vector<Found> found;
  const std::size_t end = size - checksum_size;
  std::size_t pos = header_size;
  for (std::uint32_t s = 0; s < section_count; ++s) {
    if (end - pos < section_header_size + checksum_size)
      fail(fmt::format("model file: section {} of {} starts at byte {}, but only {} bytes remain before the file "
                       "checksum",
                       s + 1, section_count, pos, end - pos));
    auto tag_bytes = bytes.subspan(pos, 4);
    std::string tag(reinterpret_cast<const char*>(tag_bytes.data()), 4);
    if (!std::all_of(tag.begin(), tag.end(), [](char c) { return c > 0x20 && c < 0x7F; }))
      fail(fmt::format("model file: section {} of {} at byte {} has tag {}, not 4 printable characters", s + 1,
                       section_count, pos, printable(tag_bytes)));
    const std::uint32_t flags = load_u32(p + pos + 4);
    const std::uint64_t length = load_u64(p + pos + 8);
    const std::size_t room = end - pos - section_header_size - checksum_size;
    if (length > room) fail(fmt::format("model file: section '{}' claims {} bytes, only {} remain", tag, length, room));
    const std::size_t total = section_header_size + static_cast<std::size_t>(length);
    const std::uint32_t stored = load_u32(p + pos + total);
    const std::uint32_t computed = crc32(bytes.subspan(pos, total));
    if (stored != computed)
      fail(fmt::format("model file: section '{}' checksum mismatch (stored 0x{:08x}, computed 0x{:08x})", tag, stored,
                       computed));
    if (std::any_of(found.begin(), found.end(), [&](const Found& f) { return f.tag == tag; }))
      fail(fmt::format("model file: section '{}' appears twice", tag));
    found.push_back({tag, (flags & section_required) != 0,
                     bytes.subspan(pos + section_header_size, static_cast<std::size_t>(length))});
    pos += total + checksum_size;
  }
  if (pos != end)
    fail(fmt::format("model file: {} bytes between the last of its {} sections and the file checksum", end - pos,
                     section_count));
  if (std::uint32_t stored = load_u32(p + end), computed = crc32(bytes.first(end)); stored != computed)
    fail(fmt::format("model file: file checksum mismatch (stored 0x{:08x}, computed 0x{:08x})", stored, computed));

  ModelFile m;
  for (std::string_view required : {tag_info, tag_conf, tag_onnx})
    if (std::none_of(found.begin(), found.end(), [&](const Found& f) { return f.tag == required; }))
      fail(fmt::format("model file: section '{}' is missing", required));
  for (const Found& f : found) {
    if (f.tag == tag_info) {
      decode_info(f.payload, m);
    } else if (f.tag == tag_conf) {
      m.config_json.assign(reinterpret_cast<const char*>(f.payload.data()), f.payload.size());
    } else if (f.tag == tag_prep) {
      decode_prep(f.payload, m);
    } else if (f.tag == tag_dyns) {
      decode_dyns(f.payload, m);
    } else if (f.tag == tag_qnt8) {
      if (!f.required)
        fail("model file: section 'qnt8' is not marked required; a reader that skips it would run the model as float");
      decode_qnt8(f.payload, m);
    } else if (f.tag == tag_onnx) {
      m.onnx.assign(f.payload.begin(), f.payload.end());
    } else if (f.required) {
      fail(fmt::format("model file: section '{}' is required to run the model but unknown to this reader ({}); "
                       "it was written by a newer rknnxx",
                       f.tag, producer_name()));
    } else {
      m.extra_sections.push_back({f.tag, false, std::vector<std::byte>(f.payload.begin(), f.payload.end())});
    }
  }
  if (m.dynamic_input && !m.preprocess.empty() && m.dynamic_input->front().size() != m.preprocess.size())
    fail(fmt::format("model file: section 'prep' has {} inputs, section 'dyns' {}", m.preprocess.size(),
                     m.dynamic_input->front().size()));
  return m;
}

void save_model_file(const std::filesystem::path& path, const ModelFile& model) {
  const std::vector<std::byte> bytes = serialize_model_file(model);
  // Only a regular file is written, or replaced: never through a symlink, and never a device, FIFO
  // or directory (as root, renaming over /dev/full would replace the device node).
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0) {
    const char* kind = S_ISLNK(target.st_mode)               ? "a symbolic link"
        : S_ISDIR(target.st_mode)                            ? "a directory"
        : S_ISCHR(target.st_mode) || S_ISBLK(target.st_mode) ? "a device"
        : S_ISFIFO(target.st_mode)                           ? "a FIFO"
        : S_ISSOCK(target.st_mode)                           ? "a socket"
                                                             : nullptr;
    if (kind != nullptr)
      fail(fmt::format("model file: '{}' is {}; give the path of a regular file (or of a new one) to write",
                       path.string(), kind));
  } else if (errno != ENOENT) {
    fail(fmt::format("model file: cannot write '{}': {}", path.string(), std::strerror(errno)));
  }
  // Written to a new file of its own next to the target (O_EXCL: never one an attacker placed there)
  // and renamed over it, so that a failed write never leaves half a model where a good one was.
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string temporary = (folder / (path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail(fmt::format("model file: cannot write '{}': {}", path.string(), std::strerror(errno)));
  auto discard = [&](std::string_view what, int error) {
    ::close(fd);
    ::unlink(temporary.c_str());
    fail(fmt::format("model file: cannot {} '{}': {}", what, path.string(), std::strerror(error)));
  };
  for (std::size_t written = 0; written < bytes.size();) {
    const ::ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) discard("write", n < 0 ? errno : EIO);
    written += static_cast<std::size_t>(n);
  }
  // mkstemp creates 0600; a model is as readable as any file the user creates.
  const ::mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) discard("write", errno);
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(fmt::format("model file: cannot write '{}': {}", path.string(), std::strerror(error)));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    fail(fmt::format("model file: cannot write '{}': {}", path.string(), std::strerror(error)));
  }
}

namespace {

std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::vector<std::byte> read_model_file_bytes(const std::filesystem::path& path) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO that has no writer would otherwise block here for ever; it changes
  // nothing for the regular files that are read.
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) fail(fmt::format("model file: cannot open '{}': {}", name, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat status {};
  if (::fstat(fd, &status) != 0) fail(fmt::format("model file: cannot examine '{}': {}", name, std::strerror(errno)));
  if (!S_ISREG(status.st_mode))
    fail(fmt::format("model file: '{}' is {}, not a regular file", name, file_kind(status.st_mode)));
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > max_model_file_bytes || size > std::numeric_limits<std::size_t>::max())
    fail(fmt::format("model file: '{}' is {} bytes, more than the {} a model file may have", name, size,
                     max_model_file_bytes));
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(fmt::format("model file: cannot read '{}': {}", name, std::strerror(errno)));
    if (n == 0) fail(fmt::format("model file: '{}' shrank while read: {} of {} bytes", name, done, bytes.size()));
    done += static_cast<std::size_t>(n);
  }
  std::byte extra{};
  if (::read(fd, &extra, 1) > 0) fail(fmt::format("model file: '{}' grew while read, beyond {} bytes", name, size));
  return bytes;
}

ModelFile load_model_file(const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_model_file_bytes(path);
  try {
    return parse_model_file(bytes);
  } catch (const ModelFileError& e) {
    // Name the file: "model file: x.hrknn: section 'onnx' checksum mismatch ..."
    std::string message = e.what();
    constexpr std::string_view prefix = "model file: ";
    if (message.starts_with(prefix)) message.insert(prefix.size(), fmt::format("'{}': ", path.string()));
    throw ModelFileError(message);
  }
}

}  // namespace rknnxx::host
