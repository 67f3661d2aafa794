#pragma once
// What the C-interface tests of the host runtime share: a guard for a context made from a model
// path, attribute queries that must succeed, and the files the tests read. The library's own Context is tested elsewhere
// (tests/runtime); these tests speak C.

#include <rknnxx/abi/c_api.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace rknnxx::test {

struct Ctx {
  rknn_context handle = 0;
  explicit Ctx(const std::string& path, uint32_t flags = 0) {
    REQUIRE(rknn_init(&handle, const_cast<char*>(path.c_str()), 0, flags, nullptr) == RKNN_SUCC);
  }
  ~Ctx() {
    if (handle) rknn_destroy(handle);
  }
  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;
  operator rknn_context() const { return handle; }
};

inline rknn_tensor_attr query_attr(rknn_context ctx, rknn_query_cmd cmd, uint32_t index) {
  rknn_tensor_attr attr{};
  attr.index = index;
  REQUIRE(rknn_query(ctx, cmd, &attr, sizeof attr) == RKNN_SUCC);
  return attr;
}

// The bytes of a file a test needs; a missing file fails the test, naming it.
inline std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) FAIL("cannot read " << path << " (models: run tests/models/fetch.sh)");
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = static_cast<std::byte>(chars[i]);
  return bytes;
}

// The folder a generator script wrote before the test ran (meson passes it in `variable`).
inline std::filesystem::path generated_dir(const char* variable, const char* script) {
  const char* dir = std::getenv(variable);
  REQUIRE_MESSAGE(dir != nullptr, variable << " must name the folder " << script << " wrote");
  return dir;
}

inline std::vector<uint32_t> dims_of(const rknn_tensor_attr& a) { return {a.dims, a.dims + a.n_dims}; }

}  // namespace rknnxx::test
