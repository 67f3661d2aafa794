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
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace rknnxx::tool {

namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir = ".";
  std::size_t top = 5;
  std::string core_mask;
  std::string resize = "stretch";
  bool bgr = false;
  bool json = false;
};

// A classifier's output: one row of scores (every dim but the last is 1).
bool looks_like_scores(const Dims& d) {
  if (d.rank() == 0 || d[d.rank() - 1] < 2) return false;
  for (std::size_t i = 0; i + 1 < d.rank(); ++i)
    if (d[i] != 1) return false;
  return true;
}

int run(const RunOptions& o) {
  const ImageOptions image{o.resize == "letterbox" ? ResizeMode::letterbox : ResizeMode::stretch, o.bgr};
  const auto core_mask = o.core_mask.empty() ? std::nullopt : std::optional(parse_core_mask(o.core_mask));
  auto ctx = open_model(o.model);
  const std::string runtime = runtime_line(ctx);
  if (!o.json) fmt::print("{}\n", runtime);
  if (core_mask) ctx.set_core_mask(*core_mask);
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
    nlohmann::json ij{{"file", in.path.string()}, {"kind", in.kind}, {"shape", in.shape},
                      {"type", std::string(name_of(in.type))}, {"format", std::string(name_of(in.format))}};
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
    const auto values = out.as<float>();
    const Dims d = out.dims();
    const std::vector<std::int64_t> shape(d.begin(), d.end());
    const auto file = std::filesystem::path(o.output_dir) / fmt::format("output_{}.npy", i);
    io::write_npy(file, shape, values);
    nlohmann::json oj{{"index", i}, {"name", std::string(out.info().name())}, {"dims", shape}, {"file", file.string()},
                      {"format", std::string(name_of(out.info().format()))}};
    if (!values.empty()) {
      const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
      oj["min"] = *mn;
      oj["max"] = *mx;
      oj["mean"] = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    }
    std::string top_text;
    if (looks_like_scores(d) && o.top > 0) {
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

} // namespace

Command add_run(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "one inference from .npy, .png or .jpg inputs; outputs written as .npy");
  cmd->add_option("model", o->model, "model file")->required();
  cmd->add_option("-i,--input", o->inputs, "one file per model input, in order: .npy, .png or .jpg")->required();
  cmd->add_option("--shape", o->shapes,
                  "for a dynamic model: the shape of each input (1x3x48x320; NHWC or NCHW), one of the model's set");
  cmd->add_option("-o,--output-dir", o->output_dir, "where output_<i>.npy go (default: the current directory)");
  cmd->add_option("--top", o->top, "how many top classes to list for a classifier's output (default 5)")
      ->check(count_from(0, 1000000));
  cmd->add_option("--core-mask", o->core_mask, "NPU cores: auto, 0, 1, 2, 0_1, 0_1_2 or all (rknn_set_core_mask)");
  cmd->add_flag("--bgr", o->bgr, "feed images as BGR (for a model trained on BGR images), not RGB");
  cmd->add_option("--resize", o->resize,
                  "how an image is fit to the input: stretch (default) or letterbox (scaled with its aspect ratio "
                  "kept, centred on gray 114)")
      ->check(CLI::IsMember({"stretch", "letterbox"}));
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  return {cmd, [o] { return run(*o); }};
}

} // namespace rknnxx::tool
