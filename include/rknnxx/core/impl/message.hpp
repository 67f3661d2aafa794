#pragma once
// The body of <rknnxx/core/message.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/impl/decl.hpp>

#include <rknnxx/core/fmt_core.hpp>

#include <vector>

namespace rknnxx::detail {

RKNNXX_DECL std::string vmessage(std::string_view format, std::span<const MessageArg> args) {
  // fmt's arguments of the five kinds, collected for one vformat: five small instantiations in all,
  // where fmt/args.h's dynamic store cost a translation unit four times as much.
  using FormatArg = fmt::basic_format_arg<fmt::format_context>;
  const auto format_arg = [](const auto& value) { return fmt::format_args(fmt::make_format_args(value)).get(0); };
  std::vector<FormatArg> values;
  values.reserve(args.size());
  for (const MessageArg& a : args) {
    switch (a.kind()) {
      case MessageArg::Kind::boolean: values.push_back(format_arg(a.unsigned_value() != 0)); break;
      case MessageArg::Kind::signed_integer: values.push_back(format_arg(a.signed_value())); break;
      case MessageArg::Kind::unsigned_integer: values.push_back(format_arg(a.unsigned_value())); break;
      case MessageArg::Kind::floating: values.push_back(format_arg(a.floating_value())); break;
      case MessageArg::Kind::text: values.push_back(format_arg(a.text())); break;
    }
  }
  return fmt::vformat(format, fmt::format_args(values.data(), static_cast<int>(values.size())));
}

}  // namespace rknnxx::detail
