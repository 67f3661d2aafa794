#pragma once
// Where the test suites write files: every test process has a directory of its own under the
// system's temporary folder, removed with everything in it when the process exits, so that runs
// leave nothing behind and concurrent runs (CI jobs, build configurations) never share a path.

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <unistd.h>

namespace rknnxx::test {

// A new directory, removed with its contents when destroyed. mkdtemp picks a name no other
// process holds.
class TempDir {
public:
  TempDir(const std::filesystem::path& parent, std::string_view prefix) {
    std::string pattern = (parent / prefix).string() + "XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    path_ = pattern;
  }
  // A directory for one test, inside the process's scratch_dir().
  TempDir();
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

// The process's scratch directory, rknnxx-tests-<pid>-XXXXXX: made on first use (a run of test
// cases that write nothing makes none), removed by its static's destructor at normal exit.
inline const std::filesystem::path& scratch_dir() {
  static const TempDir dir(std::filesystem::temp_directory_path(), "rknnxx-tests-" + std::to_string(::getpid()) + "-");
  return dir.path();
}

inline TempDir::TempDir() : TempDir(scratch_dir(), "dir-") {}

}  // namespace rknnxx::test
