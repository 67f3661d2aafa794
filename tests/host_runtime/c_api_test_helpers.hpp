#pragma once
// What the C-interface tests of the host runtime share: a guard for a context made from a model
// path, and attribute queries that must succeed. The library's own Context is tested elsewhere
// (tests/runtime); these tests speak C.

#include <rknnxx/abi/c_api.h>

#include <doctest/doctest.h>

#include <cstdint>
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

inline std::vector<uint32_t> dims_of(const rknn_tensor_attr& a) { return {a.dims, a.dims + a.n_dims}; }

}  // namespace rknnxx::test
