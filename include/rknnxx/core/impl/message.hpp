#pragma once
// The body of <rknnxx/core/message.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>

#include <rknnxx/core/fmt_core.hpp>

namespace rknnxx::detail {

RKNNXX_DECL std::string vmessage(std::string_view format, const MessageArg* args, std::size_t size) {
  // Each argument's fmt value is taken from one argument store that holds a value of every kind, in the order
  // of MessageArg::Kind: fmt's argument packing is instantiated once, for the five kinds together, and the
  // values sit in an array (message() allows at most max_message_args).
  using FormatArg = fmt::basic_format_arg<fmt::format_context>;
  static_assert(static_cast<int>(MessageArg::Kind::boolean) == 0 && static_cast<int>(MessageArg::Kind::text) == 4);
  FormatArg values[max_message_args];
  const std::size_t count = size < max_message_args ? size : max_message_args;
  for (std::size_t i = 0; i < count; ++i) {
    const MessageArg& a = args[i];
    const bool boolean = a.unsigned_value() != 0;
    const std::int64_t signed_value = a.signed_value();
    const std::uint64_t unsigned_value = a.unsigned_value();
    const double floating = a.floating_value();
    const std::string_view text = a.text();
    const auto store = fmt::make_format_args(boolean, signed_value, unsigned_value, floating, text);
    values[i] = fmt::format_args(store).get(static_cast<int>(a.kind()));
  }
  return fmt::vformat(format, fmt::format_args(values, static_cast<int>(count)));
}

}  // namespace rknnxx::detail
