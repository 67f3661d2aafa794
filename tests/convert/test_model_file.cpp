// The host model file: round trip, every kind of damage refused with a message naming it, and the step
// from config to model file.
#include <doctest/doctest.h>

#include "convert/config_json.hpp"
#include "convert/host_model.hpp"
#include "convert/model_file.hpp"

#include "scratch_dir.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

using namespace rknnxx;
using host::ModelFile;
using host::ModelFileError;

namespace {

std::vector<std::byte> bytes_of(std::string_view s) {
  auto b = std::as_bytes(std::span(s.data(), s.size()));
  return {b.begin(), b.end()};
}

ModelFile sample() {
  ModelFile m;
  m.target_platform = toolkit::Platform::rk3566;
  m.producer = "rknnxx test";
  m.custom_string = "hello";
  m.config_json = R"({"target_platform":"rk3566"})";
  m.preprocess = {{{0, 0, 0}, {255, 255, 255}}, {{1}, {2}}};
  m.dynamic_input = toolkit::DynamicInput{{{1, 3, 4, 4}, {1, 1, 4, 4}}, {{1, 3, 2, 2}, {1, 1, 2, 2}}};
  m.onnx = bytes_of("\x08\x07 not really onnx");
  return m;
}

std::string error_of(std::span<const std::byte> bytes) {
  try {
    (void)host::parse_model_file(bytes);
  } catch (const ModelFileError& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

void put_u32(std::vector<std::byte>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + static_cast<std::size_t>(i)] = static_cast<std::byte>(v >> (8 * i));
}

// Recomputes the header checksum after a deliberate header change.
void fix_header_crc(std::vector<std::byte>& b) { put_u32(b, 28, host::crc32(std::span(b).first(28))); }
void fix_file_crc(std::vector<std::byte>& b) {
  put_u32(b, b.size() - 4, host::crc32(std::span(b).first(b.size() - 4)));
}

// Where the sections of a serialized file are: tag -> [start of section header, end of its checksum).
std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>> sections(const std::vector<std::byte>& b) {
  std::vector<std::pair<std::string, std::pair<std::size_t, std::size_t>>> out;
  std::size_t pos = 32;
  while (pos + 4 < b.size()) {
    std::string tag(reinterpret_cast<const char*>(b.data() + pos), 4);
    std::uint64_t length = 0;
    for (int i = 7; i >= 0; --i)
      length = length << 8 | std::to_integer<std::uint64_t>(b[pos + 8 + static_cast<std::size_t>(i)]);
    const std::size_t end = pos + 16 + static_cast<std::size_t>(length) + 4;
    out.push_back({tag, {pos, end}});
    pos = end;
  }
  return out;
}

}  // namespace

TEST_CASE("CRC-32 is zlib's") {
  CHECK(host::crc32(bytes_of("123456789")) == 0xCBF43926U);
  CHECK(host::crc32({}) == 0U);
  CHECK(host::crc32(bytes_of("The quick brown fox jumps over the lazy dog")) == 0x414FA339U);
  // Running over pieces gives the checksum of the whole, whatever the split (the 8-byte loop and the tail).
  const auto text = bytes_of("a somewhat longer text to cross several eight-byte blocks");
  const std::uint32_t whole = host::crc32(text);
  for (std::size_t split = 0; split <= text.size(); ++split)
    CHECK(host::crc32(std::span(text).subspan(split), host::crc32(std::span(text).first(split))) == whole);
}

TEST_CASE("a model file round-trips, through memory and through a path") {
  const ModelFile m = sample();
  const std::vector<std::byte> bytes = host::serialize_model_file(m);
  CHECK(std::memcmp(bytes.data(), "RKNNXXHM", 8) == 0);
  CHECK(host::parse_model_file(bytes) == m);

  ModelFile plain;
  plain.config_json = "{}";
  CHECK(host::parse_model_file(host::serialize_model_file(plain)).producer == "rknnxx 0.1.0");
  plain.producer = "x";
  CHECK(host::parse_model_file(host::serialize_model_file(plain)) == plain);

  const test::TempDir scoped;
  const auto& dir = scoped.path();
  const auto path = dir / ("model" + std::string(host::model_file_extension));
  host::save_model_file(path, m);
  CHECK(host::load_model_file(path) == m);
  CHECK_FALSE(std::filesystem::exists(dir / "model.hrknn.partial"));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << "RKNNXXHM";
  CHECK_THROWS_WITH_AS((void)host::load_model_file(path), doctest::Contains("model.hrknn': truncated"), ModelFileError);
  CHECK_THROWS_WITH_AS((void)host::load_model_file(dir / "missing.hrknn"), doctest::Contains("cannot open"),
                       ModelFileError);
}

TEST_CASE("a truncated file is refused at every length") {
  const std::vector<std::byte> bytes = host::serialize_model_file(sample());
  CHECK(error_of(std::span(bytes).first(0)) == "model file: empty (0 bytes)");
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    CAPTURE(n);
    CHECK(contains(error_of(std::span(bytes).first(n)), "model file: truncated: "));
  }
  CHECK(error_of(std::span(bytes).first(100)) ==
        fmt::format("model file: truncated: the header says {} bytes, 100 are there", bytes.size()));
  std::vector<std::byte> longer = bytes;
  longer.push_back(std::byte{0});
  CHECK(contains(error_of(longer), "model file: 1 bytes after the end the header gives"));
}

TEST_CASE("a flipped byte anywhere is refused, naming the damaged part") {
  const std::vector<std::byte> bytes = host::serialize_model_file(sample());
  const auto where = sections(bytes);
  REQUIRE(where.size() == 5);
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    for (std::byte flip : {std::byte{0x01}, std::byte{0x80}, std::byte{0xFF}}) {
      std::vector<std::byte> damaged = bytes;
      damaged[at] ^= flip;
      const std::string message = error_of(damaged);
      CAPTURE(at);
      CAPTURE(message);
      if (at < 8) {
        CHECK(contains(message, "model file: wrong magic"));
      } else if (at < 12) {
        CHECK(contains(message, "model file: format version"));
      } else if (at < 32) {
        CHECK(contains(message, "model file: header checksum mismatch"));
      } else if (at >= bytes.size() - 4) {
        CHECK(contains(message, "model file: file checksum mismatch"));
      } else {
        bool named = false;
        for (const auto& [tag, range] : where)
          if (at >= range.first && at < range.second) {
            // A damaged tag or length is caught by the section's checks before its checksum.
            named = contains(message, "model file: section '" + tag + "' checksum mismatch (stored 0x") ||
                (at < range.first + 16 && contains(message, "model file: section"));
          }
        CHECK(named);
      }
    }
  }
  // The exact message for damage in the ONNX bytes.
  std::vector<std::byte> damaged = bytes;
  damaged[bytes.size() - 10] ^= std::byte{0x40};
  const std::string message = error_of(damaged);
  CHECK(contains(message, "model file: section 'onnx' checksum mismatch (stored 0x"));
  CHECK(contains(message, ", computed 0x"));
}

TEST_CASE("a different version or magic is refused by name") {
  std::vector<std::byte> bytes = host::serialize_model_file(sample());
  std::vector<std::byte> v2 = bytes;
  put_u32(v2, 8, 2);
  fix_header_crc(v2);
  CHECK(error_of(v2) ==
        "model file: format version 2 is not supported (this reader reads version 1); it was written "
        "by a newer rknnxx");
  put_u32(v2, 8, 0);
  fix_header_crc(v2);
  CHECK(error_of(v2) == "model file: format version 0 is not supported (this reader reads version 1)");

  CHECK(
      contains(error_of(bytes_of(std::string_view("RKNN\0\0\0\0 vendor model", 20))), "probably a vendor .rknn model"));
  CHECK(contains(error_of(bytes_of("\x08\x07\x12\x04onnx")), "this looks like an ONNX model"));
  CHECK(error_of(bytes_of("GIF89a...")) ==
        "model file: wrong magic 'GIF89a..' (0x4749463839612e2e), expected 'RKNNXXHM': not an rknnxx host model");
  CHECK(contains(error_of(bytes_of("RKN")), "truncated"));
}

TEST_CASE("structural damage with valid checksums is refused without absurd allocations") {
  const std::vector<std::byte> good = host::serialize_model_file(sample());
  const auto where = sections(good);

  // A section length far beyond the file, with every checksum recomputed.
  {
    std::vector<std::byte> b = good;
    const std::size_t onnx = where.back().second.first;
    put_u32(b, onnx + 8, 0xFFFFFFF0U);
    put_u32(b, onnx + 12, 0xFFFFFFFFU);
    fix_file_crc(b);
    CHECK(contains(error_of(b), "model file: section 'onnx' claims 18446744073709551600 bytes, only"));
  }
  // A section count larger than what is there, and an absurd one.
  {
    std::vector<std::byte> b = good;
    put_u32(b, 12, 6);
    fix_header_crc(b);
    CHECK(contains(error_of(b), "model file: section 6 of 6 starts at byte"));
    put_u32(b, 12, 4);
    fix_header_crc(b);
    CHECK(contains(error_of(b), "bytes between the last of its 4 sections and the file checksum"));
    put_u32(b, 12, 0xFFFFFFFFU);
    fix_header_crc(b);
    CHECK(contains(error_of(b), "claims 4294967295 sections"));
  }
  // A payload whose counts exceed it: built by hand with a valid checksum.
  auto with_prep = [&](std::vector<std::byte> payload) {
    ModelFile m = sample();
    m.preprocess.clear();
    m.dynamic_input.reset();
    m.extra_sections.push_back({"zzzz", false, {}});
    std::vector<std::byte> b = host::serialize_model_file(m);
    // Rename the extra section to "prep" and give it the payload: rebuild that section in place.
    const auto at = sections(b);
    const auto range = at[2].second;  // info, conf, zzzz, onnx
    REQUIRE(at[2].first == "zzzz");
    std::vector<std::byte> section;
    for (char c : std::string_view("prep")) section.push_back(static_cast<std::byte>(c));
    for (int i = 0; i < 4; ++i) section.push_back(std::byte{0});
    const std::uint64_t n = payload.size();
    for (int i = 0; i < 8; ++i) section.push_back(static_cast<std::byte>(n >> (8 * i)));
    section.insert(section.end(), payload.begin(), payload.end());
    const std::uint32_t crc = host::crc32(section);
    for (int i = 0; i < 4; ++i) section.push_back(static_cast<std::byte>(crc >> (8 * i)));
    std::vector<std::byte> out(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(range.first));
    out.insert(out.end(), section.begin(), section.end());
    out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(range.second), b.end());
    const std::uint64_t size = out.size();
    for (int i = 0; i < 8; ++i) out[16 + static_cast<std::size_t>(i)] = static_cast<std::byte>(size >> (8 * i));
    fix_header_crc(out);
    fix_file_crc(out);
    return out;
  };
  CHECK(host::parse_model_file(with_prep({std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}})).preprocess.empty());
  CHECK(error_of(with_prep({std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}})) ==
        "model file: section 'prep': preprocessing of 4294967295 inputs needs 85899345900 bytes, 0 left");
  CHECK(error_of(
            with_prep({std::byte{1},    std::byte{0},    std::byte{0}, std::byte{0}, std::byte{0xFF}, std::byte{0xFF},
                       std::byte{0xFF}, std::byte{0x0F}, std::byte{0}, std::byte{0}, std::byte{0},    std::byte{0},
                       std::byte{0},    std::byte{0},    std::byte{0}, std::byte{0}, std::byte{0},    std::byte{0},
                       std::byte{0},    std::byte{0},    std::byte{0}, std::byte{0}, std::byte{0},    std::byte{0}})) ==
        "model file: section 'prep': mean and std of input 0 (268435455 channels) needs 4294967280 bytes, 16 left");
  CHECK(error_of(with_prep({std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{9}})) ==
        "model file: section 'prep': 1 unexpected bytes after its content");
}

TEST_CASE("sections from newer writers: optional ones are kept, required ones refused") {
  ModelFile m = sample();
  m.extra_sections.push_back({"qtab", false, bytes_of("future data")});
  const ModelFile back = host::parse_model_file(host::serialize_model_file(m));
  CHECK(back == m);
  m.extra_sections.front().required = true;
  CHECK(error_of(host::serialize_model_file(m)) ==
        "model file: section 'qtab' is required to run the model but unknown to this reader (rknnxx 0.1.0); it was "
        "written by a newer rknnxx");
  m.extra_sections.front().tag = "onnx";
  CHECK_THROWS_AS((void)host::serialize_model_file(m), ModelFileError);
}

namespace {

// The file of `sample()` with one more section, `tag`, holding `payload` as given (every checksum valid).
std::vector<std::byte> with_section(std::string_view tag, bool required, const std::vector<std::byte>& payload) {
  ModelFile m = sample();
  m.extra_sections.push_back({"zzzz", required, payload});
  std::vector<std::byte> b = host::serialize_model_file(m);
  const auto at = sections(b);
  const auto found = std::find_if(at.begin(), at.end(), [](const auto& s) { return s.first == "zzzz"; });
  REQUIRE(found != at.end());
  std::memcpy(b.data() + found->second.first, tag.data(), 4);
  put_u32(b, found->second.second - 4,
          host::crc32(std::span(b).subspan(found->second.first, found->second.second - 4 - found->second.first)));
  fix_file_crc(b);
  return b;
}

// A "qnt8" payload written field by field (docs in host/model_file.hpp).
struct Payload {
  std::vector<std::byte> bytes;
  Payload& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::byte>(v >> (8 * i)));
    return *this;
  }
  Payload& f32(float v) { return u32(std::bit_cast<std::uint32_t>(v)); }
  Payload& str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    for (char c : s) bytes.push_back(static_cast<std::byte>(c));
    return *this;
  }
  Payload& head(std::uint32_t tensors, std::string_view dtype = "w8a8", std::uint32_t samples = 4) {
    return str(dtype).str("normal").str("channel").u32(samples).u32(tensors);
  }
  Payload& tensor(std::string_view name, float scale, std::int32_t zero_point) {
    return str(name).f32(scale).u32(static_cast<std::uint32_t>(zero_point));
  }
};

}  // namespace

TEST_CASE("the quantization section: round trip, required, and every bad value refused by name") {
  ModelFile m = sample();
  m.quantization = host::ModelQuantization{toolkit::QuantizedDtype::w8a8,
                                           toolkit::QuantizedAlgorithm::mmse,
                                           toolkit::QuantizedMethod::layer(),
                                           20,
                                           {{"images", 0.0187f, -3}, {"conv_out", 0.5f, -128}, {"logits", 1e-3f, 127}},
                                           {},
                                           {}};
  const std::vector<std::byte> bytes = host::serialize_model_file(m);
  CHECK(host::parse_model_file(bytes) == m);
  const auto where = sections(bytes);
  const auto qnt8 = std::find_if(where.begin(), where.end(), [](const auto& s) { return s.first == "qnt8"; });
  REQUIRE(qnt8 != where.end());
  // Marked required: an older reader refuses the file instead of running the model as float.
  CHECK(std::to_integer<int>(bytes[qnt8->second.first + 4]) == 1);
  const std::string meta = host::model_file_metadata_json(m);
  CHECK(contains(meta, R"("algorithm": "mmse")"));
  CHECK(contains(meta, R"("tensors": 3)"));

  // The same payload rebuilt by hand parses to the same value, so the layout is the documented one.
  Payload good;
  good.head(1).tensor("x", 0.25f, 5);
  const host::ModelFile parsed = host::parse_model_file(with_section("qnt8", true, good.bytes));
  REQUIRE(parsed.quantization.has_value());
  CHECK(parsed.quantization->tensors == std::vector<host::QuantizedTensor>{{"x", 0.25f, 5}});
  CHECK(parsed.quantization->method == toolkit::QuantizedMethod::channel());
  CHECK(parsed.quantization->samples == 4);
  CHECK(error_of(with_section("qnt8", false, good.bytes)) ==
        "model file: section 'qnt8' is not marked required; a reader that skips it would run the model as float");

  auto refused = [](Payload p) { return error_of(with_section("qnt8", true, p.bytes)); };
  CHECK(refused(Payload{}.head(1).tensor("x", 0.25f, 200)) ==
        "model file: section 'qnt8': tensor 'x' has zero point 200; expected -128..127");
  CHECK(refused(Payload{}.head(1).tensor("x", 0.25f, -129)) ==
        "model file: section 'qnt8': tensor 'x' has zero point -129; expected -128..127");
  CHECK(contains(refused(Payload{}.head(1).tensor("x", std::nanf(""), 0)), "expected a finite scale above 0"));
  CHECK(contains(refused(Payload{}.head(1).tensor("x", 0.0f, 0)), "tensor 'x' has scale 0; expected a finite"));
  CHECK(contains(refused(Payload{}.head(1).tensor("x", -1.0f, 0)), "has scale -1"));
  CHECK(refused(Payload{}.head(1).tensor("", 1.0f, 0)) == "model file: section 'qnt8': a tensor without a name");
  CHECK(refused(Payload{}.head(2).tensor("x", 1.0f, 0).tensor("x", 2.0f, 0)) ==
        "model file: section 'qnt8': tensor 'x' is listed twice");
  // 0 samples: a w8a8 QDQ model, whose parameters came from the model (host/convert/qdq.hpp); it has tensors.
  const host::ModelFile qdq =
      host::parse_model_file(with_section("qnt8", true, Payload{}.head(1, "w8a8", 0).tensor("x", 1.0f, 0).bytes));
  REQUIRE(qdq.quantization.has_value());
  CHECK(qdq.quantization->samples == 0);
  CHECK(refused(Payload{}.head(0, "w8a8", 0)) == "model file: section 'qnt8': 0 calibration samples and no tensors");
  CHECK(refused(Payload{}.str("w8a8").str("mmse").str("channel").u32(0).u32(1).tensor("x", 1.0f, 0)) ==
        "model file: section 'qnt8': 0 calibration samples with dtype 'w8a8' and algorithm 'mmse'; only a w8a8 QDQ "
        "model (algorithm normal) has none");
  CHECK(contains(refused(Payload{}.head(0, "w8a16", 0)), "0 calibration samples with dtype 'w8a16'"));
  CHECK(contains(refused(Payload{}.head(0, "w4a8")), "unknown quantized dtype 'w4a8'"));
  CHECK(contains(refused(Payload{}.head(0, "int8")), "unknown quantized dtype 'int8'"));
  CHECK(contains(refused(Payload{}.str("w8a8").str("gdq").str("channel").u32(1).u32(0).u32(0)),
                 "algorithm 'gdq' with dtype 'w8a8'; gdq rounds the weights of w8a16 and w4a16 only"));
  // The weight-only types: no activation tensors; groups with w4a16 only.
  CHECK(contains(refused(Payload{}.head(1, "w8a16").tensor("x", 1.0f, 0)),
                 "1 activation tensors with dtype 'w8a16', whose activations stay float16"));
  CHECK(contains(refused(Payload{}.str("w8a16").str("normal").str("group64").u32(1).u32(0)),
                 "weight method 'group64' with dtype 'w8a16'; groups are for w4a16 only"));
  CHECK(contains(refused(Payload{}.str("w8a8").str("normal").str("group64").u32(1).u32(0)), "groups are for w4a16"));
  // gdq: the clip ratios follow the (empty) tensors, by weight.
  auto gdq = [] { return Payload{}.str("w4a16").str("gdq").str("group64").u32(3).u32(0); };
  const host::ModelFile w4 = host::parse_model_file(
      with_section("qnt8", true, gdq().u32(2).str("w1").u32(2).f32(1.0f).f32(0.75f).str("w2").u32(1).f32(0.5f).bytes));
  REQUIRE(w4.quantization.has_value());
  CHECK(w4.quantization->dtype == toolkit::QuantizedDtype::w4a16);
  CHECK(w4.quantization->algorithm == toolkit::QuantizedAlgorithm::gdq);
  CHECK(w4.quantization->method == toolkit::QuantizedMethod::group(64));
  CHECK(w4.quantization->tensors.empty());
  CHECK(w4.quantization->clipped == std::vector<host::ClippedWeight>{{"w1", {1.0f, 0.75f}}, {"w2", {0.5f}}});
  ModelFile clipped = sample();
  clipped.quantization = w4.quantization;
  CHECK(host::parse_model_file(host::serialize_model_file(clipped)) == clipped);
  CHECK(contains(refused(gdq()), "clipped weight count needs 4 bytes, 0 left"));
  CHECK(contains(refused(gdq().u32(1).str("w").u32(1).f32(0.25f)), "weight 'w' has clip ratio 0.25; expected 0.5..1"));
  CHECK(contains(refused(gdq().u32(1).str("w").u32(1).f32(std::nanf(""))), "expected 0.5..1"));
  CHECK(contains(refused(gdq().u32(1).str("w").u32(0)), "weight 'w' has no clip ratios"));
  CHECK(contains(refused(gdq().u32(1).str("").u32(1).f32(1.0f)), "a clipped weight without a name"));
  CHECK(contains(refused(gdq().u32(2).str("w").u32(1).f32(1.0f).str("w").u32(1).f32(1.0f)),
                 "weight 'w' is clipped twice"));
  CHECK(contains(refused(gdq().u32(0xFFFFFFFFU)), "4294967295 clipped weights needs 34359738360 bytes"));
  CHECK(contains(refused(gdq().u32(1).str("w").u32(0x40000000U)), "1073741824 clip ratios needs 4294967296 bytes"));
  clipped.quantization->algorithm = toolkit::QuantizedAlgorithm::normal;
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(clipped),
                       doctest::Contains("clip ratios with algorithm 'normal'; only gdq clips weights"),
                       ModelFileError);
  ModelFile weight_only = sample();
  weight_only.quantization = host::ModelQuantization{toolkit::QuantizedDtype::w8a16,
                                                     toolkit::QuantizedAlgorithm::normal,
                                                     toolkit::QuantizedMethod::layer(),
                                                     2,
                                                     {},
                                                     {},
                                                     {}};
  CHECK(host::parse_model_file(host::serialize_model_file(weight_only)) == weight_only);
  CHECK(contains(refused(Payload{}.str("w8a8").str("normal").str("row").u32(1).u32(0)), "unknown weight method 'row'"));
  CHECK(contains(refused(Payload{}.str("w8a8").str("normal").str("group33").u32(1).u32(0)), "invalid group size"));
  // Counts and lengths beyond the payload are refused before anything is allocated.
  CHECK(refused(Payload{}.head(0xFFFFFFFFU)) ==
        "model file: section 'qnt8': 4294967295 quantized tensors needs 51539607540 bytes, 0 left");
  CHECK(contains(refused(Payload{}.head(1).u32(0xFFFFFFF0U).u32(0).u32(0)), "tensor name needs 4294967280 bytes"));
  CHECK(contains(refused(Payload{}.head(1).tensor("x", 1.0f, 0).u32(1).str("x").u32(7)),
                 "4 unexpected bytes after its content"));
  CHECK(contains(refused(Payload{}.str("w8a8")), "algorithm needs 4 bytes, 0 left"));

  // Hybrid quantization: the float16 values follow the tensors, only when there are some.
  auto hybrid = [] { return Payload{}.head(2).tensor("x", 0.5f, 0).tensor("y", 0.25f, 1); };
  const host::ModelFile mixed = host::parse_model_file(with_section("qnt8", true, hybrid().u32(1).str("y").bytes));
  REQUIRE(mixed.quantization.has_value());
  CHECK(mixed.quantization->float16 == std::vector<std::string>{"y"});
  CHECK(host::parse_model_file(host::serialize_model_file(mixed)) == mixed);
  CHECK(host::parse_model_file(with_section("qnt8", true, hybrid().bytes)).quantization->float16.empty());
  CHECK(refused(hybrid().u32(1).str("z")) ==
        "model file: section 'qnt8': float16 value 'z' is not one of the section's tensors");
  CHECK(refused(hybrid().u32(2).str("y").str("y")) == "model file: section 'qnt8': float16 value 'y' is listed twice");
  CHECK(contains(refused(hybrid().u32(0)), "a float16 value count of 0"));
  CHECK(contains(refused(hybrid().u32(0xFFFFFFFFU)), "4294967295 float16 values needs 17179869180 bytes"));
  CHECK(contains(refused(hybrid().u32(1).u32(9)), "float16 value name needs 9 bytes, 0 left"));
  CHECK(refused(gdq().u32(0).u32(1).str("w")) ==
        "model file: section 'qnt8': 1 float16 values with dtype 'w4a16'; hybrid quantization is for w8a8 only");
  ModelFile float16_w8a16 = weight_only;
  float16_w8a16.quantization->float16 = {"x"};
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(float16_w8a16),
                       doctest::Contains("1 float16 values with dtype 'w8a16'"), ModelFileError);

  // The writer refuses what the reader would.
  ModelFile bad = m;
  bad.quantization->tensors.push_back({"images", 1.0f, 0});
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(bad),
                       "model file: cannot write quantization: tensor 'images' is listed twice", ModelFileError);
  bad = m;
  bad.quantization->dtype = toolkit::QuantizedDtype::w8a16;
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(bad), doctest::Contains("whose activations stay float16"),
                       ModelFileError);
  bad.quantization->dtype = toolkit::QuantizedDtype::w16a16i_dfp;  // m's tensors have affine scales
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(bad),
                       "model file: cannot write quantization: tensor 'images' has zero point -3; w16a16i_dfp "
                       "tensors have 0",
                       ModelFileError);
}

TEST_CASE("the quantization section with w16a16i_dfp: every tensor's fl as its scale 2^-fl, zero points 0") {
  ModelFile m = sample();
  m.quantization = host::ModelQuantization{toolkit::QuantizedDtype::w16a16i_dfp,
                                           toolkit::QuantizedAlgorithm::normal,
                                           toolkit::QuantizedMethod::channel(),
                                           16,
                                           {{"images", std::ldexp(1.0f, -13), 0},
                                            {"conv_out", std::ldexp(1.0f, 4), 0},
                                            {"tiny", std::ldexp(1.0f, -64), 0},
                                            {"huge", std::ldexp(1.0f, 64), 0}},
                                           {},
                                           {}};
  CHECK(host::parse_model_file(host::serialize_model_file(m)) == m);
  ModelFile layer = m;
  layer.quantization->method = toolkit::QuantizedMethod::layer();
  CHECK(host::parse_model_file(host::serialize_model_file(layer)) == layer);
  // The payload by hand: the documented layout.
  Payload good;
  good.head(1, "w16a16i_dfp").tensor("x", 0.125f, 0);
  const host::ModelFile parsed = host::parse_model_file(with_section("qnt8", true, good.bytes));
  REQUIRE(parsed.quantization.has_value());
  CHECK(parsed.quantization->dtype == toolkit::QuantizedDtype::w16a16i_dfp);
  CHECK(parsed.quantization->tensors == std::vector<host::QuantizedTensor>{{"x", 0.125f, 0}});

  auto refused = [](Payload p) { return error_of(with_section("qnt8", true, p.bytes)); };
  CHECK(refused(Payload{}.head(1, "w16a16i_dfp").tensor("x", 0.125f, 1)) ==
        "model file: section 'qnt8': tensor 'x' has zero point 1; w16a16i_dfp tensors have 0");
  CHECK(refused(Payload{}.head(1, "w16a16i_dfp").tensor("x", 0.3f, 0)) ==
        "model file: section 'qnt8': tensor 'x' has scale 0.3; w16a16i_dfp expects 2^-fl with fl in -64..64");
  CHECK(contains(refused(Payload{}.head(1, "w16a16i_dfp").tensor("x", std::ldexp(1.0f, -65), 0)),
                 "w16a16i_dfp expects 2^-fl with fl in -64..64"));
  CHECK(contains(refused(Payload{}.head(1, "w16a16i_dfp").tensor("x", std::ldexp(1.0f, 65), 0)), "fl in -64..64"));
  CHECK(contains(refused(Payload{}.head(1, "w16a16i_dfp").tensor("x", -0.125f, 0)), "expected a finite scale above 0"));
  // Parameters come from calibration only (no QDQ form), never gdq, no groups.
  CHECK(contains(refused(Payload{}.head(1, "w16a16i_dfp", 0).tensor("x", 0.125f, 0)),
                 "0 calibration samples with dtype 'w16a16i_dfp'"));
  CHECK(contains(refused(Payload{}.str("w16a16i_dfp").str("gdq").str("channel").u32(1).u32(0).u32(0)),
                 "algorithm 'gdq' with dtype 'w16a16i_dfp'"));
  CHECK(contains(refused(Payload{}.str("w16a16i_dfp").str("normal").str("group32").u32(1).u32(0)),
                 "weight method 'group32' with dtype 'w16a16i_dfp'; groups are for w4a16 only"));
  ModelFile bad = m;
  bad.quantization->tensors[1].scale = 16.5f;
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(bad), doctest::Contains("tensor 'conv_out' has scale 16.5"),
                       ModelFileError);
}

TEST_CASE("values that cannot be written are refused when writing") {
  ModelFile m = sample();
  m.custom_string = std::string(1024, 'x');
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(m), doctest::Contains("rknn_custom_string"), ModelFileError);
  m = sample();
  m.preprocess[1].std.push_back(1);
  CHECK_THROWS_WITH_AS((void)host::serialize_model_file(m), doctest::Contains("input 1 has 1 means and 2 stds"),
                       ModelFileError);
  m = sample();
  m.dynamic_input = toolkit::DynamicInput{};
  CHECK_THROWS_AS((void)host::serialize_model_file(m), ModelFileError);
}

TEST_CASE("from a config to a model file") {
  toolkit::Config c = host::config_from_json(R"({"target_platform": "rk3588", "mean_values": [[0, 0, 0]],
      "quant_img_RGB2BGR": true, "custom_string": "yolo v8", "dynamic_input": [[[1,3,640,640]], [[1,3,320,320]]]})");
  const std::vector<toolkit::ModelInput> inputs{{"images", {1, 3, -1, -1}, -1}};
  const ModelFile m = host::make_host_model(c, inputs, bytes_of("onnx bytes"));
  CHECK(m.target_platform == toolkit::Platform::rk3588);
  CHECK(m.custom_string == "yolo v8");
  REQUIRE(m.preprocess.size() == 1);
  CHECK(m.preprocess[0].mean == std::vector<double>{0, 0, 0});
  CHECK(m.preprocess[0].std == std::vector<double>{1, 1, 1});
  CHECK(m.dynamic_input == c.dynamic_input);
  CHECK_FALSE(contains(m.config_json, "quant_img_RGB2BGR"));
  CHECK(host::parse_model_file(host::serialize_model_file(m)) == m);

  const std::string meta = host::model_file_metadata_json(m);
  CHECK(contains(meta, "\"target_platform\": \"rk3588\""));
  CHECK(contains(meta, "\"max_shape_group\": 0"));
  CHECK(contains(meta, fmt::format("\"crc32\": \"0x{:08x}\"", host::crc32(m.onnx))));
  CHECK(contains(meta, "\"compute_order\": \"WidthFirst\""));  // the recorded config, parsed

  // A recorded config that is not JSON, or nested deeper than a converter writes, is shown as text.
  ModelFile odd = m;
  odd.config_json = "not json";
  CHECK(contains(host::model_file_metadata_json(odd), "\"config\": \"not json\""));
  odd.config_json = std::string(100000, '[') + std::string(100000, ']');
  CHECK(contains(host::model_file_metadata_json(odd, -1), "\"config\":\"[[[["));

  // No preprocessing when neither mean nor std is given.
  c.mean_values.reset();
  CHECK(host::make_host_model(c, inputs, {}).preprocess.empty());
  // Model rules are applied.
  c.std_values = {{1, 1}};
  CHECK_THROWS_WITH_AS((void)host::make_host_model(c, inputs, {}),
                       "config: std_values[0] has 2 values, input 0 ('images') has 3 channels", toolkit::ConfigError);
}

TEST_CASE("what the host converter does not support yet is listed and refused") {
  toolkit::Config c;
  c.target_platform = toolkit::Platform::rk3588;
  CHECK(host::host_converter_unsupported(c, false).empty());
  CHECK(host::host_converter_ignored(c).empty());

  // Quantization itself is supported (its dtype, algorithm and method are judged by the quantizer,
  // tests/quantize/test_settings.cpp), and so are the thresholds of automatic hybrid quantization:
  // read with auto_hybrid (tests/host_runtime/test_int8.cpp), unused without it, as in the toolkit.
  CHECK(host::host_converter_unsupported(c, true).empty());
  const std::vector<toolkit::ModelInput> inputs{{"x", {1, 3, 8, 8}, -1}};
  CHECK_NOTHROW((void)host::make_host_model(c, inputs, {}, true));
  c.auto_hybrid_cos_thresh = 0.9;  // the default is 0.98
  c.auto_hybrid_euc_thresh = 1.0;
  CHECK(host::host_converter_unsupported(c, true).empty());
  CHECK_NOTHROW((void)host::make_host_model(c, inputs, {}, true));
  CHECK_NOTHROW((void)host::make_host_model(c, inputs, {}, false));
  c.auto_hybrid_cos_thresh = toolkit::Config{}.auto_hybrid_cos_thresh;

  c.quantized_dtype = toolkit::QuantizedDtype::w8a8;
  c.quantized_algorithm = toolkit::QuantizedAlgorithm::mmse;
  c.auto_hybrid_euc_thresh = 1.0;
  c.quantize_weight = true;
  c.remove_reshape = true;
  c.remove_weight = true;
  std::vector<std::string> keys;
  for (const auto& n : host::host_converter_unsupported(c, true)) keys.push_back(n.key);
  CHECK(keys == std::vector<std::string>{"quantize_weight", "remove_weight", "remove_reshape"});
  keys.clear();
  for (const auto& n : host::host_converter_unsupported(c, false)) keys.push_back(n.key);
  CHECK(keys == std::vector<std::string>{"quantize_weight", "remove_weight", "remove_reshape"});
  try {
    (void)host::make_host_model(c, inputs, {}, false);
    FAIL("expected a ConfigError");
  } catch (const toolkit::ConfigError& e) {
    CHECK(e.key() == "quantize_weight");
    CHECK(std::string(e.what()) ==
          "config: quantize_weight: int8-stored weights in a float model are not implemented yet in the host "
          "converter");
  }

  c = toolkit::Config{};
  c.target_platform = toolkit::Platform::rk3588;
  c.compress_weight = true;
  c.op_target["Add"] = toolkit::OpTarget::cpu;
  c.compute_order = toolkit::ComputeOrder::DepthFirst;
  keys.clear();
  for (const auto& n : host::host_converter_ignored(c)) keys.push_back(n.key);
  CHECK(keys == std::vector<std::string>{"compress_weight", "op_target", "compute_order"});
  CHECK_NOTHROW((void)host::make_host_model(c, inputs, {}));
}
