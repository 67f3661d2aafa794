// rknnxx._converter: the host converter (host/converter.hpp, what `rknnxx convert` runs) and the
// quantizer's accuracy analysis (host/quantize/accuracy.hpp, what `rknnxx accuracy` computes) for
// rknnxx.toolkit (docs/python.md). Built only with the host runtime. Conversion errors (a config
// key, an unsupported operator, an unreadable model, a bad dataset) come out as RuntimeError with
// the converter's message; the GIL is released while it works.

#include <rknnxx/core/fmt_core.hpp>  // first: see docs/building.md

#include "convert/converter.hpp"
#include "convert/config_json.hpp"
#include "convert/model_file.hpp"

#include "accuracy.hpp"
#include "calibrate.hpp"
#include "dataset.hpp"
#include "qnt8_section.hpp"
#include "onnx_reader.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace rknnxx;

namespace {

std::span<const std::byte> bytes_of(const py::buffer_info& b) {
  return {static_cast<const std::byte*>(b.ptr), static_cast<std::size_t>(b.size * b.itemsize)};
}

py::bytes to_bytes(const std::vector<std::byte>& v) { return {reinterpret_cast<const char*>(v.data()), v.size()}; }

// The toolkit's accuracy_analysis on a model that build(do_quantization=True) made: the float graph
// (the model's ONNX) against the w8a8 one with the activation parameters the model file stores (the
// calibration build() ran, so nothing is calibrated twice), on one input set given as files in the
// dataset's formats (one per model input, read as a dataset line is).
struct AccuracyResult {
  std::string algorithm, method;
  std::size_t samples = 0;
  std::vector<host::quantize::TensorAccuracy> layers;
};

AccuracyResult analyze(std::span<const std::byte> model_bytes, const std::string& config_json,
                       const std::vector<std::string>& files, std::size_t threads) {
  namespace quantize = host::quantize;
  const host::ModelFile file = host::parse_model_file(model_bytes);
  if (!file.quantization) throw std::invalid_argument("the model is not quantized");
  if (quantize::weight_only(file.quantization->dtype))
    throw std::invalid_argument(fmt::format("the model is {}: the analysis measures w8a8 activations, which a "
                                            "weight-only model does not have",
                                            toolkit::spelling(file.quantization->dtype)));
  if (file.quantization->dtype != toolkit::QuantizedDtype::w8a8)
    throw std::invalid_argument(fmt::format("the model is {}: the analysis measures w8a8 models only",
                                            toolkit::spelling(file.quantization->dtype)));
  const toolkit::Config config = host::config_from_json(config_json);
  const host::Graph graph = quantize::inference_graph(host::onnx::read_model(file.onnx));
  const auto inputs = quantize::calibration_inputs(quantize::model_inputs(graph), config);
  if (files.size() != inputs.size())
    throw std::invalid_argument(fmt::format("inputs: {} given, the model has {} input{}", files.size(), inputs.size(),
                                            inputs.size() == 1 ? "" : "s"));
  std::vector<host::Tensor> tensors;
  try {
    tensors = quantize::load_sample({0, {files.begin(), files.end()}}, inputs, "inputs");
  } catch (const quantize::DatasetError& e) {
    // load_sample names "SOURCE:LINE: "; these files have no line.
    const std::string what = e.what();
    const std::string prefix = "inputs:0: ";
    throw std::invalid_argument("inputs: " + what.substr(what.starts_with(prefix) ? prefix.size() : 0));
  }
  const host::ModelQuantization& q = *file.quantization;
  const quantize::ActivationTable table = quantize::activation_table(q);
  AccuracyResult result;
  result.algorithm = std::string(toolkit::spelling(q.algorithm));
  result.method = q.method.name();
  result.samples = q.samples;
  result.layers = quantize::analyze_accuracy(graph, table, q.method, tensors, {.session = {.threads = threads}});
  return result;
}

}  // namespace

PYBIND11_MODULE(_converter, m) {
  m.doc() = "The host converter: ONNX + the toolkit's config -> a host model (rknnxx convert)";

  m.def(
      "convert",
      [](const py::buffer& onnx, const std::string& config_json, const std::optional<std::string>& dataset,
         bool auto_hybrid) {
        const py::buffer_info in = onnx.request();
        std::vector<std::byte> file;
        {
          py::gil_scoped_release nogil;
          const toolkit::Config config = host::config_from_json(config_json);
          file = host::serialize_model_file(
              host::convert_onnx(bytes_of(in), config, {}, dataset.value_or(std::string()), auto_hybrid).file);
        }
        return to_bytes(file);
      },
      py::arg("onnx"), py::arg("config_json"), py::arg("dataset") = py::none(), py::arg("auto_hybrid") = false,
      "Converts ONNX bytes with a CONFIG.json text (the toolkit's config keys) into the bytes of a host model; "
      "with a dataset file, quantized w8a8 (calibrated on its samples, as `rknnxx convert --dataset`), and with "
      "auto_hybrid the badly quantized layers kept in float16 (`--auto-hybrid`).");

  m.def(
      "accuracy",
      [](const py::buffer& model, const std::string& config_json, const std::vector<std::string>& files,
         std::size_t threads) {
        const py::buffer_info in = model.request();
        AccuracyResult r;
        {
          py::gil_scoped_release nogil;
          r = analyze(bytes_of(in), config_json, files, threads);
        }
        py::list layers;
        for (const auto& l : r.layers)
          layers.append(py::make_tuple(l.name, l.op_type, l.node, l.entire.cosine, l.entire.euclidean, l.single.cosine,
                                       l.single.euclidean));
        py::dict d;
        d["algorithm"] = r.algorithm;
        d["method"] = r.method;
        d["samples"] = r.samples;
        d["layers"] = layers;
        return d;
      },
      py::arg("model"), py::arg("config_json"), py::arg("files"), py::arg("threads") = 0,
      "Per tensor of a quantized host model, in execution order: (name, op_type, node, entire cosine, entire "
      "euclidean, single cosine, single euclidean) of w8a8 against float32 on one input set (files in the dataset's "
      "formats, one per input), as `rknnxx accuracy` computes them; and the quantization's algorithm, method, "
      "samples.");

  m.def(
      "model_info",
      [](const py::buffer& model) {
        const py::buffer_info in = model.request();
        const host::ModelFile file = [&] {
          py::gil_scoped_release nogil;
          return host::parse_model_file(bytes_of(in));
        }();
        py::dict d;
        d["target_platform"] = std::string(toolkit::spelling(file.target_platform));
        d["producer"] = file.producer;
        d["config_json"] = file.config_json;
        d["custom_string"] = file.custom_string ? py::object(py::str(*file.custom_string)) : py::object(py::none());
        d["dynamic"] = file.dynamic_input.has_value();
        return d;
      },
      py::arg("model"), "What a host model file records: target platform, producer, config, custom string.");
}
