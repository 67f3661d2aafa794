#pragma once
// Text into a fixed char array of a C struct (a name, a version, a custom string): cut to fit,
// always NUL-terminated, as the vendor's structs expect.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace rknnxx::host {

template <std::size_t N> void copy_c_string(char (&target)[N], std::string_view text) noexcept {
  static_assert(N > 0);
  const std::size_t n = std::min(N - 1, text.size());
  std::memcpy(target, text.data(), n);
  target[n] = '\0';
}

}  // namespace rknnxx::host
