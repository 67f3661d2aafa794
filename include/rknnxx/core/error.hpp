#pragma once
// Errors: the runtime's return codes as an enum in the "rknn" std::error_category, and
// rknnxx::Error, the one exception type of the library, which says which call failed, on which
// tensor, and what was expected against what was given.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/abi/c_custom_op.h>

#include <rknnxx/core/message.hpp>
#include <rknnxx/core/std_light_algorithm.hpp>  // std::copy, std::max, ...
#include <rknnxx/impl/decl.hpp>

#include <cstdint>
#include <concepts>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

namespace rknnxx {

// The runtime's return codes (docs/c-interface.md#return-codes). Spellings are corrected; the vendor's misspelt
// names are kept as aliases so that code translated name for name still reads the same.
enum class Errc : int {
  success = RKNN_SUCC,
  fail = RKNN_ERR_FAIL,
  timeout = RKNN_ERR_TIMEOUT,
  device_unavailable = RKNN_ERR_DEVICE_UNAVAILABLE,
  malloc_fail = RKNN_ERR_MALLOC_FAIL,
  param_invalid = RKNN_ERR_PARAM_INVALID,
  model_invalid = RKNN_ERR_MODEL_INVALID,
  ctx_invalid = RKNN_ERR_CTX_INVALID,
  input_invalid = RKNN_ERR_INPUT_INVALID,
  output_invalid = RKNN_ERR_OUTPUT_INVALID,
  device_unmatch = RKNN_ERR_DEVICE_UNMATCH,
  incompatible_pre_compile_model = RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL,
  incompatible_optimization_level_version = RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION,
  target_platform_unmatch = RKNN_ERR_TARGET_PLATFORM_UNMATCH,
  skip_custom_op_compute = RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE,
  // The vendor's spellings (RKNN_ERR_INCOMPATILE_*), as aliases.
  incompatile_pre_compile_model = incompatible_pre_compile_model,
  incompatile_optimization_level_version = incompatible_optimization_level_version,
};

}  // namespace rknnxx

template <> struct std::is_error_code_enum<rknnxx::Errc> : std::true_type {};

namespace rknnxx {

// The macro name of a code, e.g. "RKNN_ERR_PARAM_INVALID", as the runtime's logs print it.
[[nodiscard]] constexpr std::string_view errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::success: return "RKNN_SUCC";
    case Errc::fail: return "RKNN_ERR_FAIL";
    case Errc::timeout: return "RKNN_ERR_TIMEOUT";
    case Errc::device_unavailable: return "RKNN_ERR_DEVICE_UNAVAILABLE";
    case Errc::malloc_fail: return "RKNN_ERR_MALLOC_FAIL";
    case Errc::param_invalid: return "RKNN_ERR_PARAM_INVALID";
    case Errc::model_invalid: return "RKNN_ERR_MODEL_INVALID";
    case Errc::ctx_invalid: return "RKNN_ERR_CTX_INVALID";
    case Errc::input_invalid: return "RKNN_ERR_INPUT_INVALID";
    case Errc::output_invalid: return "RKNN_ERR_OUTPUT_INVALID";
    case Errc::device_unmatch: return "RKNN_ERR_DEVICE_UNMATCH";
    case Errc::incompatible_pre_compile_model: return "RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL";
    case Errc::incompatible_optimization_level_version: return "RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION";
    case Errc::target_platform_unmatch: return "RKNN_ERR_TARGET_PLATFORM_UNMATCH";
    case Errc::skip_custom_op_compute: return "RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE";
  }
  return "RKNN_ERR_UNKNOWN";
}

[[nodiscard]] constexpr std::string_view errc_description(Errc e) noexcept {
  switch (e) {
    case Errc::success: return "success";
    case Errc::fail: return "execution failed";
    case Errc::timeout: return "execution timed out";
    case Errc::device_unavailable: return "NPU device unavailable";
    case Errc::malloc_fail: return "memory allocation failed";
    case Errc::param_invalid: return "invalid parameter";
    case Errc::model_invalid: return "invalid model";
    case Errc::ctx_invalid: return "invalid context";
    case Errc::input_invalid: return "invalid input";
    case Errc::output_invalid: return "invalid output";
    case Errc::device_unmatch: return "device does not match the model";
    case Errc::incompatible_pre_compile_model: return "pre-compiled model incompatible with the runtime";
    case Errc::incompatible_optimization_level_version: return "model optimization level incompatible with the runtime";
    case Errc::target_platform_unmatch: return "model built for another target platform";
    case Errc::skip_custom_op_compute: return "custom op skipped in favour of the built-in implementation";
  }
  return "unknown error";
}

namespace detail {
class RknnCategory final : public std::error_category {
public:
  [[nodiscard]] const char* name() const noexcept override { return "rknn"; }
  // RKNNXX_DECL in the class too: a key function defined inline would make every header-only translation
  // unit emit the vtable and the bodies it reaches (docs/separate-compilation.md#compile-cost).
  [[nodiscard]] RKNNXX_DECL std::string message(int code) const override;
};
}  // namespace detail

[[nodiscard]] const std::error_category& rknn_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(Errc e) noexcept { return {static_cast<int>(e), rknn_category()}; }

// Which tensor an error is about, when it is about one.
enum class Io : std::uint8_t { none, input, output };

struct TensorId {
  Io io = Io::none;
  std::optional<std::uint32_t> index;
  std::string name;

  [[nodiscard]] static TensorId input(std::uint32_t i, std::string n = {}) { return {Io::input, i, std::move(n)}; }
  [[nodiscard]] static TensorId output(std::uint32_t i, std::string n = {}) { return {Io::output, i, std::move(n)}; }
  [[nodiscard]] bool empty() const noexcept { return io == Io::none && !index && name.empty(); }
};

// The library's exception: an error_code in the rknn category plus the context of the failure.
// what() reads e.g.
//   rknn_set_io_mem(input 0 "images"): expected NHWC, given NC1HWC2: RKNN_ERR_PARAM_INVALID (invalid parameter)
class Error : public std::system_error {
public:
  Error(std::error_code code, std::string call, std::string message, TensorId tensor = {});
  Error(Errc code, std::string call, std::string message, TensorId tensor = {})
      : Error(make_error_code(code), std::move(call), std::move(message), std::move(tensor)) {}

  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] const TensorId& tensor() const noexcept { return tensor_; }
  [[nodiscard]] Errc errc() const noexcept { return static_cast<Errc>(code().value()); }

private:
  static std::string compose(const std::error_code&, std::string_view call, std::string_view message,
                             const TensorId& t);

  std::string call_;
  std::string message_;
  TensorId tensor_;
};

// The non-throwing form for hot paths: a runtime return code as an error_code (empty on success).
[[nodiscard]] inline std::error_code to_error_code(int rc) noexcept {
  return rc < 0 ? make_error_code(static_cast<Errc>(rc)) : std::error_code{};
}

// Turns a runtime return code into an exception naming the call (and the tensor, when known).
void check(int rc, std::string_view call, TensorId tensor = {});

namespace detail {
// Formats the message and throws Error(param_invalid) naming `call`.
[[noreturn]] void throw_invalid(std::string_view call, std::string_view format, const MessageArg* args,
                                std::size_t count);

// The one way the compile-time vocabulary reports bad input. It is deliberately not constexpr:
// reached during constant evaluation it stops compilation, and compilers quote the calling line,
// message included; reached at run time it throws rknnxx::Error with the values filled in.
// Keep the format string on the line of the call: that line is what the diagnostic quotes (and
// what tests/compile_fail matches).
template <class... Args> [[noreturn]] void
fail(std::string_view call, std::type_identity_t<MessageFormat<sizeof...(Args)>> message, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) {
    throw_invalid(call, message.text(), nullptr, 0);
  } else {
    const MessageArg values[] = {MessageArg(args)...};
    throw_invalid(call, message.text(), values, sizeof...(Args));
  }
}

// a * b, refusing to wrap: element counts and spans are products of up to 16 32-bit extents.
constexpr std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
  if (a != 0 && b > UINT64_MAX / a) fail("rknnxx", "{} overflows 64 bits ({} x {})", what, a, b);
  return a * b;
}
}  // namespace detail

}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/core/impl/error.hpp>
#endif
