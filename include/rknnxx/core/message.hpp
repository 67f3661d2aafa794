#pragma once
// Messages of errors and diagnostics, formatted with {fmt}'s syntax by one function that is
// compiled once (docs/separate-compilation.md): a header that words a message pays for neither
// <fmt/format.h> nor a formatting template per call.
//
//   detail::message("{} bytes at offset {}", size, offset)   // std::string
//
// Arguments are integers, floating-point numbers, bool and text; anything else is turned into
// text first (name_of, dims_text). The number of placeholders is checked at compile time.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace rknnxx::detail {

// One value of a message, taken as it is given and formatted by one compiled function, so that
// a message costs the translation unit that writes it no formatting template of its own.
class MessageArg {
public:
  enum class Kind : std::uint8_t { boolean, signed_integer, unsigned_integer, floating, text };

  template <std::integral T>
    requires(!std::same_as<T, bool> && !std::same_as<T, char>)
  constexpr MessageArg(T v) noexcept {
    if constexpr (std::is_signed_v<T>) kind_ = Kind::signed_integer, i_ = v;
    else kind_ = Kind::unsigned_integer, u_ = v;
  }
  constexpr MessageArg(bool v) noexcept : kind_(Kind::boolean), u_(v) {}
  template <std::floating_point T> constexpr MessageArg(T v) noexcept : kind_(Kind::floating), f_(v) {}
  constexpr MessageArg(std::string_view v) noexcept : kind_(Kind::text), s_(v) {}
  constexpr MessageArg(const char* v) noexcept : MessageArg(std::string_view(v)) {}
  MessageArg(const std::string& v) noexcept : MessageArg(std::string_view(v)) {}

  [[nodiscard]] constexpr Kind kind() const noexcept { return kind_; }
  [[nodiscard]] constexpr std::int64_t signed_value() const noexcept { return i_; }
  [[nodiscard]] constexpr std::uint64_t unsigned_value() const noexcept { return u_; }
  [[nodiscard]] constexpr double floating_value() const noexcept { return f_; }
  [[nodiscard]] constexpr std::string_view text() const noexcept { return s_; }

private:
  Kind kind_;
  std::int64_t i_ = 0;
  std::uint64_t u_ = 0;
  double f_ = 0;
  std::string_view s_;
};

// The most arguments a message takes (their formatted values sit in an array).
inline constexpr std::size_t max_message_args = 16;

// A message's format string ({fmt} syntax), checked at compile time against the number of
// arguments given with it: a placeholder without an argument, or an argument without one, does not
// compile.
void message_placeholders_do_not_match_the_arguments();  // never defined: named by the diagnostic

template <std::size_t N> class MessageFormat {
  static_assert(N <= max_message_args, "a message takes at most max_message_args arguments");

public:
  // Not a template over the literal's type: one constructor serves every format string, instead of one
  // instantiation per length of literal.
  // The length by the compilers' builtin (g++ and clang), which they evaluate at once: string_view's own
  // constructor counts through char_traits, a function call per character for the constant evaluator.
  consteval MessageFormat(const char* s) : MessageFormat(std::string_view(s, __builtin_strlen(s))) {}
  consteval MessageFormat(std::string_view s) : text_(s) {
    // Over plain pointers, not string_view's members: the compiler evaluates this for every message the
    // headers word, and a function call per character made it a quarter of a header-only translation
    // unit's constant evaluation.
    std::size_t placeholders = 0, highest_index = 0;
    bool indexed = false;
    for (const char *p = s.data(), *end = s.data() + s.size(); p != end; ++p) {
      const bool has_next = p + 1 != end;
      if ((*p == '{' || *p == '}') && has_next && p[1] == *p) ++p;
      else if (*p == '{') {
        ++placeholders;
        if (has_next && p[1] >= '0' && p[1] <= '9') {
          indexed = true;
          const auto index = static_cast<std::size_t>(p[1] - '0') + 1;
          if (index > highest_index) highest_index = index;
        }
      }
    }
    if ((indexed ? highest_index : placeholders) != N) message_placeholders_do_not_match_the_arguments();
  }
  [[nodiscard]] constexpr std::string_view text() const noexcept { return text_; }

private:
  std::string_view text_;
};

// The message `format` makes of `args`.
[[nodiscard]] std::string vmessage(std::string_view format, const MessageArg* args, std::size_t count);

template <class... Args>
[[nodiscard]] std::string message(std::type_identity_t<MessageFormat<sizeof...(Args)>> format, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return vmessage(format.text(), nullptr, 0);
  } else {
    const MessageArg values[] = {MessageArg(args)...};
    return vmessage(format.text(), values, sizeof...(Args));
  }
}

}  // namespace rknnxx::detail

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/core/impl/message.hpp>
#endif
