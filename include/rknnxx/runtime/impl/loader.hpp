#pragma once
// The bodies of <rknnxx/runtime/loader.hpp>: included by it (header-only, the default) or compiled once
// (RKNNXX_SEPARATE_COMPILATION, docs/separate-compilation.md).

#include <rknnxx/core/message.hpp>
#include <rknnxx/core/std_light.hpp>  // std::mutex
#include <rknnxx/impl/decl.hpp>
#include <rknnxx/runtime/loader.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace rknnxx {

namespace detail {
struct RuntimeRecord {
  std::mutex mutex;                        // guards kind and version
  RuntimeKind kind = RuntimeKind::vendor;  // the first context may correct it (record_sdk_version)
  std::optional<SdkVersion> version;
};
}  // namespace detail

RKNNXX_DECL Runtime::Runtime() : record_(new detail::RuntimeRecord()) {}
RKNNXX_DECL Runtime::~Runtime() { delete record_; }

RKNNXX_DECL RuntimeKind Runtime::kind() const noexcept {
  const std::lock_guard lock(record_->mutex);
  return record_->kind;
}

RKNNXX_DECL RuntimeChoice RuntimeChoice::parse(std::string_view s) {
  if (s.empty() || s == "auto") return automatic();
  if (s == "vendor") return vendor();
  if (s == "host") return host();
  return at(std::string(s));
}

RKNNXX_DECL RuntimeChoice RuntimeChoice::from_environment() {
  const char* v = std::getenv("RKNNXX_RUNTIME");
  return parse(v ? v : "");
}

RKNNXX_DECL std::optional<Version> Version::parse(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] < '0' || s[i] > '9')) ++i;  // "v2.3.2", "rknnrt version: 2.3.2"
  int parts[3] = {0, 0, 0};
  int count = 0;
  while (count < 3 && i < s.size() && s[i] >= '0' && s[i] <= '9') {
    int v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && v < 100000) v = v * 10 + (s[i++] - '0');
    parts[count++] = v;
    if (i < s.size() && s[i] == '.') ++i;
    else break;
  }
  if (count < 2) return std::nullopt;
  return Version{parts[0], parts[1], parts[2]};
}

RKNNXX_DECL Version check_sdk_version(const SdkVersion& v, std::string_view runtime_path) {
  const auto parsed = Version::parse(v.api);
  if (!parsed)
    throw Error(Errc::fail, "rknn_query(RKNN_QUERY_SDK_VERSION)",
                detail::message("the runtime {} reports api version \"{}\", which is not major.minor.patch",
                                runtime_path, v.api));
  if (*parsed < min_sdk_version)
    throw Error(
        Errc::fail, "rknn_query(RKNN_QUERY_SDK_VERSION)",
        detail::message("the runtime {} is SDK {}.{}.{} (driver \"{}\"); rknnxx needs SDK >= {}.{}.{} (it declares "
                        "the {}.{}.{} ABI): update librknnrt on the board",
                        runtime_path, parsed->major, parsed->minor, parsed->patch, v.driver, min_sdk_version.major,
                        min_sdk_version.minor, min_sdk_version.patch, abi_sdk_version.major, abi_sdk_version.minor,
                        abi_sdk_version.patch));
  return *parsed;
}

RKNNXX_DECL std::shared_ptr<const Runtime> Runtime::load(const RuntimeChoice& choice) {
  // One runtime per choice, in a list that only grows, as runtimes are never unloaded: a process makes
  // one or two choices, and a linked list costs a header-only translation unit no container template
  // (docs/separate-compilation.md#compile-cost).
  struct Loaded {
    RuntimeChoice choice;
    std::shared_ptr<const Runtime> runtime;
    const Loaded* next;
  };
  static std::mutex mutex;
  static const Loaded* loaded = nullptr;
  const std::lock_guard lock(mutex);
  for (const Loaded* l = loaded; l != nullptr; l = l->next)
    if (l->choice == choice) return l->runtime;
  auto rt = std::shared_ptr<const Runtime>(open(choice));
  loaded = new Loaded{choice, rt, loaded};
  return rt;
}

RKNNXX_DECL std::string Runtime::last_error(std::string_view call) const {
  if (api_.rknnxx_host_last_error == nullptr) return {};
  const char* text = api_.rknnxx_host_last_error();
  if (text == nullptr) return {};
  const std::string_view line(text);
  const std::string prefix = std::string(call.substr(0, call.find('('))) + ": ";
  if (line.size() <= prefix.size() || line.substr(0, prefix.size()) != prefix) return {};
  return std::string(line.substr(prefix.size()));
}

RKNNXX_DECL std::optional<SdkVersion> Runtime::sdk_version() const {
  const std::lock_guard lock(record_->mutex);
  return record_->version;
}

RKNNXX_DECL void Runtime::record_sdk_version(const SdkVersion& v) const {
  const std::lock_guard lock(record_->mutex);
  if (record_->version) return;
  SdkVersion checked = v;
  checked.api_version = check_sdk_version(v, path_);
  record_->version = checked;
  // The host runtime says so in its driver version, whatever its file is called.
  if (v.driver.find("rknnxx-host") != std::string::npos || v.api.find("rknnxx host") != std::string::npos)
    record_->kind = RuntimeKind::host;
}

RKNNXX_DECL std::vector<std::string> Runtime::candidates(const RuntimeChoice& choice) {
  // push_back, not emplace_back: emplace_back of a literal is one instantiation per length of literal.
  std::vector<std::string> c;
  const auto vendor = [&] {
    c.push_back("librknnrt.so");
    c.push_back("librknnmrt.so");
  };
  const auto host = [&] {
    c.push_back("librknnxx_host.so");
    if (const auto dir = executable_dir()) {
      c.push_back(*dir + "/librknnxx_host.so");
      c.push_back(*dir + "/../host/runtime/librknnxx_host.so");
      c.push_back(*dir + "/../../host/runtime/librknnxx_host.so");
#ifdef RKNNXX_INSTALL_LIBDIR_FROM_BINDIR
      c.push_back(*dir + "/" RKNNXX_INSTALL_LIBDIR_FROM_BINDIR "/librknnxx_host.so");
#endif
    }
#ifdef RKNNXX_HOST_RUNTIME_PATH
    c.push_back(RKNNXX_HOST_RUNTIME_PATH);
#endif
#ifdef RKNNXX_INSTALL_LIBDIR
    c.push_back(RKNNXX_INSTALL_LIBDIR "/librknnxx_host.so");
#endif
  };
  switch (choice.kind) {
    case RuntimeKind::automatic:
      vendor();
      host();
      break;
    case RuntimeKind::vendor: vendor(); break;
    case RuntimeKind::host: host(); break;
    case RuntimeKind::path: c.push_back(choice.path); break;
  }
  return c;
}

RKNNXX_DECL std::optional<std::string> Runtime::executable_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  std::string p(buf, static_cast<std::size_t>(n));
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  return p.substr(0, slash);
}

RKNNXX_DECL Runtime* Runtime::open(const RuntimeChoice& choice) {
  std::string tried;
  for (const std::string& candidate : candidates(choice)) {
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      tried += detail::message("\n  {}: {}", candidate, why ? why : "dlopen failed");
      continue;
    }
    ApiTable api{};
    std::string missing;
    for (const auto& entry : api.entries()) {
      void* sym = ::dlsym(handle, std::string(entry.name).c_str());
      std::memcpy(entry.slot, &sym, sizeof sym);
      if (sym == nullptr && entry.required) missing += detail::message("{}{}", missing.empty() ? "" : ", ", entry.name);
    }
    void* last_error = ::dlsym(handle, "rknnxx_host_last_error");
    std::memcpy(static_cast<void*>(&api.rknnxx_host_last_error), &last_error, sizeof last_error);
    std::string path = candidate;
    Dl_info info{};
    if (api.rknn_init != nullptr && ::dladdr(reinterpret_cast<void*>(api.rknn_init), &info) != 0 &&
        info.dli_fname != nullptr)
      path = info.dli_fname;
    if (!missing.empty()) {
      // Keep the handle open: another candidate may share its dependencies.
      tried +=
          detail::message("\n  {}: loaded, but lacks {} (a runtime older than SDK {}.{}.{}, or not an rknn runtime)",
                          path, missing, min_sdk_version.major, min_sdk_version.minor, min_sdk_version.patch);
      continue;
    }
    auto* rt = new Runtime();
    rt->handle_ = handle;
    rt->api_ = api;
    rt->path_ = std::move(path);
    rt->record_->kind = rt->path_.find("rknnxx_host") != std::string::npos ? RuntimeKind::host : RuntimeKind::vendor;
    return rt;
  }
  throw Error(Errc::fail, "rknnxx::Runtime::load",
              detail::message("no rknn runtime could be loaded for the choice \"{}\"{} (RKNNXX_RUNTIME={}); tried:{}\n"
                              "To fix it, either set RKNNXX_RUNTIME to the runtime's file (e.g. "
                              "RKNNXX_RUNTIME=/usr/lib/librknnrt.so, or the path of librknnxx_host.so), or add the "
                              "directory that holds it to LD_LIBRARY_PATH",
                              choice.kind == RuntimeKind::path ? choice.path : std::string(name_of(choice.kind)),
                              choice == RuntimeChoice::from_environment() ? "" : " given by the application",
                              std::getenv("RKNNXX_RUNTIME") ? std::getenv("RKNNXX_RUNTIME") : "<unset>", tried));
}

}  // namespace rknnxx
