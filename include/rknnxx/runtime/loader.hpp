#pragma once
// The loader: opens a runtime that speaks the vendor C interface and fills an ApiTable from it.
//
//   auto rt = Runtime::load();                        // RKNNXX_RUNTIME, else vendor, else host
//   auto rt = Runtime::load(RuntimeChoice::host());   // forced by the application
//   rt->path(), rt->kind(), rt->api().rknn_query, rt->sdk_version()
//
// Choice (the API argument wins over the environment variable RKNNXX_RUNTIME):
//   "vendor"  librknnrt.so, then librknnmrt.so (RV1103/RV1106 family), by the normal dlopen search
//   "host"    librknnxx_host.so by the normal search; then next to the executable
//             (/proc/self/exe's directory, and ../host/runtime and ../../host/runtime from it,
//             which is where the build tree puts it); then RKNNXX_HOST_RUNTIME_PATH when the
//             build defines it
//   a path    exactly that file
//   unset or "auto": vendor first, then host.
// A runtime is loaded once per process and never unloaded (runtimes keep threads and driver
// state that do not survive dlclose). The SDK and driver versions are read through the first
// context made on the runtime (RKNN_QUERY_SDK_VERSION needs one) and checked against the SDK
// whose ABI rknnxx declares; a runtime that is missing, lacks a required function or is too old
// is an Error that names what was looked for, where, and why each attempt failed.

#include <rknnxx/core/error.hpp>
#include <rknnxx/runtime/api_table.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <compare>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx {

enum class RuntimeKind : std::uint8_t { automatic, vendor, host, path };

[[nodiscard]] constexpr std::string_view name_of(RuntimeKind k) noexcept {
  switch (k) {
  case RuntimeKind::automatic: return "auto";
  case RuntimeKind::vendor: return "vendor";
  case RuntimeKind::host: return "host";
  case RuntimeKind::path: return "path";
  }
  return "unknown";
}

struct RuntimeChoice {
  RuntimeKind kind = RuntimeKind::automatic;
  std::string path; // for RuntimeKind::path

  [[nodiscard]] static RuntimeChoice automatic() { return {}; }
  [[nodiscard]] static RuntimeChoice vendor() { return {RuntimeKind::vendor, {}}; }
  [[nodiscard]] static RuntimeChoice host() { return {RuntimeKind::host, {}}; }
  [[nodiscard]] static RuntimeChoice at(std::string path) { return {RuntimeKind::path, std::move(path)}; }
  // "vendor", "host", "auto" (or empty) or a path, as RKNNXX_RUNTIME takes it.
  [[nodiscard]] static RuntimeChoice parse(std::string_view s) {
    if (s.empty() || s == "auto") return automatic();
    if (s == "vendor") return vendor();
    if (s == "host") return host();
    return at(std::string(s));
  }
  [[nodiscard]] static RuntimeChoice from_environment() {
    const char* v = std::getenv("RKNNXX_RUNTIME");
    return parse(v ? v : "");
  }
  friend bool operator==(const RuntimeChoice&, const RuntimeChoice&) = default;
};

// major.minor.patch, read from the front of a version string such as "2.3.2 (429f97ae6b@2025-04-09T09:09:27)".
struct Version {
  int major = 0;
  int minor = 0;
  int patch = 0;

  [[nodiscard]] static std::optional<Version> parse(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && (s[i] < '0' || s[i] > '9')) ++i; // "v2.3.2", "rknnrt version: 2.3.2"
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
  friend constexpr auto operator<=>(const Version&, const Version&) = default;
};

// The SDK whose ABI rknnxx/abi declares, and the oldest runtime whose ABI it matches (1.6.0: the
// first with rknn_mem_sync and the current rknn_tensor_attr; reference section 8).
inline constexpr Version abi_sdk_version{2, 3, 2};
inline constexpr Version min_sdk_version{1, 6, 0};

struct SdkVersion {
  std::string api;    // rknn_sdk_version::api_version, as the runtime reports it
  std::string driver; // rknn_sdk_version::drv_version
  Version api_version;
};

// Refuses an SDK older than min_sdk_version, or one whose version cannot be read.
inline Version check_sdk_version(const SdkVersion& v, std::string_view runtime_path) {
  const auto parsed = Version::parse(v.api);
  if (!parsed)
    throw Error(Errc::fail, "rknn_query(RKNN_QUERY_SDK_VERSION)",
                fmt::format("the runtime {} reports api version \"{}\", which is not major.minor.patch", runtime_path, v.api));
  if (*parsed < min_sdk_version)
    throw Error(Errc::fail, "rknn_query(RKNN_QUERY_SDK_VERSION)",
                fmt::format("the runtime {} is SDK {}.{}.{} (driver \"{}\"); rknnxx needs SDK >= {}.{}.{} (it declares "
                            "the {}.{}.{} ABI): update librknnrt on the board",
                            runtime_path, parsed->major, parsed->minor, parsed->patch, v.driver, min_sdk_version.major,
                            min_sdk_version.minor, min_sdk_version.patch, abi_sdk_version.major, abi_sdk_version.minor,
                            abi_sdk_version.patch));
  return *parsed;
}

class Runtime {
public:
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The runtime for a choice (default: RKNNXX_RUNTIME), loaded on first use and shared after.
  [[nodiscard]] static std::shared_ptr<const Runtime> load(const RuntimeChoice& choice = RuntimeChoice::from_environment()) {
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const Runtime>> loaded;
    const std::string key = std::string(name_of(choice.kind)) + ":" + choice.path;
    std::lock_guard lock(mutex);
    if (auto found = loaded.find(key); found != loaded.end()) return found->second;
    auto rt = std::shared_ptr<const Runtime>(open(choice));
    loaded.emplace(key, rt);
    return rt;
  }

  [[nodiscard]] const ApiTable& api() const noexcept { return api_; }
  // The file that was opened, as the dynamic loader resolved it.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  // vendor or host (a path choice reports what the file turned out to be).
  // (Known from the file name at load, confirmed by the SDK version at the first context.)
  [[nodiscard]] RuntimeKind kind() const noexcept { return kind_.load(); }
  [[nodiscard]] bool is_host() const noexcept { return kind() == RuntimeKind::host; }
  [[nodiscard]] void* native_handle() const noexcept { return handle_; }

  // The versions, once a context has been made on this runtime (nullopt before).
  [[nodiscard]] std::optional<SdkVersion> sdk_version() const {
    std::lock_guard lock(version_mutex_);
    return version_;
  }
  // Called by Context with the versions its first query read; checks them once per runtime.
  void record_sdk_version(const SdkVersion& v) const {
    std::lock_guard lock(version_mutex_);
    if (version_) return;
    SdkVersion checked = v;
    checked.api_version = check_sdk_version(v, path_);
    version_ = checked;
    // The host runtime says so in its driver version, whatever its file is called.
    if (v.driver.find("rknnxx-host") != std::string::npos || v.api.find("rknnxx host") != std::string::npos)
      kind_.store(RuntimeKind::host);
  }

  // The candidates a choice tries, in order (for diagnostics and tests).
  [[nodiscard]] static std::vector<std::string> candidates(const RuntimeChoice& choice) {
    std::vector<std::string> c;
    const auto vendor = [&] {
      c.emplace_back("librknnrt.so");
      c.emplace_back("librknnmrt.so");
    };
    const auto host = [&] {
      c.emplace_back("librknnxx_host.so");
      if (const auto dir = executable_dir()) {
        c.push_back(*dir + "/librknnxx_host.so");
        c.push_back(*dir + "/../host/runtime/librknnxx_host.so");
        c.push_back(*dir + "/../../host/runtime/librknnxx_host.so");
      }
#ifdef RKNNXX_HOST_RUNTIME_PATH
      c.emplace_back(RKNNXX_HOST_RUNTIME_PATH);
#endif
    };
    switch (choice.kind) {
    case RuntimeKind::automatic: vendor(); host(); break;
    case RuntimeKind::vendor: vendor(); break;
    case RuntimeKind::host: host(); break;
    case RuntimeKind::path: c.push_back(choice.path); break;
    }
    return c;
  }

private:
  Runtime() = default;

  static std::optional<std::string> executable_dir() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return std::nullopt;
    std::string p(buf, static_cast<std::size_t>(n));
    const auto slash = p.rfind('/');
    if (slash == std::string::npos) return std::nullopt;
    return p.substr(0, slash);
  }

  static Runtime* open(const RuntimeChoice& choice) {
    std::string tried;
    for (const std::string& candidate : candidates(choice)) {
      void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = ::dlerror();
        tried += fmt::format("\n  {}: {}", candidate, why ? why : "dlopen failed");
        continue;
      }
      auto rt = std::unique_ptr<Runtime>(new Runtime());
      rt->handle_ = handle;
      std::string missing;
      for (const auto& entry : rt->api_.entries()) {
        void* sym = ::dlsym(handle, std::string(entry.name).c_str());
        std::memcpy(entry.slot, &sym, sizeof sym);
        if (sym == nullptr && entry.required) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", entry.name);
      }
      rt->path_ = candidate;
      Dl_info info{};
      if (rt->api_.rknn_init != nullptr && ::dladdr(reinterpret_cast<void*>(rt->api_.rknn_init), &info) != 0 &&
          info.dli_fname != nullptr)
        rt->path_ = info.dli_fname;
      if (!missing.empty()) {
        // Keep the handle open: another candidate may share its dependencies.
        tried += fmt::format("\n  {}: loaded, but lacks {} (a runtime older than SDK {}.{}.{}, or not an rknn runtime)",
                             rt->path_, missing, min_sdk_version.major, min_sdk_version.minor, min_sdk_version.patch);
        continue;
      }
      rt->kind_.store(rt->path_.find("rknnxx_host") != std::string::npos ? RuntimeKind::host : RuntimeKind::vendor);
      return rt.release();
    }
    throw Error(Errc::fail, "rknnxx::Runtime::load",
                fmt::format("no rknn runtime could be loaded for the choice \"{}\"{} (RKNNXX_RUNTIME={}); tried:{}",
                            choice.kind == RuntimeKind::path ? choice.path : std::string(name_of(choice.kind)),
                            choice == RuntimeChoice::from_environment() ? "" : " given by the application",
                            std::getenv("RKNNXX_RUNTIME") ? std::getenv("RKNNXX_RUNTIME") : "<unset>", tried));
  }

  void* handle_ = nullptr;
  ApiTable api_{};
  std::string path_;
  mutable std::atomic<RuntimeKind> kind_{RuntimeKind::vendor};
  mutable std::mutex version_mutex_;
  mutable std::optional<SdkVersion> version_;
};

} // namespace rknnxx
