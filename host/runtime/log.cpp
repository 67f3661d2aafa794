#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace rknnxx::host {

namespace {
int configured_level() noexcept {
  static const int level = [] {
    const char* env = std::getenv("RKNN_LOG_LEVEL");
    if (env == nullptr || *env == '\0') return 2;
    return std::atoi(env);
  }();
  return level;
}
}  // namespace

bool log_enabled(LogLevel level) noexcept { return static_cast<int>(level) <= configured_level(); }

void log_line(LogLevel level, std::string_view text) noexcept {
  static std::mutex mutex;
  const char tag = level == LogLevel::error ? 'E' : level == LogLevel::warning ? 'W' : 'I';
  std::lock_guard lock(mutex);
  std::fprintf(stderr, "%c RKNN: %.*s\n", tag, static_cast<int>(text.size()), text.data());
}

namespace {
thread_local std::string last_error;
}  // namespace

void record_last_error(std::string_view text) noexcept {
  try {
    last_error.assign(text);
  } catch (...) {
    last_error.clear();  // out of memory: no message rather than a stale one
  }
}

}  // namespace rknnxx::host

// The rknnxx extension (docs/runtime-extensions.md): the last error line this thread's rknn_*
// calls logged, without the "E RKNN: " tag; "" when none failed. Valid until the thread's next
// failing call.
extern "C" __attribute__((visibility("default"))) const char* rknnxx_host_last_error(void) {
  return rknnxx::host::last_error.c_str();
}
