// rknnxx accuracy MODEL.onnx -c CONFIG.json --dataset DATASET.txt [-i INPUT...] [-o DIR] [--json]:
// the toolkit's accuracy_analysis off-board. Calibrates the model on the dataset as `convert
// --dataset` does, runs the float and the w8a8 graph on one input set (the -i files, else the
// dataset's first sample) and reports, per calibrated tensor in execution order, the cosine
// similarity and euclidean distance to float: entire (the quantized graph end to end) and single
// (each layer fed the float values). Writes DIR/accuracy.csv, accuracy.json and accuracy.svg.

#include "commands.hpp"
#include "progress.hpp"
#include "svg.hpp"

#include "accuracy.hpp"
#include "convert/config_json.hpp"
#include "onnx_reader.hpp"
#include "settings.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rknnxx::tool {

namespace {

namespace quantize = rknnxx::host::quantize;
namespace fs = std::filesystem;

// What the analysis ran on, for every output format.
struct Analysis {
  std::string algorithm, method;
  std::size_t calibration_samples = 0;
  std::vector<std::string> input_files;
  std::vector<quantize::TensorAccuracy> layers;
};

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_text(const Analysis& a) {
  std::string out = "index,name,op_type,node,entire_cosine,entire_euclidean,single_cosine,single_euclidean\n";
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const auto& l = a.layers[i];
    out += fmt::format("{},{},{},{},{:.6f},{:.6g},{:.6f},{:.6g}\n", i, csv_field(l.name), csv_field(l.op_type),
                       csv_field(l.node), l.entire.cosine, l.entire.euclidean, l.single.cosine, l.single.euclidean);
  }
  return out;
}

nlohmann::json json_of(const AccuracyOptions& o, const Analysis& a, const fs::path& dir) {
  nlohmann::json j;
  j["model"] = o.model;
  j["config"] = o.config;
  j["dataset"] = o.dataset;
  j["quantized_dtype"] = "w8a8";
  j["quantized_algorithm"] = a.algorithm;
  j["quantized_method"] = a.method;
  j["calibration_samples"] = a.calibration_samples;
  j["inputs"] = a.input_files;
  auto similarity = [](const quantize::Similarity& s) {
    // JSON has no NaN: a tensor with non-finite values gets null.
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    return nlohmann::json{{"cosine", number(s.cosine)}, {"euclidean", number(s.euclidean)}};
  };
  j["layers"] = nlohmann::json::array();
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const auto& l = a.layers[i];
    j["layers"].push_back({{"index", i},
                           {"name", l.name},
                           {"op_type", l.op_type},
                           {"node", l.node},
                           {"entire", similarity(l.entire)},
                           {"single", similarity(l.single)}});
  }
  j["files"] = {{"csv", (dir / "accuracy.csv").string()},
                {"json", (dir / "accuracy.json").string()},
                {"svg", (dir / "accuracy.svg").string()}};
  return j;
}

// Cosine per layer, entire and single, as two lines over the layers in execution order. The
// vertical axis spans 1 down to a round value below the lowest cosine, so that small drops show.
std::string svg_plot(const Analysis& a, std::string_view title) {
  const std::size_t n = a.layers.size();
  double lowest = 1.0;
  for (const auto& l : a.layers)
    for (double c : {l.entire.cosine, l.single.cosine})
      if (std::isfinite(c)) lowest = std::min(lowest, c);
  // The span below 1: the smallest 1, 2 or 5 times a power of ten above 1.15 times the drop.
  const double drop = std::max(1.0 - lowest, 1e-5) * 1.15;
  const double decade = std::pow(10.0, std::floor(std::log10(drop)));
  const double span = std::min(2.0,
                               drop <= decade           ? decade
                                   : drop <= 2 * decade ? 2 * decade
                                   : drop <= 5 * decade ? 5 * decade
                                                        : 10 * decade);
  const double y_min = 1.0 - span;
  const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(span))), 2, 7);
  constexpr int left = 90, right = 30, top = 80, plot_height = 340, label_space = 230;
  const double step = std::max(6.0, 1000.0 / static_cast<double>(std::max<std::size_t>(n, 1)));
  const int plot_width = static_cast<int>(step * static_cast<double>(std::max<std::size_t>(n, 1)));
  const int width = std::max(left + plot_width + right, 760);
  const int height = top + plot_height + label_space;
  auto x_of = [&](std::size_t i) { return left + (static_cast<double>(i) + 0.5) * step; };
  auto y_of = [&](double c) { return top + (1.0 - (c - y_min) / (1.0 - y_min)) * plot_height; };

  std::string s =
      svg_begin(width, height, title,
                fmt::format("w8a8 ({}, {}) against float32: cosine similarity per tensor, {} tensors; "
                            "calibrated on {} sample{}",
                            a.algorithm, a.method, n, a.calibration_samples, a.calibration_samples == 1 ? "" : "s"));
  // Legend.
  const std::pair<const char*, const char*> series[] = {{"entire (errors accumulated)", "#3b7dd8"},
                                                        {"single (each layer on float inputs)", "#e8772e"}};
  for (std::size_t k = 0; k < 2; ++k) {
    const int x = 12 + static_cast<int>(k) * 260;
    s += fmt::format("<line x1=\"{}\" y1=\"60\" x2=\"{}\" y2=\"60\" stroke=\"{}\" stroke-width=\"3\"/>\n", x, x + 24,
                     series[k].second);
    s += fmt::format("<text x=\"{}\" y=\"64\">{}</text>\n", x + 30, series[k].first);
  }
  // Horizontal grid with the cosine values.
  constexpr int ticks = 5;
  for (int t = 0; t <= ticks; ++t) {
    const double c = y_min + (1.0 - y_min) * t / ticks;
    const double y = y_of(c);
    s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, y,
                     left + plot_width, y);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.{}f}</text>\n", left - 6, y + 4, c, decimals);
  }
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>\n", left, top,
                   plot_width, plot_height);
  s += fmt::format("<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">cosine</text>\n",
                   top + plot_height / 2, top + plot_height / 2);
  // The two lines (a NaN breaks a line), and a dot per tensor telling its numbers on hover.
  for (std::size_t k = 0; k < 2; ++k) {
    const auto member = k == 0 ? &quantize::TensorAccuracy::entire : &quantize::TensorAccuracy::single;
    std::string points;
    auto flush = [&] {
      if (!points.empty())
        s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", series[k].second,
                         points);
      points.clear();
    };
    for (std::size_t i = 0; i < n; ++i) {
      const double c = (a.layers[i].*member).cosine;
      if (!std::isfinite(c)) {
        flush();
        continue;
      }
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x_of(i), y_of(c));
    }
    flush();
    for (std::size_t i = 0; i < n; ++i) {
      const auto& l = a.layers[i];
      const double c = (l.*member).cosine;
      if (!std::isfinite(c)) continue;
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}</title></circle>\n",
                       x_of(i), y_of(c), series[k].second,
                       xml_escaped(fmt::format("{} {} ({}): entire cosine {:.6f}, single cosine {:.6f}", i, l.name,
                                               l.op_type, l.entire.cosine, l.single.cosine)));
    }
  }
  // Tensor names under the axis, turned to read upwards; every k-th when they would overlap.
  const std::size_t every = static_cast<std::size_t>(std::ceil(13.0 / step));
  for (std::size_t i = 0; i < n; i += every) {
    const double x = x_of(i) + 4;
    const int y = top + plot_height + 8;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" transform=\"rotate(-90 {:.1f} {})\" text-anchor=\"end\" "
                     "font-size=\"10\">{}</text>\n",
                     x, y, x, y, xml_escaped(shortened(fmt::format("{} {}", i, a.layers[i].name), 36)));
  }
  s += svg_end;
  return s;
}

void print_table(const Analysis& a, const fs::path& dir) {
  std::size_t name_width = 4;
  std::size_t op_width = 7;
  for (const auto& l : a.layers) {
    name_width = std::max(name_width, std::min<std::size_t>(l.name.size(), 48));
    op_width = std::max(op_width, l.op_type.size());
  }
  fmt::print("w8a8 ({}, {}) against float32, calibrated on {} sample{}; inputs: {}\n", a.algorithm, a.method,
             a.calibration_samples, a.calibration_samples == 1 ? "" : "s", fmt::join(a.input_files, " "));
  fmt::print("  {:>5}  {:<{}}  {:<{}}  {:>12}  {:>12}  {:>12}  {:>12}\n", "#", "name", name_width, "op_type", op_width,
             "entire cos", "entire euc", "single cos", "single euc");
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    const auto& l = a.layers[i];
    fmt::print("  {:>5}  {:<{}}  {:<{}}  {:>12.6f}  {:>12.5g}  {:>12.6f}  {:>12.5g}\n", i, shortened(l.name, 48),
               name_width, l.op_type, op_width, l.entire.cosine, l.entire.euclidean, l.single.cosine,
               l.single.euclidean);
  }
  fmt::print("written: {}, {}, {}\n", (dir / "accuracy.csv").string(), (dir / "accuracy.json").string(),
             (dir / "accuracy.svg").string());
}

fs::path output_directory(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError(fmt::format("-o {}: exists and is not a directory", dir));
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(fmt::format("-o {}: cannot be created ({})", dir, ec.message()));
  return dir;
}

}  // namespace

int accuracy(const AccuracyOptions& o) {
  const toolkit::Config config = rknnxx::host::load_config_json(o.config);
  const quantize::Settings settings = quantize::settings_for(config);
  if (quantize::weight_only(settings.dtype))
    throw toolkit::ConfigError(
        "quantized_dtype",
        fmt::format("config: quantized_dtype '{}': the analysis measures w8a8 activations, which "
                    "a weight-only model does not have",
                    toolkit::spelling(settings.dtype)));
  if (settings.dtype != toolkit::QuantizedDtype::w8a8)
    throw toolkit::ConfigError("quantized_dtype",
                               fmt::format("config: quantized_dtype '{}': the analysis measures w8a8 models only",
                                           toolkit::spelling(settings.dtype)));
  const auto graph = quantize::inference_graph(rknnxx::host::onnx::read_model_file(o.model));
  const auto model_inputs = quantize::model_inputs(graph);
  config.validate_against(model_inputs);
  const auto inputs = quantize::calibration_inputs(model_inputs, config);
  const auto samples = quantize::read_dataset(o.dataset, inputs.size());
  const fs::path dir = output_directory(o.output);

  // The input set to analyse: the -i files (relative to the working directory), else the first sample.
  quantize::DatasetSample analysed = samples.front();
  std::string source = o.dataset;
  if (!o.inputs.empty()) {
    if (o.inputs.size() != inputs.size())
      throw UsageError(fmt::format("-i gives {} file{}; the model has {} input{}", o.inputs.size(),
                                   o.inputs.size() == 1 ? "" : "s", inputs.size(), inputs.size() == 1 ? "" : "s"));
    analysed = {0, {o.inputs.begin(), o.inputs.end()}};
    source = "-i";
  }
  std::vector<rknnxx::host::Tensor> tensors;
  try {
    tensors = quantize::load_sample(analysed, inputs, source);
  } catch (const quantize::DatasetError& e) {
    // load_sample names "SOURCE:LINE:"; the -i files have no line.
    const std::string what = e.what();
    if (o.inputs.empty()) throw;
    throw std::runtime_error("-i " + what.substr(std::min(what.size(), std::string("-i:0: ").size())));
  }

  ProgressBar bar;
  Analysis a;
  a.algorithm = std::string(toolkit::spelling(settings.algorithm));
  a.method = settings.method.name();
  for (const auto& f : analysed.files) a.input_files.push_back(f.string());
  const quantize::ActivationTable table = quantize::calibrate(
      graph, inputs, samples,
      {.algorithm = settings.algorithm,
       .threads = o.threads,
       .progress = false,
       .on_sample = [&](std::size_t done, std::size_t total) { bar.update("calibrating", done, total); }},
      o.dataset);
  bar.finish();
  a.calibration_samples = table.samples;
  a.layers = quantize::analyze_accuracy(
      graph, table, settings.method, tensors,
      {.session = {.threads = o.threads},
       .progress = [&](std::size_t done, std::size_t total) { bar.update("analysing", done, total); }});
  bar.finish();

  const nlohmann::json j = json_of(o, a, dir);
  write_text_file(dir / "accuracy.csv", csv_text(a), "-o");
  write_text_file(dir / "accuracy.json", j.dump(2) + "\n", "-o");
  write_text_file(dir / "accuracy.svg",
                  svg_plot(a, fmt::format("rknnxx accuracy: {}", fs::path(o.model).filename().string())), "-o");
  if (o.json) fmt::print("{}\n", j.dump(2));
  else print_table(a, dir);
  return 0;
}

}  // namespace rknnxx::tool
