#pragma once
// What RKNN_QUERY_PERF_RUN and RKNN_QUERY_PERF_DETAIL report about a context's last run: its time,
// and with RKNN_FLAG_COLLECT_PERF_MASK a per-layer table. The table is one buffer per context,
// replaced by each run and handed out as it is by every query, so that its size is bounded by the
// model, never by the number of queries.

#include "../engine/session.hpp"

#include <cstdint>
#include <string>

namespace rknnxx::host {

class PerfReport {
public:
  // After a run of `run_us` microseconds on `session`; the table only when `detail` (the perf flag).
  void record(const Session& session, int64_t run_us, bool detail);

  [[nodiscard]] int64_t run_us() const noexcept { return run_us_; }
  // The table as rknn_perf_detail hands it out: NUL-terminated, valid until the next record().
  [[nodiscard]] char* detail_text() noexcept { return detail_.data(); }
  [[nodiscard]] size_t detail_size() const noexcept { return detail_.size(); }

private:
  int64_t run_us_ = 0;
  std::string detail_;
};

}  // namespace rknnxx::host
