// rknnxx._converter: the host converter (host/converter.hpp, what `rknnxx convert` runs) for
// rknnxx.toolkit (docs/python.md). Built only with the host runtime. Conversion errors (a config
// key, an unsupported operator, an unreadable model) come out as RuntimeError with the converter's
// message; the GIL is released while it works.

#include "converter.hpp"
#include "convert/config_json.hpp"
#include "model_file.hpp"

#include <rknnxx/toolkit/config.hpp>

#include <pybind11/pybind11.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

std::span<const std::byte> bytes_of(const py::buffer_info& b) {
  return {static_cast<const std::byte*>(b.ptr), static_cast<std::size_t>(b.size * b.itemsize)};
}

py::bytes to_bytes(const std::vector<std::byte>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

} // namespace

PYBIND11_MODULE(_converter, m) {
  using namespace rknnxx;
  m.doc() = "The host converter: ONNX + the toolkit's config -> a host model (rknnxx convert)";

  m.def("convert", [](const py::buffer& onnx, const std::string& config_json) {
        const py::buffer_info in = onnx.request();
        std::vector<std::byte> file;
        {
          py::gil_scoped_release nogil;
          const toolkit::Config config = host::config_from_json(config_json);
          file = host::serialize_model_file(host::convert_onnx(bytes_of(in), config).file);
        }
        return to_bytes(file);
      }, py::arg("onnx"), py::arg("config_json"),
      "Converts ONNX bytes with a CONFIG.json text (the toolkit's config keys) into the bytes of a host model.");

  m.def("model_info", [](const py::buffer& model) {
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
      }, py::arg("model"), "What a host model file records: target platform, producer, config, custom string.");
}
