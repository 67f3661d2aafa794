#pragma once
// NumPy .npy files (one array each): the format tests and the `rknnxx run` command line use for
// tensors. Header-only and free of other dependencies (the standard library only).
//
// Reading is strict, because the files come from outside: the magic, a version 1.0, 2.0 or 3.0,
// a header holding exactly the keys 'descr', 'fortran_order' and 'shape', a numeric descriptor
// ('<f4', '<f2', '<f8', '|i1', '|u1', '<i2', '<u2', '<i4', '<u4', '<i8', '<u8', '|b1'; '>' and '='
// byte orders too), C order, and exactly as many data bytes as the shape needs. Anything else
// throws NpyError with a message naming the file (or the `what` given) and the problem. A
// truncated or corrupt file never reads out of bounds. Data is returned in the host's byte order.
//
// Writing produces what numpy.save writes: version 1.0 (2.0 for a header above 64 KiB), a
// little-endian descriptor, the header padded with spaces to a multiple of 64 bytes and ended by '\n'.
//
//   rknnxx::io::NpyArray a = rknnxx::io::read_npy("input_0.npy");
//   std::span<const float> x = a.values<float>();          // throws unless a.type is float32
//   rknnxx::io::write_npy("out.npy", std::vector<std::int64_t>{1, 10}, std::span<const float>(y));

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <rknnxx/core/error.hpp>

namespace rknnxx::io {

// The element types of .npy files that tensors use.
enum class NpyType : std::uint8_t {
  float16,
  float32,
  float64,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  boolean
};

// A malformed, unsupported or unreadable .npy file, or arguments the writer cannot encode: an
// rknnxx::Error (RKNN_ERR_PARAM_INVALID, call "npy") whose what() is the message alone ("npy: ...").
class NpyError : public Error {
public:
  explicit NpyError(const std::string& message) : Error(Errc::param_invalid, "npy", message) {}
  [[nodiscard]] const char* what() const noexcept override { return message().c_str(); }
};

namespace detail::npy {

struct TypeInfo {
  NpyType type;
  char kind;  // numpy's kind letter: 'f' float, 'i' signed, 'u' unsigned, 'b' boolean
  std::size_t size;
  std::string_view name;
};

inline constexpr TypeInfo types[] = {
    {NpyType::float16, 'f', 2, "float16"}, {NpyType::float32, 'f', 4, "float32"}, {NpyType::float64, 'f', 8, "float64"},
    {NpyType::int8, 'i', 1, "int8"},       {NpyType::uint8, 'u', 1, "uint8"},     {NpyType::int16, 'i', 2, "int16"},
    {NpyType::uint16, 'u', 2, "uint16"},   {NpyType::int32, 'i', 4, "int32"},     {NpyType::uint32, 'u', 4, "uint32"},
    {NpyType::int64, 'i', 8, "int64"},     {NpyType::uint64, 'u', 8, "uint64"},   {NpyType::boolean, 'b', 1, "bool"},
};

constexpr const TypeInfo& info(NpyType type) noexcept {
  for (const auto& t : types)
    if (t.type == type) return t;
  return types[1];  // unreachable for valid enumerators
}

}  // namespace detail::npy

constexpr std::size_t npy_type_size(NpyType type) noexcept { return detail::npy::info(type).size; }
constexpr std::string_view npy_type_name(NpyType type) noexcept { return detail::npy::info(type).name; }

// The NpyType that holds values of the C++ type T (float16 has no C++ type: read it as uint16_t bits).
template <class T> inline constexpr std::optional<NpyType> npy_type_of = std::nullopt;
template <> inline constexpr std::optional<NpyType> npy_type_of<float> = NpyType::float32;
template <> inline constexpr std::optional<NpyType> npy_type_of<double> = NpyType::float64;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::int8_t> = NpyType::int8;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::uint8_t> = NpyType::uint8;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::int16_t> = NpyType::int16;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::uint16_t> = NpyType::uint16;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::int32_t> = NpyType::int32;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::uint32_t> = NpyType::uint32;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::int64_t> = NpyType::int64;
template <> inline constexpr std::optional<NpyType> npy_type_of<std::uint64_t> = NpyType::uint64;
template <> inline constexpr std::optional<NpyType> npy_type_of<bool> = NpyType::boolean;

// One array: its element type, its shape (empty for a 0-d array) and its bytes in C order and
// the host's byte order. The bytes come from std::allocator, so they are aligned for every type.
struct NpyArray {
  NpyType type = NpyType::float32;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> data;

  std::size_t element_count() const noexcept {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    return n;
  }

  // The elements as T; throws NpyError unless T holds this array's type (uint16_t also reads float16 bits).
  // A view of a temporary array would dangle at once, so values() of an rvalue does not compile.
  template <class T> std::span<const T> values() const& {
    check_element<T>();
    return {reinterpret_cast<const T*>(data.data()), data.size() / sizeof(T)};
  }
  template <class T> std::span<T> values() & {
    check_element<T>();
    return {reinterpret_cast<T*>(data.data()), data.size() / sizeof(T)};
  }
  template <class T> void values() && = delete;

private:
  template <class T> void check_element() const {
    static_assert(npy_type_of<T>.has_value(), "values<T>: T must be an arithmetic type with an .npy counterpart");
    if (*npy_type_of<T> != type && !(std::is_same_v<T, std::uint16_t> && type == NpyType::float16))
      throw NpyError("npy: the array holds " + std::string(npy_type_name(type)) + ", not " +
                     std::string(npy_type_name(*npy_type_of<T>)));
  }
};

namespace detail::npy {

inline constexpr std::string_view magic = "\x93NUMPY";

[[noreturn]] inline void fail(std::string_view what, const std::string& problem) {
  throw NpyError(std::string(what) + ": " + problem);
}

inline std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Bytes the shape needs, or nothing when a dimension is negative or the product overflows.
inline std::optional<std::size_t> byte_count(std::span<const std::int64_t> shape, std::size_t element_size) {
  std::size_t n = element_size;
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) empty = true;
    else if (static_cast<std::uint64_t>(d) > std::numeric_limits<std::size_t>::max() / n) return std::nullopt;
    else n *= static_cast<std::size_t>(d);
  }
  return empty ? 0 : n;
}

inline void swap_bytes(std::span<std::byte> data, std::size_t element_size) {
  if (element_size < 2) return;
  for (std::size_t i = 0; i + element_size <= data.size(); i += element_size)
    std::reverse(data.begin() + static_cast<std::ptrdiff_t>(i),
                 data.begin() + static_cast<std::ptrdiff_t>(i + element_size));
}

// The header is a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }.
// A recursive-descent reader of exactly that subset; every access is bounds-checked.
class HeaderParser {
public:
  HeaderParser(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::int64_t> shape;
  };

  Header parse() {
    Header h;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal("a key");
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        once(seen_descr, key);
        if (peek() == '[') fail(what_, "unsupported dtype: structured arrays (a list descriptor) are not supported");
        h.descr = string_literal("the 'descr' value");
      } else if (key == "fortran_order") {
        once(seen_fortran, key);
        h.fortran_order = boolean_literal();
      } else if (key == "shape") {
        once(seen_shape, key);
        h.shape = shape_tuple();
      } else {
        fail(what_, "header has the unexpected key '" + key + "' (expected 'descr', 'fortran_order', 'shape')");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') problem("',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) problem("the end of the header after '}'");
    if (!seen_descr || !seen_fortran || !seen_shape)
      fail(what_,
           std::string("header lacks the key '") +
               (!seen_descr         ? "descr"
                    : !seen_fortran ? "fortran_order"
                                    : "shape") +
               "'");
    return h;
  }

private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  [[noreturn]] void problem(std::string_view expected) const {
    std::string found = pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end of the header";
    if (pos_ < text_.size()) {
      const auto byte = static_cast<unsigned char>(text_[pos_]);
      if (byte < 0x20 || byte >= 0x7f) found = "the byte " + std::to_string(byte);
    }
    fail(what_,
         "malformed header: expected " + std::string(expected) + " at byte " + std::to_string(pos_) + ", found " +
             found);
  }

  void expect(char c) {
    if (peek() != c) problem(std::string("'") + c + "'");
    ++pos_;
  }

  void once(bool& seen, const std::string& key) const {
    if (seen) fail(what_, "header has the key '" + key + "' twice");
    seen = true;
  }

  std::string string_literal(std::string_view role) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') problem(std::string(role) + " in quotes");
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') problem(std::string(role) + " without escapes");
      ++pos_;
    }
    if (pos_ >= text_.size()) problem("the closing quote of " + std::string(role));
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool boolean_literal() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    problem("True or False for 'fortran_order'");
  }

  std::vector<std::int64_t> shape_tuple() {
    std::vector<std::int64_t> shape;
    expect('(');
    skip_space();
    while (peek() != ')') {
      if (peek() == '-') fail(what_, "shape has a negative dimension");
      if (peek() < '0' || peek() > '9') problem("a dimension (a non-negative integer) or ')'");
      std::int64_t d = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        if (d > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
          fail(what_, "shape has a dimension too large for int64");
        d = d * 10 + digit;
        ++pos_;
      }
      shape.push_back(d);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != ')') {
        problem("',' or ')' in the shape");
      }
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  std::string_view what_;
  std::size_t pos_ = 0;
};

// '<f4' -> float32 and whether the file's byte order differs from the host's.
inline std::pair<NpyType, bool> decode_descr(const std::string& descr, std::string_view what) {
  auto unsupported = [&](const std::string& why) -> std::pair<NpyType, bool> {
    fail(what,
         "unsupported dtype '" + descr + "'" + why +
             " (supported: <f2 <f4 <f8 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1, also with '>' or '=')");
  };
  if (descr.size() != 3) return unsupported("");
  const char order = descr[0], kind = descr[1];
  if (descr[2] < '1' || descr[2] > '8') return unsupported("");
  const std::size_t size = static_cast<std::size_t>(descr[2] - '0');
  const TypeInfo* found = nullptr;
  for (const auto& t : types)
    if (t.kind == kind && t.size == size) found = &t;
  if (!found) return unsupported("");
  if (order != '<' && order != '>' && order != '=' && order != '|') return unsupported(": unknown byte order");
  if (order == '|' && size > 1) return unsupported(": a multi-byte type needs the byte order '<' or '>'");
  const bool file_little = order == '<' || (order == '=' && std::endian::native == std::endian::little);
  const bool swap = size > 1 && file_little != (std::endian::native == std::endian::little);
  return {found->type, swap};
}

}  // namespace detail::npy

// Parses a whole .npy file held in memory. `what` names the source in error messages.
inline NpyArray parse_npy(std::span<const std::byte> file, std::string_view what = "npy data") {
  using namespace detail::npy;
  const auto byte_at = [&](std::size_t i) { return static_cast<unsigned char>(file[i]); };
  if (file.size() < magic.size() || std::memcmp(file.data(), magic.data(), magic.size()) != 0)
    fail(what, "not a .npy file (wrong magic: expected \\x93NUMPY)");
  if (file.size() < 10) fail(what, "truncated header: the file ends inside the version and header length");
  const unsigned major = byte_at(6), minor = byte_at(7);
  if (major < 1 || major > 3 || minor != 0)
    fail(what,
         "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
             " (expected 1.0, 2.0 or 3.0)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (file.size() < 8 + length_bytes) fail(what, "truncated header: the file ends inside the header length");
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_length |= std::uint64_t{byte_at(8 + i)} << (8 * i);
  const std::size_t header_start = 8 + length_bytes;
  if (header_length > file.size() - header_start)
    fail(what,
         "truncated header: it declares " + std::to_string(header_length) + " bytes, the file has " +
             std::to_string(file.size() - header_start) + " after the prefix");
  const std::string_view text(reinterpret_cast<const char*>(file.data()) + header_start,
                              static_cast<std::size_t>(header_length));
  const auto header = HeaderParser(text, what).parse();
  if (header.fortran_order)
    fail(what, "Fortran-order arrays are not supported (save a C-order array: numpy.ascontiguousarray)");
  const auto [type, swap] = decode_descr(header.descr, what);

  NpyArray array;
  array.type = type;
  array.shape = header.shape;
  const auto needed = byte_count(array.shape, npy_type_size(type));
  if (!needed) fail(what, "shape " + shape_text(array.shape) + " is too large to address");
  const std::size_t data_start = header_start + static_cast<std::size_t>(header_length);
  const std::size_t present = file.size() - data_start;
  if (present < *needed)
    fail(what,
         "truncated data: shape " + shape_text(array.shape) + " of " + header.descr + " needs " +
             std::to_string(*needed) + " bytes, the file has " + std::to_string(present));
  if (present > *needed)
    fail(what,
         "size mismatch: " + std::to_string(present - *needed) + " bytes follow the " + std::to_string(*needed) +
             " bytes of shape " + shape_text(array.shape) + " of " + header.descr);
  array.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_start), file.end());
  if (swap) swap_bytes(array.data, npy_type_size(type));
  if (type == NpyType::boolean) {
    for (std::size_t i = 0; i < array.data.size(); ++i)
      if (std::to_integer<unsigned>(array.data[i]) > 1)
        fail(what,
             "boolean element " + std::to_string(i) + " holds the byte " +
                 std::to_string(std::to_integer<unsigned>(array.data[i])) + " (expected 0 or 1)");
  }
  return array;
}

// Reads and parses a .npy file; errors name the path.
inline NpyArray read_npy(const std::filesystem::path& path) {
  const std::string what = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) detail::npy::fail(what, "is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) detail::npy::fail(what, "cannot open the file for reading");
  std::vector<std::byte> bytes;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    const auto* p = reinterpret_cast<const std::byte*>(chunk);
    bytes.insert(bytes.end(), p, p + in.gcount());
  }
  if (in.bad()) detail::npy::fail(what, "read error");
  return parse_npy(bytes, what);
}

// Encodes one array as a .npy file; `data` is C order in the host's byte order.
inline std::vector<std::byte> format_npy(NpyType type, std::span<const std::int64_t> shape,
                                         std::span<const std::byte> data) {
  using namespace detail::npy;
  const std::size_t size = npy_type_size(type);
  const auto needed = byte_count(shape, size);
  if (!needed) fail("format_npy", "shape " + shape_text(shape) + " has a negative dimension or is too large");
  if (data.size() != *needed)
    fail("format_npy",
         "size mismatch: shape " + shape_text(shape) + " of " + std::string(npy_type_name(type)) + " needs " +
             std::to_string(*needed) + " bytes, " + std::to_string(data.size()) + " given");
  const char order = size == 1 ? '|' : '<';
  std::string header = std::string("{'descr': '") + order + info(type).kind + char('0' + size) +
      "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  const bool version1 = header.size() + 64 <= 0xffff;  // room for the padding and '\n' in 16 bits
  const std::size_t prefix = version1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');

  std::vector<std::byte> out;
  out.reserve(prefix + header.size() + data.size());
  const auto put = [&](auto byte) { out.push_back(static_cast<std::byte>(byte)); };
  for (char c : magic) put(c);
  put(version1 ? 1 : 2);
  put(0);
  for (std::size_t i = 0; i < prefix - 8; ++i) put((header.size() >> (8 * i)) & 0xff);
  for (char c : header) put(c);
  const std::size_t data_start = out.size();
  out.insert(out.end(), data.begin(), data.end());
  if constexpr (std::endian::native != std::endian::little) swap_bytes(std::span(out).subspan(data_start), size);
  return out;
}

template <class T> std::vector<std::byte> format_npy(std::span<const std::int64_t> shape, std::span<const T> values) {
  static_assert(npy_type_of<T>.has_value(), "format_npy<T>: T must be an arithmetic type with an .npy counterpart");
  return format_npy(*npy_type_of<T>, shape, std::as_bytes(values));
}

// Writes one array to a .npy file; errors name the path.
inline void write_npy(const std::filesystem::path& path, NpyType type, std::span<const std::int64_t> shape,
                      std::span<const std::byte> data) {
  const auto bytes = format_npy(type, shape, data);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) detail::npy::fail(path.string(), "cannot open the file for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) detail::npy::fail(path.string(), "write error");
}

template <class T>
void write_npy(const std::filesystem::path& path, std::span<const std::int64_t> shape, std::span<const T> values) {
  static_assert(npy_type_of<T>.has_value(), "write_npy<T>: T must be an arithmetic type with an .npy counterpart");
  write_npy(path, *npy_type_of<T>, shape, std::as_bytes(values));
}

}  // namespace rknnxx::io
