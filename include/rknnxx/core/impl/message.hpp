#pragma once
// The body of <rknnxx/core/message.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>

#include <rknnxx/core/fmt_core.hpp>

#include <fmt/args.h>

namespace rknnxx::detail {

RKNNXX_DECL std::string vmessage(std::string_view format, std::span<const MessageArg> args) {
  fmt::dynamic_format_arg_store<fmt::format_context> store;
  for (const MessageArg& a : args) {
    switch (a.kind()) {
      case MessageArg::Kind::boolean: store.push_back(a.unsigned_value() != 0); break;
      case MessageArg::Kind::signed_integer: store.push_back(a.signed_value()); break;
      case MessageArg::Kind::unsigned_integer: store.push_back(a.unsigned_value()); break;
      case MessageArg::Kind::floating: store.push_back(a.floating_value()); break;
      case MessageArg::Kind::text: store.push_back(a.text()); break;
    }
  }
  return fmt::vformat(format, store);
}

}  // namespace rknnxx::detail
