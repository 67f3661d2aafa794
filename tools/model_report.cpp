#include "model_report.hpp"

#include "convert/model_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace rknnxx::tool {

namespace {

std::string_view qnt_name(const rknn_tensor_attr& a) {
  switch (a.qnt_type) {
    case RKNN_TENSOR_QNT_NONE: return "none";
    case RKNN_TENSOR_QNT_DFP: return "dfp";
    case RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC: return "affine_asymmetric";
    default: return "unknown";
  }
}

// The attribute under one query, or why the runtime would not say.
nlohmann::json attr_or_error(const Context& ctx, bool input, std::uint32_t index, AttrQuery q) {
  try {
    return attr_json(input ? ctx.input_info(index, q) : ctx.output_info(index, q));
  } catch (const Error& e) {
    return nlohmann::json{{"error", e.what()}};
  }
}

std::string attr_text(const nlohmann::json& a) {
  if (a.contains("error")) return fmt::format("not reported ({})", a["error"].get<std::string>());
  std::string s = fmt::format("{} {} {}", a["type"].get<std::string>(), a["format"].get<std::string>(),
                              fmt::join(a["dims"].get<std::vector<std::uint32_t>>(), "x"));
  if (a["quantization"]["type"] != "none")
    s += fmt::format(", {} scale {} zero point {}", a["quantization"]["type"].get<std::string>(),
                     a["quantization"]["scale"].get<float>(), a["quantization"]["zero_point"].get<int>());
  s += fmt::format(", {} elements, size {} B, size_with_stride {} B", a["n_elems"].get<std::uint32_t>(),
                   a["size"].get<std::uint32_t>(), a["size_with_stride"].get<std::uint32_t>());
  if (a["w_stride"].get<std::uint32_t>() != 0 || a["h_stride"].get<std::uint32_t>() != 0)
    s += fmt::format(", w_stride {}, h_stride {}", a["w_stride"].get<std::uint32_t>(),
                     a["h_stride"].get<std::uint32_t>());
  if (a["pass_through"].get<bool>()) s += ", pass_through";
  return s;
}

// What only the model file says (the C interface has no query for it): target platform, float
// type, producer and per-input mean/std. A host model's file is read for it; a vendor .rknn
// file cannot be (its format is not public), which the JSON says.
nlohmann::json model_file_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string magic(host::model_file_magic.size(), '\0');
  if (!in.read(magic.data(), static_cast<std::streamsize>(magic.size())) || magic != host::model_file_magic)
    return {{"error",
             "not a host model (.hrknn): the runtime does not report a vendor model's target platform or "
             "normalization"}};
  try {
    const auto file = host::load_model_file(path);
    nlohmann::json preprocess = nlohmann::json::array();
    for (const auto& p : file.preprocess) preprocess.push_back({{"mean", p.mean}, {"std", p.std}});
    return {{"target_platform", std::string(toolkit::spelling(file.target_platform))},
            {"float_dtype", std::string(toolkit::spelling(file.float_dtype))},
            {"producer", file.producer},
            {"preprocess", preprocess},
            // A quantized model's parameters are in its tensors' attributes; this says how they were chosen.
            {"quantization",
             file.quantization
                 ? nlohmann::json{{"dtype", std::string(toolkit::spelling(file.quantization->dtype))},
                                  {"algorithm", std::string(toolkit::spelling(file.quantization->algorithm))},
                                  {"method", file.quantization->method.name()},
                                  {"samples", file.quantization->samples}}
                 : nlohmann::json(nullptr)}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

std::string values_text(const nlohmann::json& values) {
  std::vector<std::string> v;
  for (const auto& x : values) v.push_back(fmt::format("{:g}", x.get<double>()));
  return fmt::format("[{}]", fmt::join(v, ", "));
}

}  // namespace

CoreMask parse_core_mask(std::string_view text) {
  for (const auto& [name, mask] : core_masks)
    if (name == text) return mask;
  throw UsageError(fmt::format("--core-mask {}: not a core mask (auto, 0, 1, 2, 0_1, 0_1_2 or all)", text));
}

Context open_model(const std::string& path, ContextOptions options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw std::runtime_error(fmt::format("{}: no such model file", path));
  if (!std::filesystem::is_regular_file(path, ec)) throw std::runtime_error(fmt::format("{}: not a model file", path));
  if (!std::ifstream(path, std::ios::binary)) throw std::runtime_error(fmt::format("{}: cannot be read", path));
  return Context::from_file(path, std::move(options));
}

std::string runtime_line(const Context& ctx) {
  const auto& rt = ctx.runtime();
  const auto v = ctx.sdk_version();
  return fmt::format("runtime: {} ({}), SDK {}, driver {}", rt.is_host() ? "host" : "vendor", rt.path(), v.api,
                     v.driver);
}

nlohmann::json attr_json(const TensorInfo& info) {
  const auto& a = info.abi();
  const Dims d = info.dims();
  return {
      {"index", a.index},
      {"name", std::string(info.name())},
      {"dims", std::vector<std::uint32_t>(d.begin(), d.end())},
      {"format", std::string(name_of(info.format()))},
      {"type", std::string(name_of(info.type()))},
      {"quantization", {{"type", std::string(qnt_name(a))}, {"scale", a.scale}, {"zero_point", a.zp}, {"fl", a.fl}}},
      {"n_elems", a.n_elems},
      {"size", a.size},
      {"size_with_stride", a.size_with_stride},
      {"w_stride", a.w_stride},
      {"h_stride", a.h_stride},
      {"pass_through", a.pass_through != 0}};
}

nlohmann::json model_json(const Context& ctx, const std::string& path) {
  const auto& rt = ctx.runtime();
  const auto v = ctx.sdk_version();
  nlohmann::json j;
  j["model"] = path;
  std::error_code ec;
  j["model_bytes"] = std::filesystem::file_size(path, ec);
  j["runtime"] = {{"kind", rt.is_host() ? "host" : "vendor"}, {"path", rt.path()}};
  j["sdk_version"] = {{"api", v.api}, {"driver", v.driver}};
  try {
    const auto m = ctx.mem_size();
    j["memory"] = {{"total_weight_size", m.total_weight_size},
                   {"total_internal_size", m.total_internal_size},
                   {"total_dma_allocated_size", m.total_dma_allocated_size},
                   {"total_sram_size", m.total_sram_size},
                   {"free_sram_size", m.free_sram_size}};
  } catch (const Error& e) {
    j["memory"] = {{"error", e.what()}};
  }
  try {
    j["custom_string"] = ctx.custom_string();
  } catch (const Error& e) {
    j["custom_string"] = nullptr;
    j["custom_string_error"] = e.what();
  }
  const auto tensors = [&](bool input) {
    nlohmann::json list = nlohmann::json::array();
    const std::uint32_t n = input ? ctx.num_inputs() : ctx.num_outputs();
    for (std::uint32_t i = 0; i < n; ++i)
      list.push_back({{"normal", attr_or_error(ctx, input, i, AttrQuery::normal)},
                      {"native", attr_or_error(ctx, input, i, AttrQuery::native)},
                      {"native_nhwc", attr_or_error(ctx, input, i, AttrQuery::native_nhwc)}});
    return list;
  };
  j["model_file"] = model_file_json(path);
  j["inputs"] = tensors(true);
  j["outputs"] = tensors(false);
  if (const auto& set = ctx.shape_set()) {
    nlohmann::json groups = nlohmann::json::array();
    for (std::size_t g = 0; g < set->num_shapes(); ++g) {
      nlohmann::json group = nlohmann::json::array();
      for (std::size_t i = 0; i < set->num_inputs(); ++i) {
        const Dims& d = set->shape(g, i);
        group.push_back(std::vector<std::uint32_t>(d.begin(), d.end()));
      }
      groups.push_back(group);
    }
    j["dynamic_shapes"] = groups;
  } else {
    j["dynamic_shapes"] = nullptr;
  }
  return j;
}

std::string model_text(const nlohmann::json& j) {
  std::string s;
  const auto line = [&](std::string text) { s += text + '\n'; };
  line(fmt::format("model:    {} ({} bytes)", j["model"].get<std::string>(), j["model_bytes"].get<std::uint64_t>()));
  line(fmt::format("runtime:  {} ({})", j["runtime"]["kind"].get<std::string>(),
                   j["runtime"]["path"].get<std::string>()));
  line(fmt::format("SDK:      {}", j["sdk_version"]["api"].get<std::string>()));
  line(fmt::format("driver:   {}", j["sdk_version"]["driver"].get<std::string>()));
  const auto& m = j["memory"];
  if (m.contains("error")) line(fmt::format("memory:   not reported ({})", m["error"].get<std::string>()));
  else
    line(fmt::format("memory:   weights {} B, internal {} B, DMA allocated {} B, SRAM {} B ({} B free)",
                     m["total_weight_size"].get<std::uint64_t>(), m["total_internal_size"].get<std::uint64_t>(),
                     m["total_dma_allocated_size"].get<std::uint64_t>(), m["total_sram_size"].get<std::uint64_t>(),
                     m["free_sram_size"].get<std::uint64_t>()));
  line(fmt::format("custom string: {}",
                   j["custom_string"].is_null() ? std::string("(not reported)")
                       : j["custom_string"].get<std::string>().empty()
                       ? std::string("(empty)")
                       : fmt::format("\"{}\"", j["custom_string"].get<std::string>())));
  if (const auto& f = j["model_file"]; f.contains("error")) {
    line(fmt::format("target:   not reported ({})", f["error"].get<std::string>()));
  } else {
    const auto& q = f["quantization"];
    line(fmt::format("target:   {} ({} model made by {})", f["target_platform"].get<std::string>(),
                     q.is_null() ? f["float_dtype"].get<std::string>()
                         : q["samples"].get<std::uint32_t>() == 0  // a QDQ model's parameters (docs/quantization.md)
                         ? fmt::format("{} (from QuantizeLinear/DequantizeLinear pairs)", q["dtype"].get<std::string>())
                         : fmt::format("{} ({} on {} samples, weights per {})", q["dtype"].get<std::string>(),
                                       q["algorithm"].get<std::string>(), q["samples"].get<std::uint32_t>(),
                                       q["method"].get<std::string>()),
                     f["producer"].get<std::string>()));
    if (f["preprocess"].empty()) line("mean/std: none (inputs are fed to the model as given)");
    for (std::size_t i = 0; i < f["preprocess"].size(); ++i)
      line(fmt::format("mean/std: input {}: mean {}, std {}", i, values_text(f["preprocess"][i]["mean"]),
                       values_text(f["preprocess"][i]["std"])));
  }
  for (const char* io : {"inputs", "outputs"}) {
    line(fmt::format("{} ({}):", io, j[io].size()));
    for (const auto& t : j[io]) {
      const auto& n = t["normal"];
      line(fmt::format("  {} \"{}\"", n.value("index", 0U), n.value("name", std::string())));
      line(fmt::format("    normal:      {}", attr_text(n)));
      line(fmt::format("    native:      {}", attr_text(t["native"])));
      line(fmt::format("    native NHWC: {}", attr_text(t["native_nhwc"])));
    }
  }
  if (j["dynamic_shapes"].is_null()) {
    line("dynamic shapes: none (static model)");
  } else {
    line(fmt::format("dynamic shapes ({} groups, dims as the runtime orders them):", j["dynamic_shapes"].size()));
    std::size_t g = 0;
    for (const auto& group : j["dynamic_shapes"]) {
      std::vector<std::string> shapes;
      for (const auto& d : group)
        shapes.push_back(fmt::format("{}", fmt::join(d.get<std::vector<std::uint32_t>>(), "x")));
      line(fmt::format("  group {}: {}", g++, fmt::join(shapes, ", ")));
    }
  }
  return s;
}

}  // namespace rknnxx::tool
