#pragma once
// The bodies of <rknnxx/core/error.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/impl/decl.hpp>
#include <rknnxx/core/error.hpp>

#include <rknnxx/core/message.hpp>

namespace rknnxx::detail {

RKNNXX_DECL std::string RknnCategory::message(int code) const {
  const auto e = static_cast<Errc>(code);
  const auto n = errc_name(e);
  if (n == "RKNN_ERR_UNKNOWN") return detail::message("unknown rknn return code {}", code);
  return detail::message("{} ({})", n, errc_description(e));
}

RKNNXX_DECL void throw_invalid(std::string_view call, std::string_view format, const MessageArg* args,
                               std::size_t count) {
  throw Error(Errc::param_invalid, std::string(call), vmessage(format, args, count));
}

}  // namespace rknnxx::detail

namespace rknnxx {

RKNNXX_DECL const std::error_category& rknn_category() noexcept {
  static const detail::RknnCategory category;
  return category;
}

RKNNXX_DECL Error::Error(std::error_code code, std::string call, std::string message, TensorId tensor)
    : std::system_error(code, compose(code, call, message, tensor)), call_(std::move(call)),
      message_(std::move(message)), tensor_(std::move(tensor)) {}

RKNNXX_DECL std::string Error::compose(const std::error_code&, std::string_view call, std::string_view message,
                                       const TensorId& t) {
  std::string s(call);
  if (!t.empty()) {
    s += '(';
    s += t.io == Io::input ? "input" : t.io == Io::output ? "output" : "tensor";
    if (t.index) s += detail::message(" {}", *t.index);
    if (!t.name.empty()) s += detail::message(" \"{}\"", t.name);
    s += ')';
  }
  if (!message.empty()) s += detail::message("{}{}", s.empty() ? "" : ": ", message);
  return s;  // std::system_error appends ": " and the code's message
}

RKNNXX_DECL void check(int rc, std::string_view call, TensorId tensor) {
  if (rc < 0) throw Error(static_cast<Errc>(rc), std::string(call), {}, std::move(tensor));
}

}  // namespace rknnxx
