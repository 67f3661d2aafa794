#pragma once
// One-line diagnostics in the style of the vendor runtime ("E RKNN: ..."), on stderr.
// The vendor runtime explains every failure only in its log; so do we, one line each,
// naming the call and what was wrong. RKNN_LOG_LEVEL (0 none, 1 errors, 2 warnings,
// 3+ info) is the vendor's variable; the default shows errors and warnings.

#include <fmt/core.h>

#include <string>
#include <string_view>

namespace rknnxx::host {

enum class LogLevel { error = 1, warning = 2, info = 3 };

bool log_enabled(LogLevel level) noexcept;
void log_line(LogLevel level, std::string_view text) noexcept;
// Keeps this thread's last error line, whatever RKNN_LOG_LEVEL says, for the rknnxx extension
// rknnxx_host_last_error() (docs/runtime-extensions.md): rknnxx::Error carries it.
void record_last_error(std::string_view text) noexcept;

template <class... Args> void log_error(fmt::format_string<Args...> format, Args&&... args) {
  const std::string text = fmt::format(format, std::forward<Args>(args)...);
  record_last_error(text);
  if (log_enabled(LogLevel::error)) log_line(LogLevel::error, text);
}

template <class... Args> void log_warning(fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(LogLevel::warning)) log_line(LogLevel::warning, fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args> void log_info(fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(LogLevel::info)) log_line(LogLevel::info, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace rknnxx::host
