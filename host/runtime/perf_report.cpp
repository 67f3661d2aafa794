#include "perf_report.hpp"

#include "loaded_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rknnxx::host {

void PerfReport::record(const Session& session, int64_t run_us, bool detail) {
  run_us_ = run_us;
  if (!detail) return;
  // One line a step of the run, then the totals.
  std::string table =
      fmt::format("{:<5} {:<22} {:<22} {:>10}  {}\n", "ID", "OpType", "OutputShape", "Time(us)", "Node");
  double total = 0;
  int id = 0;
  for (const StepTime& step : session.last_profile()) {
    // One word per column, as the vendor's table has it, so that a reader may split lines at spaces
    // (rknnxx profile does): the shape without the spaces of dims_text.
    table += fmt::format("{:<5} {:<22} {:<22} {:>10.1f}  {}\n", id++, step.op_type,
                         fmt::format("[{}]", fmt::join(step.output_shape, ",")), step.microseconds, step.node);
    total += step.microseconds;
  }
  table += fmt::format("Total operator time per frame (us): {:.1f}; rknn_run (us): {} on {} CPU threads\n", total,
                       run_us_, session.threads());
  detail_ = std::move(table);
}

}  // namespace rknnxx::host
