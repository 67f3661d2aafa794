// rknnxx profile MODEL [-i FILE...] [--shape S...] [-n RUNS] [--top K] [--json] [--svg FILE]:
// per-operator time from the runtime's RKNN_QUERY_PERF_DETAIL table, sorted by time, as text,
// JSON or an SVG bar chart.

#include "commands.hpp"
#include "input_file.hpp"
#include "model_report.hpp"
#include "svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::tool {

namespace {

struct OperatorTime {
  std::size_t id = 0;
  std::string op_type;
  std::string name;
  double us = 0;  // mean over the runs
};

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> w;
  std::istringstream in{std::string(line)};
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

std::size_t column(const std::vector<std::string>& header, std::initializer_list<std::string_view> names) {
  for (std::size_t i = 0; i < header.size(); ++i)
    for (auto n : names)
      if (header[i] == n) return i;
  return header.size();
}

// The table of RKNN_QUERY_PERF_DETAIL: a header line naming the columns "ID", "OpType" and
// "Time(us)" (the host runtime's and the vendor runtime's tables both do; the vendor's has more
// columns), then one line per operator starting with its number; the last column is the node's
// name. Lines that do not fit (titles, rulers, totals) are skipped.
std::vector<OperatorTime> parse_perf_detail(const std::string& text) {
  std::vector<OperatorTime> ops;
  std::vector<std::string> header;
  std::size_t id_col = 0, type_col = 0, time_col = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto w = words(line);
    if (w.empty()) continue;
    if (header.empty() || w[0] == "ID") {
      const std::size_t id = column(w, {"ID"}), type = column(w, {"OpType"}), time = column(w, {"Time(us)"});
      if (id < w.size() && type < w.size() && time < w.size()) {
        header = w;
        id_col = id, type_col = type, time_col = time;
      }
      continue;
    }
    if (w.size() + 1 < header.size()) continue;  // the name, last, may be empty (an unnamed ONNX node)
    std::size_t id = 0;
    double us = 0;
    const auto& id_text = w[id_col];
    const auto& time_text = w[time_col];
    // Whole words only: "7," (a piece of a shape written with spaces) is not a time.
    const auto whole = [](const std::string& text, auto& value) {
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      return ec == std::errc{} && end == text.data() + text.size();
    };
    if (!whole(id_text, id) || !whole(time_text, us)) continue;
    std::string name;
    for (std::size_t i = header.size() - 1; i < w.size(); ++i)
      name += (name.empty() ? "" : " ") + w[i];  // names with spaces
    ops.push_back({id, w[type_col], name, us});
  }
  return ops;
}

// A horizontal bar chart, slowest operator first: one row per operator with its type and name on
// the left, the bar, and the time in ms at the bar's end.
std::string svg_chart(const std::vector<OperatorTime>& ops, double total_us, const std::string& title) {
  constexpr int label_width = 360, bar_width = 520, row = 22, top = 56, width = label_width + bar_width + 170;
  const int height = top + static_cast<int>(ops.size()) * row + 30;
  const double longest = ops.empty() ? 1.0 : std::max(ops.front().us, 1e-9);
  std::string s =
      svg_begin(width, height, title,
                fmt::format("{} operators shown; all operators: {:.3f} ms per run", ops.size(), total_us / 1000.0));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const int y = top + static_cast<int>(i) * row;
    const double w = std::max(1.0, bar_width * op.us / longest);
    const std::string label = shortened(fmt::format("{}  {}", op.op_type, op.name), 52);
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_width - 8, y + 15,
                     xml_escaped(label));
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#3b7dd8\"/>\n", label_width, y + 3,
                     w, row - 6);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.3f} ms ({:.1f}%)</text>\n", label_width + w + 6, y + 15,
                     op.us / 1000.0, total_us > 0 ? 100.0 * op.us / total_us : 0.0);
  }
  s += svg_end;
  return s;
}

}  // namespace

int profile(const ProfileOptions& o) {
  // The option is checked before the model loads: a wrong mask is a usage error whatever the model.
  const bool set_core_mask = !o.core_mask.empty();
  const CoreMask core_mask = set_core_mask ? parse_core_mask(o.core_mask) : CoreMask{};
  auto ctx = open_model(o.model, {.flags = InitFlag::collect_perf});
  if (set_core_mask) ctx.set_core_mask(core_mask);
  const std::string shape = select_shape(ctx, o.shapes, o.inputs);
  const auto inputs = inputs_or_pattern(ctx, o.inputs);
  // Per operator (by its position in the table), the sum over the runs.
  std::vector<OperatorTime> ops;
  std::string table;
  for (std::size_t r = 0; r < o.runs; ++r) {
    set_inputs(ctx, inputs);
    ctx.run();
    table = ctx.perf_detail();
    auto run_ops = parse_perf_detail(table);
    if (run_ops.empty())
      throw std::runtime_error(fmt::format("the runtime's RKNN_QUERY_PERF_DETAIL table has no operator lines with ID, "
                                           "OpType and Time(us) columns; it begins: \"{}\"",
                                           shortened(table.substr(0, table.find('\n')), 120)));
    if (r == 0) ops = std::move(run_ops);
    else if (run_ops.size() == ops.size())
      for (std::size_t i = 0; i < ops.size(); ++i) ops[i].us += run_ops[i].us;
    else
      throw std::runtime_error(
          fmt::format("run {} reported {} operators, run 1 reported {}", r + 1, run_ops.size(), ops.size()));
  }
  double total_us = 0;
  std::map<std::string, std::pair<double, std::size_t>> by_type;
  for (auto& op : ops) {
    op.us /= static_cast<double>(o.runs);
    total_us += op.us;
    auto& t = by_type[op.op_type];
    t.first += op.us;
    ++t.second;
  }
  std::stable_sort(ops.begin(), ops.end(), [](const OperatorTime& a, const OperatorTime& b) { return a.us > b.us; });
  const std::size_t shown = std::min(o.top, ops.size());

  if (!o.svg.empty()) {
    const std::vector<OperatorTime> top(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(shown));
    const std::string title =
        fmt::format("rknnxx profile: {} ({} run{})", std::filesystem::path(o.model).filename().string(), o.runs,
                    o.runs == 1 ? "" : "s");
    write_text_file(o.svg, svg_chart(top, total_us, title), "--svg");
  }

  if (o.json) {
    nlohmann::json j;
    j["model"] = o.model;
    j["runtime"] = {{"kind", ctx.runtime().is_host() ? "host" : "vendor"}, {"path", ctx.runtime().path()}};
    j["runs"] = o.runs;
    j["total_ms"] = total_us / 1000.0;
    j["operators"] = nlohmann::json::array();
    for (const auto& op : ops)
      j["operators"].push_back({{"id", op.id},
                                {"op_type", op.op_type},
                                {"name", op.name},
                                {"ms", op.us / 1000.0},
                                {"share", total_us > 0 ? op.us / total_us : 0.0}});
    j["by_type"] = nlohmann::json::object();
    for (const auto& [type, t] : by_type) j["by_type"][type] = {{"ms", t.first / 1000.0}, {"count", t.second}};
    if (!o.svg.empty()) j["svg"] = o.svg;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("{}\n", runtime_line(ctx));
  if (!shape.empty()) fmt::print("{}\n", shape);
  fmt::print("{} operators, {:.3f} ms per run (mean of {} run{}); the {} slowest:\n", ops.size(), total_us / 1000.0,
             o.runs, o.runs == 1 ? "" : "s", shown);
  fmt::print("  {:>5} {:<20} {:>10} {:>7}  {}\n", "ID", "OpType", "ms", "share", "name");
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& op = ops[i];
    fmt::print("  {:>5} {:<20} {:>10.3f} {:>6.1f}%  {}\n", op.id, op.op_type, op.us / 1000.0,
               total_us > 0 ? 100.0 * op.us / total_us : 0.0, op.name);
  }
  std::vector<std::pair<std::string, std::pair<double, std::size_t>>> types(by_type.begin(), by_type.end());
  std::stable_sort(types.begin(), types.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  fmt::print("by operator type:\n");
  for (const auto& [type, t] : types)
    fmt::print("  {:<20} {:>10.3f} ms {:>6.1f}%  ({} operator{})\n", type, t.first / 1000.0,
               total_us > 0 ? 100.0 * t.first / total_us : 0.0, t.second, t.second == 1 ? "" : "s");
  if (!o.svg.empty()) fmt::print("bar chart: {}\n", o.svg);
  return 0;
}

}  // namespace rknnxx::tool
