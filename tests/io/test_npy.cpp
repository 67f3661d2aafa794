// rknnxx::io .npy reader and writer: agreement with numpy's own files, round trips of every type,
// and strict, crash-free rejection of malformed files (this suite runs under ASan and UBSan).
#include <doctest/doctest.h>
#include <rknnxx/io/npy.hpp>

#include "numpy_samples.hpp"
#include "scratch_dir.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using rknnxx::io::NpyArray;
using rknnxx::io::NpyError;
using rknnxx::io::NpyType;

namespace {

template <std::size_t N> std::vector<std::byte> bytes_of(const std::array<std::uint8_t, N>& a) {
  std::vector<std::byte> v(N);
  for (std::size_t i = 0; i < N; ++i) v[i] = std::byte{a[i]};
  return v;
}

std::vector<std::byte> bytes_of(std::string_view s) {
  std::vector<std::byte> v(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) v[i] = static_cast<std::byte>(s[i]);
  return v;
}

// A version 1.0 file with the given header text (padded as numpy does) followed by `data`.
std::vector<std::byte> file_with_header(std::string header, std::string_view data = {}) {
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size() & 0xff));
  file.push_back(static_cast<char>(header.size() >> 8));
  return bytes_of(file + header + std::string(data));
}

// The reader's message for `file`, as a doctest::String so that doctest::Contains can match it.
doctest::String error_of(const std::vector<std::byte>& file) {
  try {
    rknnxx::io::parse_npy(file, "sample.npy");
  } catch (const NpyError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("numpy's own files read back with their types, shapes and values") {
  SUBCASE("float32, version 1.0") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::float32_2x3_v1));
    CHECK(a.type == NpyType::float32);
    CHECK(a.shape == std::vector<std::int64_t>{2, 3});
    CHECK(a.element_count() == 6);
    const auto v = a.values<float>();
    REQUIRE(v.size() == 6);
    CHECK(v[0] == -1.0f);
    CHECK(v[5] == 1.5f);
  }
  SUBCASE("float16 as raw bits") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::float16_2x2_v1));
    CHECK(a.type == NpyType::float16);
    const auto bits = a.values<std::uint16_t>();
    REQUIRE(bits.size() == 4);
    CHECK(bits[0] == 0x3c00);  // 1.0
    CHECK(bits[1] == 0xc000);  // -2.0
    CHECK(bits[3] == 0x7bff);  // 65504, the largest float16
  }
  SUBCASE("float64") {
    const auto v_array = rknnxx::io::parse_npy(bytes_of(numpy_samples::float64_3_v1));
    const auto v = v_array.values<double>();
    REQUIRE(v.size() == 3);
    CHECK(v[0] == 1e300);
    CHECK(v[2] == 3.25);
  }
  SUBCASE("int64, version 2.0") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::int64_4_v2));
    CHECK(a.shape == std::vector<std::int64_t>{4});
    const auto v = a.values<std::int64_t>();
    CHECK(v[0] == -1);
    CHECK(v[2] == (std::int64_t{1} << 40));
    CHECK(v[3] == -(std::int64_t{1} << 62));
  }
  SUBCASE("a 0-d uint8 array, version 3.0") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::uint8_scalar_v3));
    CHECK(a.shape.empty());
    CHECK(a.element_count() == 1);
    CHECK(a.values<std::uint8_t>()[0] == 200);
  }
  SUBCASE("int8, three dimensions") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::int8_2x1x2_v1));
    CHECK(a.shape == std::vector<std::int64_t>{2, 1, 2});
    const auto v = a.values<std::int8_t>();
    CHECK(v[0] == -128);
    CHECK(v[1] == 127);
    CHECK(v[3] == -1);
  }
  SUBCASE("bool") {
    const auto v_array = rknnxx::io::parse_npy(bytes_of(numpy_samples::bool_3_v1));
    const auto v = v_array.values<bool>();
    REQUIRE(v.size() == 3);
    CHECK(v[0]);
    CHECK_FALSE(v[1]);
    CHECK(v[2]);
  }
  SUBCASE("big-endian files come back in the host's byte order") {
    const auto i_array = rknnxx::io::parse_npy(bytes_of(numpy_samples::int32_big_endian_2_v1));
    const auto i = i_array.values<std::int32_t>();
    CHECK(i[0] == 1);
    CHECK(i[1] == -2);
    const auto f_array = rknnxx::io::parse_npy(bytes_of(numpy_samples::float32_big_endian_2_v1));
    const auto f = f_array.values<float>();
    CHECK(f[0] == 1.5f);
    CHECK(f[1] == -0.25f);
  }
  SUBCASE("an empty array") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::uint16_empty_0x3_v1));
    CHECK(a.shape == std::vector<std::int64_t>{0, 3});
    CHECK(a.element_count() == 0);
    CHECK(a.values<std::uint16_t>().empty());
  }
  SUBCASE("uint32") {
    const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::uint32_1_v1));
    CHECK(a.values<std::uint32_t>()[0] == 4000000000u);
  }
}

TEST_CASE("a Fortran-order file is refused with the reason") {
  CHECK(error_of(bytes_of(numpy_samples::float32_fortran_2x2_v1)) ==
        doctest::Contains("sample.npy: Fortran-order arrays are not supported"));
}

TEST_CASE("reading values as the wrong type throws") {
  const auto a = rknnxx::io::parse_npy(bytes_of(numpy_samples::float32_2x3_v1));
  CHECK_THROWS_WITH_AS(static_cast<void>(a.values<double>()), "npy: the array holds float32, not float64", NpyError);
  CHECK_THROWS_AS(static_cast<void>(a.values<std::int32_t>()), NpyError);
  // One public error type: an .npy error is an rknnxx::Error whose what() is the message alone.
  try {
    static_cast<void>(a.values<double>());
    FAIL("expected an rknnxx::Error");
  } catch (const rknnxx::Error& e) {
    CHECK(e.errc() == rknnxx::Errc::param_invalid);
    CHECK(e.call() == "npy");
    CHECK(std::string_view(e.what()) == "npy: the array holds float32, not float64");
  }
}

TEST_CASE("the writer produces what numpy's reader expects") {
  const std::vector<float> values{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const std::vector<std::int64_t> shape{2, 3};
  const auto file = rknnxx::io::format_npy(std::span<const std::int64_t>(shape), std::span<const float>(values));
  const std::string text(reinterpret_cast<const char*>(file.data()), file.size());
  CHECK(text.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_length = std::to_integer<std::size_t>(file[8]) | std::to_integer<std::size_t>(file[9]) << 8;
  CHECK((10 + header_length) % 64 == 0);  // numpy aligns the data to 64 bytes
  CHECK(text.substr(10, header_length).starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  CHECK(text[10 + header_length - 1] == '\n');
  CHECK(file.size() == 10 + header_length + 6 * sizeof(float));

  SUBCASE("one-byte types carry '|', a 1-d shape a trailing comma, a 0-d shape ()") {
    const std::vector<std::uint8_t> one{7};
    const std::vector<std::int64_t> vector_shape{1}, scalar_shape{};
    auto header = [](const std::vector<std::byte>& f) {
      return std::string(reinterpret_cast<const char*>(f.data()) + 10, 60);
    };
    CHECK(
        header(rknnxx::io::format_npy(std::span<const std::int64_t>(vector_shape), std::span<const std::uint8_t>(one)))
            .starts_with("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }"));
    CHECK(
        header(rknnxx::io::format_npy(std::span<const std::int64_t>(scalar_shape), std::span<const std::uint8_t>(one)))
            .starts_with("{'descr': '|u1', 'fortran_order': False, 'shape': (), }"));
  }
}

TEST_CASE("every type survives a round trip through the writer and the reader") {
  const std::vector<std::int64_t> shape{2, 2};
  auto round_trip = [&](NpyType type, std::size_t size) {
    std::vector<std::byte> data(4 * size);
    for (std::size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<std::byte>(type == NpyType::boolean ? i % 2 : i * 37 + 1);
    const auto back = rknnxx::io::parse_npy(rknnxx::io::format_npy(type, shape, data));
    CHECK(back.type == type);
    CHECK(back.shape == shape);
    CHECK(back.data == data);
  };
  for (auto [type, size] : {std::pair{NpyType::float16, 2},
                            {NpyType::float32, 4},
                            {NpyType::float64, 8},
                            {NpyType::int8, 1},
                            {NpyType::uint8, 1},
                            {NpyType::int16, 2},
                            {NpyType::uint16, 2},
                            {NpyType::int32, 4},
                            {NpyType::uint32, 4},
                            {NpyType::int64, 8},
                            {NpyType::uint64, 8},
                            {NpyType::boolean, 1}}) {
    CAPTURE(rknnxx::io::npy_type_name(type));
    CHECK(rknnxx::io::npy_type_size(type) == static_cast<std::size_t>(size));
    round_trip(type, static_cast<std::size_t>(size));
  }
}

TEST_CASE("a header too long for version 1.0 is written as version 2.0") {
  std::vector<std::int64_t> shape(23000, 1);  // "1, " x 23000: more than 64 KiB of header
  const std::vector<std::int8_t> one{5};
  const auto file = rknnxx::io::format_npy(std::span<const std::int64_t>(shape), std::span<const std::int8_t>(one));
  CHECK(std::to_integer<int>(file[6]) == 2);
  const auto back = rknnxx::io::parse_npy(file);
  CHECK(back.shape.size() == 23000);
  CHECK(back.values<std::int8_t>()[0] == 5);
}

TEST_CASE("the writer refuses data that does not fit the shape") {
  const std::vector<float> five(5);
  const std::vector<std::int64_t> shape{2, 3}, negative{-1};
  CHECK_THROWS_WITH_AS(rknnxx::io::format_npy(std::span<const std::int64_t>(shape), std::span<const float>(five)),
                       doctest::Contains("size mismatch: shape (2, 3) of float32 needs 24 bytes, 20 given"), NpyError);
  CHECK_THROWS_WITH_AS(rknnxx::io::format_npy(std::span<const std::int64_t>(negative), std::span<const float>(five)),
                       doctest::Contains("negative dimension"), NpyError);
}

TEST_CASE("files on disk: write_npy then read_npy, and errors that name the path") {
  const rknnxx::test::TempDir dir;
  const auto path = dir.path() / "round_trip.npy";
  const std::vector<std::int32_t> values{1, -2, 3};
  const std::vector<std::int64_t> shape{3};
  rknnxx::io::write_npy(path, std::span<const std::int64_t>(shape), std::span<const std::int32_t>(values));
  const auto back = rknnxx::io::read_npy(path);
  CHECK(back.type == NpyType::int32);
  CHECK(back.values<std::int32_t>()[1] == -2);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  CHECK_THROWS_WITH_AS(rknnxx::io::read_npy(path), doctest::Contains((path.string() + ": truncated data").c_str()),
                       NpyError);
  std::filesystem::remove(path);
  CHECK_THROWS_WITH_AS(rknnxx::io::read_npy(path), doctest::Contains("cannot open the file for reading"), NpyError);
  CHECK_THROWS_WITH_AS(rknnxx::io::read_npy(dir.path()), doctest::Contains("is a directory"), NpyError);
  CHECK_THROWS_AS(rknnxx::io::write_npy(dir.path() / "no_such_dir" / "x.npy", std::span<const std::int64_t>(shape),
                                        std::span<const std::int32_t>(values)),
                  NpyError);
}

TEST_CASE("malformed files are refused with a message naming the problem") {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight_bytes(8, '\0');
  CHECK(error_of(file_with_header(ok, eight_bytes)) == "(no error)");

  CHECK(error_of({}) == doctest::Contains("sample.npy: not a .npy file (wrong magic"));
  CHECK(error_of(bytes_of("PK\x03\x04 not numpy")) == doctest::Contains("wrong magic"));
  CHECK(error_of(bytes_of(std::string_view("\x93NUMPY\x01", 7))) == doctest::Contains("truncated header"));
  CHECK(error_of(bytes_of(std::string_view("\x93NUMPY\x02\x00\x10", 9))) == doctest::Contains("truncated header"));

  auto with_version = [&](char major, char minor) {
    auto f = file_with_header(ok, eight_bytes);
    f[6] = static_cast<std::byte>(major);
    f[7] = static_cast<std::byte>(minor);
    return f;
  };
  CHECK(error_of(with_version(4, 0)) == doctest::Contains("unsupported .npy version 4.0"));
  CHECK(error_of(with_version(1, 1)) == doctest::Contains("unsupported .npy version 1.1"));
  CHECK(error_of(with_version(0, 0)) == doctest::Contains("unsupported .npy version 0.0"));

  auto long_header = file_with_header(ok, eight_bytes);
  long_header[9] = std::byte{0x7f};
  CHECK(error_of(long_header) == doctest::Contains("truncated header: it declares"));

  CHECK(error_of(file_with_header(ok, std::string(7, '\0'))) ==
        doctest::Contains("truncated data: shape (2,) of <f4 needs 8 bytes, the file has 7"));
  CHECK(error_of(file_with_header(ok, std::string(9, '\0'))) ==
        doctest::Contains("size mismatch: 1 bytes follow the 8 bytes of shape (2,) of <f4"));

  CHECK(error_of(file_with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", eight_bytes)) ==
        doctest::Contains("unsupported dtype '<c8'"));
  CHECK(error_of(file_with_header("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }")) ==
        doctest::Contains("unsupported dtype '<U4'"));
  CHECK(error_of(file_with_header("{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", eight_bytes)) ==
        doctest::Contains("needs the byte order '<' or '>'"));
  CHECK(error_of(file_with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }")) ==
        doctest::Contains("structured arrays"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'shape': (2,), }", eight_bytes)) ==
        doctest::Contains("header lacks the key 'fortran_order'"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }")) ==
        doctest::Contains("the key 'descr' twice"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}")) ==
        doctest::Contains("unexpected key 'extra'"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': false, 'shape': (2,), }")) ==
        doctest::Contains("expected True or False"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")) ==
        doctest::Contains("negative dimension"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }")) ==
        doctest::Contains("too large for int64"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")) ==
        doctest::Contains("too large to address"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }")) ==
        doctest::Contains("malformed header: expected '('"));
  CHECK(error_of(file_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } trailing")) ==
        doctest::Contains("expected the end of the header"));
  CHECK(error_of(file_with_header("{'descr': '<f4\\x', 'fortran_order': False, 'shape': (2,) }")) ==
        doctest::Contains("without escapes"));
  CHECK(error_of(file_with_header("{'descr': '<f4")) == doctest::Contains("closing quote"));
  CHECK(error_of(file_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                                  std::string("\x01\x02", 2))) ==
        doctest::Contains("boolean element 1 holds the byte 2"));
}

TEST_CASE("the header grammar: double quotes, any key order, free spacing, (N) without a comma") {
  const auto a = rknnxx::io::parse_npy(
      file_with_header("{ \"shape\" : ( 2 , 1 ) ,\"fortran_order\":False,'descr':\"<i2\"}", "abcd"));
  CHECK(a.type == NpyType::int16);
  CHECK(a.shape == std::vector<std::int64_t>{2, 1});
  CHECK(
      rknnxx::io::parse_npy(file_with_header("{'descr': '<i2', 'fortran_order': False, 'shape': (2)}", "abcd")).shape ==
      std::vector<std::int64_t>{2});
}

TEST_CASE("no prefix of a valid file and no single corrupted byte crashes the reader") {
  const std::vector<float> values{1.0f, -2.0f, 3.0f, 0.5f};
  const std::vector<std::int64_t> shape{2, 2};
  const auto file = rknnxx::io::format_npy(std::span<const std::int64_t>(shape), std::span<const float>(values));
  for (std::size_t n = 0; n < file.size(); ++n) {
    const std::vector<std::byte> prefix(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK_THROWS_AS(rknnxx::io::parse_npy(prefix), NpyError);
  }
  int accepted = 0, refused = 0;
  for (std::size_t i = 0; i < file.size(); ++i) {
    for (unsigned value : {0x00u, 0x09u, 0x20u, 0x27u, 0x28u, 0x29u, 0x2cu, 0x30u, 0x39u, 0x7bu, 0x7du, 0x80u, 0xffu}) {
      auto corrupt = file;
      corrupt[i] = static_cast<std::byte>(value);
      try {
        const auto a = rknnxx::io::parse_npy(corrupt);
        CHECK(a.data.size() == a.element_count() * rknnxx::io::npy_type_size(a.type));
        ++accepted;
      } catch (const NpyError&) {
        ++refused;
      }
    }
  }
  CHECK(refused > 0);
  CHECK(accepted > 0);  // e.g. a changed data byte or padding space is still a valid file
}
