#pragma once
// Sets an environment variable while it lives (the engine reads its RKNNXX_ENGINE_* switches when a
// session is planned), then restores what the variable was, or unsets it.

#include <cstdlib>
#include <optional>
#include <string>

namespace rknnxx::host::testing {

class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (saved_) {
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace rknnxx::host::testing
