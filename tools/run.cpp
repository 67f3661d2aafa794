// rknnxx run MODEL --input FILE... [--shape S...] [--core-mask M] [--bgr] [--resize stretch|letterbox]
//            [-o DIR] [--json]: one inference; outputs as .npy.

#include "commands.hpp"
#include "input_file.hpp"
#include "model_report.hpp"

#include <rknnxx/io/npy.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

namespace rknnxx::tool {

namespace {

// A classifier's output: one row of scores (every dim but the last is 1).
bool looks_like_scores(const Dims& d) {
  if (d.rank() == 0 || d[d.rank() - 1] < 2) return false;
  for (std::size_t i = 0; i + 1 < d.rank(); ++i)
    if (d[i] != 1) return false;
  return true;
}

}  // namespace

int run(const RunOptions& o) {
  const ImageOptions image{o.resize == "letterbox" ? ResizeMode::letterbox : ResizeMode::stretch, o.bgr};
  // The option is checked before the model loads: a wrong mask is a usage error whatever the model.
  const bool set_core_mask = !o.core_mask.empty();
  const CoreMask core_mask = set_core_mask ? parse_core_mask(o.core_mask) : CoreMask{};
  auto ctx = open_model(o.model);
  const std::string runtime = runtime_line(ctx);
  if (!o.json) fmt::print("{}\n", runtime);
  if (set_core_mask) ctx.set_core_mask(core_mask);
  const std::string shape = select_shape(ctx, o.shapes, o.inputs);
  if (!o.json && !shape.empty()) fmt::print("{}\n", shape);
  const auto inputs = read_inputs(ctx, o.inputs, image);
  set_inputs(ctx, inputs);
  const auto t0 = std::chrono::steady_clock::now();
  ctx.run();
  const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto outputs = ctx.outputs();

  std::filesystem::create_directories(o.output_dir);
  nlohmann::json j;
  j["model"] = o.model;
  j["runtime"] = {{"kind", ctx.runtime().is_host() ? "host" : "vendor"}, {"path", ctx.runtime().path()}};
  j["shape_group"] = ctx.current_shape_group() ? nlohmann::json(*ctx.current_shape_group()) : nlohmann::json(nullptr);
  j["run_ms"] = run_ms;
  j["core_mask"] = o.core_mask.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.core_mask);
  j["inputs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    nlohmann::json ij{{"file", in.path.string()},
                      {"kind", in.kind},
                      {"shape", in.shape},
                      {"type", std::string(name_of(in.type))},
                      {"format", std::string(name_of(in.format))}};
    const bool is_image = in.kind == "image";
    if (is_image) {
      ij["resize"] = o.resize;
      ij["channel_order"] = o.bgr ? "BGR" : "RGB";
    }
    j["inputs"].push_back(std::move(ij));
    if (!o.json)
      fmt::print("input {} \"{}\": {} ({}{}, {} {} {})\n", i, ctx.current_inputs()[i].name(), in.path.string(), in.kind,
                 is_image ? fmt::format(" {}, {}", o.resize == "letterbox" ? "letterboxed" : "stretched",
                                        o.bgr ? "BGR" : "RGB")
                          : std::string(),
                 name_of(in.type), name_of(in.format), shape_text(in.shape));
  }
  if (!o.json) fmt::print("run: {:.3f} ms\n", run_ms);
  j["outputs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto out = outputs[i];
    const bool integer = out.type() == TensorType::int64;  // a detector's labels: written as int64
    std::vector<float> widened;                            // their values for the statistics below
    if (integer)
      for (std::int64_t v : out.as<std::int64_t>()) widened.push_back(static_cast<float>(v));
    const std::span<const float> values = integer ? std::span<const float>(widened) : out.as<float>();
    // An output a run left empty (no detections) has a 0 among its dims, which rknnxx::Dims does not
    // hold: read them from the attribute (docs/c-interface.md#run-time-output-shapes).
    const rknn_tensor_attr& attr = out.info().abi();
    const std::vector<std::int64_t> shape(attr.dims, attr.dims + std::min<std::uint32_t>(attr.n_dims, RKNN_MAX_DIMS));
    const auto file = std::filesystem::path(o.output_dir) / fmt::format("output_{}.npy", i);
    if (integer) io::write_npy(file, shape, out.as<std::int64_t>());
    else io::write_npy(file, shape, values);
    nlohmann::json oj{{"index", i},
                      {"name", std::string(out.info().name())},
                      {"dims", shape},
                      {"file", file.string()},
                      {"format", std::string(name_of(out.info().format()))}};
    if (!values.empty()) {
      const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
      oj["min"] = *mn;
      oj["max"] = *mx;
      oj["mean"] = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    }
    std::string top_text;
    if (!values.empty() && looks_like_scores(out.dims()) && o.top > 0) {
      std::vector<std::size_t> order(values.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      const std::size_t k = std::min(o.top, order.size());
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                        [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
      oj["top"] = nlohmann::json::array();
      for (std::size_t r = 0; r < k; ++r) {
        oj["top"].push_back({{"class", order[r]}, {"score", values[order[r]]}});
        top_text += fmt::format("{}{} ({:.4g})", r ? ", " : "", order[r], values[order[r]]);
      }
    }
    if (!o.json) {
      fmt::print("output {} \"{}\": float32 {} {} -> {}", i, out.info().name(), name_of(out.info().format()),
                 shape_text(shape), file.string());
      if (!values.empty())
        fmt::print("  min {:.6g} max {:.6g} mean {:.6g}", oj["min"].get<float>(), oj["max"].get<float>(),
                   oj["mean"].get<double>());
      fmt::print("\n");
      if (!top_text.empty()) fmt::print("  top-{}: {}\n", std::min(o.top, values.size()), top_text);
    }
    j["outputs"].push_back(std::move(oj));
  }
  if (o.json) fmt::print("{}\n", j.dump(2));
  return 0;
}

}  // namespace rknnxx::tool
