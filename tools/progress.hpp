#pragma once
// A one-line progress bar on stderr, drawn only when stderr is a terminal: piped or redirected
// output (scripts, tests, --json consumers) gets no carriage-return noise.

#include <rknnxx/core/fmt_core.hpp>  // first: fmt with g++ -O3's false warning silenced (docs/building.md)

#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <string>

namespace rknnxx::tool {

class ProgressBar {
public:
  explicit ProgressBar(bool enabled = isatty(STDERR_FILENO) != 0) : enabled_(enabled) {}
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { finish(); }

  [[nodiscard]] bool enabled() const noexcept { return enabled_; }

  // Redraws at most once per whole percent, so a tight loop does not spend its time printing.
  void update(std::string_view label, std::size_t done, std::size_t total) {
    if (!enabled_ || total == 0) return;
    const auto percent = static_cast<int>(100 * done / total);
    if (percent == last_percent_ && label == last_label_ && done != total) return;
    last_percent_ = percent;
    last_label_ = std::string(label);
    constexpr int width = 30;
    const auto filled = static_cast<int>(static_cast<std::size_t>(width) * done / total);
    fmt::print(stderr, "\r{} [{}{}] {}/{}", label, std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(width - filled), ' '), done, total);
    std::fflush(stderr);
    drawn_ = true;
  }
  // Ends the line the bar was drawn on (nothing when it never drew).
  void finish() {
    if (drawn_) fmt::print(stderr, "\n");
    drawn_ = false;
    last_percent_ = -1;
  }

private:
  bool enabled_;
  bool drawn_ = false;
  int last_percent_ = -1;
  std::string last_label_;
};

}  // namespace rknnxx::tool
