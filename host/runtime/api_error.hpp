#pragma once
// How the host runtime fails: inside, an ApiError carries the vendor's return code and a
// message; at the C boundary guarded() turns it into that code and one log line.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/error.hpp>

#include <fmt/core.h>

#include <new>
#include <stdexcept>
#include <string>

#include "log.hpp"

namespace rknnxx::host {

class ApiError : public std::runtime_error {
public:
  ApiError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

private:
  int code_;
};

template <class... Args> [[noreturn]] void fail(int code, fmt::format_string<Args...> format, Args&&... args) {
  throw ApiError(code, fmt::format(format, std::forward<Args>(args)...));
}

// A pointer argument of a C function: refused with RKNN_ERR_PARAM_INVALID naming it when NULL.
template <class T> T* require(T* pointer, const char* what) {
  if (pointer == nullptr) fail(RKNN_ERR_PARAM_INVALID, "{} is NULL", what);
  return pointer;
}

// Runs body() and maps whatever it throws to a vendor return code, logging one line that
// starts with the C function's name. Nothing escapes into C.
template <class Body> int guarded(const char* call, Body&& body) noexcept {
  try {
    body();
    return RKNN_SUCC;
  } catch (const ApiError& e) {
    log_error("{}: {}", call, e.what());
    return e.code();
  } catch (const rknnxx::Error& e) {  // the core vocabulary refusing a value (a geometry, a shape)
    log_error("{}: {}", call, e.what());
    return e.code().value() < 0 ? e.code().value() : RKNN_ERR_FAIL;
  } catch (const std::bad_alloc&) {
    log_error("{}: out of memory", call);
    return RKNN_ERR_MALLOC_FAIL;
  } catch (const std::exception& e) {
    log_error("{}: {}", call, e.what());
    return RKNN_ERR_FAIL;
  } catch (...) {
    log_error("{}: unknown failure", call);
    return RKNN_ERR_FAIL;
  }
}

}  // namespace rknnxx::host
