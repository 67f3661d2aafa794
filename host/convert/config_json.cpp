#include "config_json.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rknnxx::host {

namespace {

using toolkit::Config;
using toolkit::ConfigError;
// One JSON type for reading and writing: each basic_json type instantiates its own parser and
// serializer, and under the sanitizers a second one doubled this file's compile time. Ordered, so
// that a written config keeps config()'s order of keys and a read one is checked in the file's order.
using json = nlohmann::ordered_json;

// Keys of build() that users put into a config file by habit; named in their own message.
constexpr std::array<std::string_view, 3> build_keys{"do_quantization", "dataset", "rknn_batch_size"};

// "a string ("yes")", "a number (2.5)", "an array", ...: what the file holds, for messages.
// Only scalars are printed: dump() recurses, and a hostile file may nest arrays a million deep.
std::string describe(const json& j) {
  std::string text = j.is_primitive() ? j.dump(-1, ' ', false, json::error_handler_t::replace) : std::string();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return fmt::format("a string ({})", text);
    case json::value_t::boolean: return fmt::format("a boolean ({})", text);
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return fmt::format("an integer ({})", text);
    case json::value_t::number_float: return fmt::format("a number ({})", text);
    default: return "an unsupported value";
  }
}

// Names from the file (keys, op_target names) in messages are cut to 64 bytes, so that a
// megabyte-long key does not become a megabyte-long message.
constexpr std::size_t shown_name_bytes = 64;

std::string cut_suffix(std::string_view name) {
  return name.size() > shown_name_bytes ? fmt::format("... ({} bytes)", name.size()) : std::string();
}

// "op_target['conv1']": the name as it is.
std::string shortened(std::string_view name) {
  return std::string(name.substr(0, shown_name_bytes)) + cut_suffix(name);
}

// "\"mean_value\"": the name JSON-escaped.
std::string quoted_name(std::string_view name) {
  return json(std::string(name.substr(0, shown_name_bytes))).dump(-1, ' ', false, json::error_handler_t::replace) +
      cut_suffix(name);
}

[[noreturn]] void wrong_type(std::string_view key, std::string_view path, const json& j, std::string_view expected) {
  throw ConfigError(std::string(key), fmt::format("config: {} is {}; expected {}", path, describe(j), expected));
}

// One key's value with its path ("mean_values[1][2]") for messages.
struct Value {
  std::string_view key;
  std::string path;
  const json& j;

  Value at(std::size_t i, const json& element) const { return {key, fmt::format("{}[{}]", path, i), element}; }

  bool boolean() const {
    if (!j.is_boolean()) wrong_type(key, path, j, "true or false");
    return j.get<bool>();
  }
  double number() const {
    if (!j.is_number()) wrong_type(key, path, j, "a number");
    return j.get<double>();
  }
  std::int64_t integer(std::string_view expected = "an integer") const {
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
      throw ConfigError(std::string(key), fmt::format("config: {} is {}; out of range", path, describe(j)));
    if (!j.is_number_integer()) wrong_type(key, path, j, expected);
    return j.get<std::int64_t>();
  }
  std::string string(std::string_view expected = "a string") const {
    if (!j.is_string()) wrong_type(key, path, j, expected);
    return j.get<std::string>();
  }
  template <class E> E name() const {
    const std::string expected = fmt::format("one of {}", toolkit::valid_names<E>());
    std::string text = string(fmt::format("a string, {}", expected));
    auto v = toolkit::parse_name<E>(text);
    if (!v)
      throw ConfigError(std::string(key),
                        fmt::format("config: {} is '{}'; expected {}", path, shortened(text), expected));
    return *v;
  }
  const json& array(std::string_view expected) const {
    if (!j.is_array()) wrong_type(key, path, j, expected);
    return j;
  }
};

std::vector<double> numbers(const Value& v) {
  std::vector<double> out;
  const json& a = v.array("a list of numbers, one per channel");
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(v.at(i, a[i]).number());
  return out;
}

// [[m, m, m], ...] one list per input, or [m, m, m] for a single input.
std::vector<std::vector<double>> per_input_numbers(const Value& v) {
  const json& a = v.array("a list with one list of numbers per input (or, for one input, a list of numbers)");
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](const json& e) { return e.is_number(); })) return {numbers(v)};
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Value e = v.at(i, a[i]);
    if (!a[i].is_array()) wrong_type(v.key, e.path, a[i], "a list of numbers, one per channel of that input");
    out.push_back(numbers(e));
  }
  return out;
}

std::vector<bool> booleans_per_input(const Value& v) {
  if (v.j.is_boolean()) return v.j.get<bool>() ? std::vector<bool>{true} : std::vector<bool>{};
  const json& a = v.array("true, false or a list with one of them per input");
  std::vector<bool> out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(v.at(i, a[i]).boolean());
  return out;
}

toolkit::DynamicInput dynamic_shapes(const Value& v) {
  constexpr std::string_view form = "[[input0_shape, input1_shape, ...], [input0_shape, ...], ...]";
  const json& groups = v.array(fmt::format("a list of shape groups, {}", form));
  toolkit::DynamicInput out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Value group = v.at(g, groups[g]);
    if (!groups[g].is_array())
      wrong_type(v.key, group.path, groups[g], fmt::format("a group with one shape per input, as in {}", form));
    toolkit::ShapeGroup shapes;
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      const Value shape = group.at(i, groups[g][i]);
      if (!groups[g][i].is_array())
        wrong_type(v.key, shape.path, groups[g][i], fmt::format("a shape (a list of integers), as in {}", form));
      toolkit::Shape dims;
      for (std::size_t d = 0; d < groups[g][i].size(); ++d) dims.push_back(shape.at(d, groups[g][i][d]).integer());
      shapes.push_back(std::move(dims));
    }
    out.push_back(std::move(shapes));
  }
  return out;
}

// [{"op_type": "MyOp", "domain": "my.domain"}, ...]; domain may be left out for the default domain.
std::vector<toolkit::CustomOpType> custom_op_types(const Value& v) {
  constexpr std::string_view form = R"([{"op_type": "MyOp", "domain": "my.domain"}, ...])";
  const json& list = v.array(fmt::format("a list of operators, {}", form));
  std::vector<toolkit::CustomOpType> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Value op = v.at(i, list[i]);
    if (!list[i].is_object()) wrong_type(v.key, op.path, list[i], fmt::format("an object, as in {}", form));
    toolkit::CustomOpType type;
    bool has_type = false;
    for (const auto& [field, value] : list[i].items()) {
      const Value member{v.key, fmt::format("{}.{}", op.path, shortened(field)), value};
      if (field == "op_type") {
        type.op_type = member.string();
        has_type = true;
      } else if (field == "domain") {
        type.domain = member.string();
      } else {
        throw ConfigError(std::string(v.key),
                          fmt::format("config: {} has the unknown key {}; expected op_type and "
                                      "domain",
                                      op.path, quoted_name(field)));
      }
    }
    if (!has_type) throw ConfigError(std::string(v.key), fmt::format("config: {} has no op_type", op.path));
    out.push_back(std::move(type));
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1,
           diagonal + (toolkit::detail::ascii_lower(a[i - 1]) == toolkit::detail::ascii_lower(b[j - 1]) ? 0U : 1U)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

[[noreturn]] void unknown_key(const std::string& key) {
  for (std::string_view k : build_keys)
    if (key == k)
      throw ConfigError(key,
                        fmt::format("config: '{}' is a parameter of build(), not of config(); give it to the "
                                    "converter separately, not in the config file",
                                    key));
  std::string_view nearest;
  std::size_t best = 4;  // suggest only close misspellings
  std::vector<std::string_view> valid(Config::keys.begin(), Config::keys.end());
  valid.insert(valid.end(), Config::extension_keys.begin(), Config::extension_keys.end());
  for (std::string_view k : valid)
    if (key.size() >= k.size() + best || k.size() >= key.size() + best) {
      continue;  // the distance is at least the difference in length: no suggestion, and no time spent on a huge key
    } else if (std::size_t d = edit_distance(key, k); d < best) {
      best = d;
      nearest = k;
    }
  throw ConfigError(key,
                    fmt::format("config: unknown key {}{}; valid keys: {}", quoted_name(key),
                                nearest.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", nearest),
                                fmt::join(valid, ", ")));
}

void read_key(Config& c, const std::string& key, const json& j) {
  const Value v{key, key, j};
  const bool null = j.is_null();
  if (key == "mean_values") {
    c.mean_values = null ? std::nullopt : std::optional(per_input_numbers(v));
  } else if (key == "std_values") {
    c.std_values = null ? std::nullopt : std::optional(per_input_numbers(v));
  } else if (key == "quant_img_RGB2BGR") {
    c.quant_img_RGB2BGR = null ? std::vector<bool>{} : booleans_per_input(v);
  } else if (key == "quantized_dtype") {
    c.quantized_dtype = null ? std::nullopt : std::optional(v.name<toolkit::QuantizedDtype>());
  } else if (key == "quantized_algorithm") {
    c.quantized_algorithm = null ? std::nullopt : std::optional(v.name<toolkit::QuantizedAlgorithm>());
  } else if (key == "quantized_method") {
    if (null) {
      c.quantized_method.reset();
      return;
    }
    constexpr std::string_view expected = "layer, channel or group{SIZE} (SIZE a multiple of 32 from 32 to 256)";
    std::string text = v.string(fmt::format("a string: {}", expected));
    c.quantized_method = toolkit::QuantizedMethod::parse(text);
    if (!c.quantized_method)
      throw ConfigError(key, fmt::format("config: quantized_method is '{}'; expected {}", shortened(text), expected));
  } else if (key == "float_dtype") {
    c.float_dtype = v.name<toolkit::FloatDtype>();
  } else if (key == "optimization_level") {
    std::int64_t level = v.integer("an integer, 0 to 3");
    c.optimization_level = static_cast<int>(std::clamp<std::int64_t>(level, INT_MIN, INT_MAX));
    if (level != c.optimization_level)
      throw ConfigError(key, fmt::format("config: optimization_level is {}; expected 0, 1, 2 or 3", level));
  } else if (key == "target_platform") {
    c.target_platform = null ? std::nullopt : std::optional(v.name<toolkit::Platform>());
  } else if (key == "custom_string") {
    c.custom_string = null ? std::nullopt : std::optional(v.string());
  } else if (key == "remove_weight") {
    c.remove_weight = v.boolean();
  } else if (key == "compress_weight") {
    c.compress_weight = v.boolean();
  } else if (key == "single_core_mode") {
    c.single_core_mode = v.boolean();
  } else if (key == "model_pruning") {
    c.model_pruning = v.boolean();
  } else if (key == "op_target") {
    c.op_target.clear();
    if (null) return;
    if (!j.is_object()) wrong_type(key, key, j, "an object {\"tensor name or op type\": \"cpu\", ...}");
    for (const auto& [name, target] : j.items())
      c.op_target[name] = Value{key, fmt::format("op_target['{}']", shortened(name)), target}.name<toolkit::OpTarget>();
  } else if (key == "dynamic_input") {
    c.dynamic_input = null ? std::nullopt : std::optional(dynamic_shapes(v));
  } else if (key == "quantize_weight") {
    c.quantize_weight = v.boolean();
  } else if (key == "remove_reshape") {
    c.remove_reshape = v.boolean();
  } else if (key == "sparse_infer") {
    c.sparse_infer = v.boolean();
  } else if (key == "enable_flash_attention") {
    c.enable_flash_attention = v.boolean();
  } else if (key == "auto_hybrid_cos_thresh") {
    c.auto_hybrid_cos_thresh = v.number();
  } else if (key == "auto_hybrid_euc_thresh") {
    c.auto_hybrid_euc_thresh = null ? std::nullopt : std::optional(v.number());
  } else if (key == "memory_plan_strategy") {
    c.memory_plan_strategy = v.name<toolkit::MemoryPlanStrategy>();
  } else if (key == "compute_order") {
    c.compute_order = v.name<toolkit::ComputeOrder>();
  } else if (key == "custom_ops") {
    c.custom_ops = null ? std::vector<toolkit::CustomOpType>{} : custom_op_types(v);
  } else {
    unknown_key(key);
  }
}

template <class Json> Json numbers_json(const std::vector<std::vector<double>>& lists) {
  Json out = Json::array();
  for (const auto& l : lists) out.push_back(l);
  return out;
}

template <class Json> Json shapes_json(const toolkit::DynamicInput& groups) {
  Json out = Json::array();
  for (const auto& g : groups) {
    Json shapes = Json::array();
    for (const auto& s : g) shapes.push_back(s);
    out.push_back(std::move(shapes));
  }
  return out;
}

template <class Json> std::string dump(const Json& j, int indent) {
  // replace: a custom string or op_target name set from C++ may hold bytes that are not UTF-8.
  return j.dump(indent < 0 ? -1 : indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

toolkit::Config config_from_json(std::string_view json_text) {
  // A key given twice in one object is refused: the parser would keep the last silently, and which of
  // two values the author meant cannot be known. One set of keys per object being read.
  std::vector<std::unordered_set<std::string>> open_objects;
  std::string top_level_key;  // the parameter a nested object belongs to (op_target)
  auto refuse_duplicates = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      const auto& key = parsed.get_ref<const std::string&>();
      const bool top_level = open_objects.size() == 1;
      if (top_level) top_level_key = key;
      if (!open_objects.back().insert(key).second)
        throw ConfigError(top_level_key,
                          top_level
                              ? fmt::format("config: the key {} is given twice; give each key once", quoted_name(key))
                              : fmt::format("config: {} gives the key {} twice; give each key once",
                                            quoted_name(top_level_key), quoted_name(key)));
    }
    return true;
  };
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end(), refuse_duplicates);
  } catch (const json::exception& e) {
    // parse_error for syntax, out_of_range for a number beyond double ("1e999"); both are the file's fault.
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 3: ..."
    if (auto close = what.find("] "); what.starts_with("[json.exception") && close != std::string::npos)
      what.erase(0, close + 2);
    throw ConfigError("", fmt::format("config: not valid JSON: {}", what));
  }
  if (!root.is_object())
    throw ConfigError("", fmt::format("config: expected a JSON object of config() parameters, got {}", describe(root)));
  Config c;
  for (const auto& [key, value] : root.items()) read_key(c, key, value);
  c.validate();
  return c;
}

toolkit::Config load_config_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("", fmt::format("config: cannot open '{}': {}", path.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return config_from_json(text.str());
  } catch (const ConfigError& e) {
    std::string message = e.what();
    constexpr std::string_view prefix = "config: ";
    if (message.starts_with(prefix)) message.insert(prefix.size(), fmt::format("'{}': ", path.string()));
    throw ConfigError(e.key(), message);
  }
}

std::string config_to_json(const toolkit::Config& c, ConfigJsonFor purpose, int indent) {
  using toolkit::spelling;
  json j;
  j["mean_values"] = c.mean_values ? numbers_json<json>(*c.mean_values) : json();
  j["std_values"] = c.std_values ? numbers_json<json>(*c.std_values) : json();
  if (purpose == ConfigJsonFor::config_file) {
    if (c.quant_img_RGB2BGR.empty()) {
      j["quant_img_RGB2BGR"] = false;
    } else {
      json flags = json::array();
      for (bool b : c.quant_img_RGB2BGR) flags.push_back(b);
      j["quant_img_RGB2BGR"] = std::move(flags);
    }
  }
  j["quantized_dtype"] = c.quantized_dtype ? json(spelling(*c.quantized_dtype)) : json();
  j["quantized_algorithm"] = c.quantized_algorithm ? json(spelling(*c.quantized_algorithm)) : json();
  j["quantized_method"] = c.quantized_method ? json(c.quantized_method->name()) : json();
  j["float_dtype"] = spelling(c.float_dtype);
  j["optimization_level"] = c.optimization_level;
  j["target_platform"] = c.target_platform ? json(toolkit::spelling(*c.target_platform)) : json();
  j["custom_string"] = c.custom_string ? json(*c.custom_string) : json();
  j["remove_weight"] = c.remove_weight;
  j["compress_weight"] = c.compress_weight;
  j["single_core_mode"] = c.single_core_mode;
  j["model_pruning"] = c.model_pruning;
  if (c.op_target.empty()) {
    j["op_target"] = nullptr;
  } else {
    json targets = json::object();
    for (const auto& [name, target] : c.op_target) targets[name] = spelling(target);
    j["op_target"] = std::move(targets);
  }
  j["dynamic_input"] = c.dynamic_input ? shapes_json<json>(*c.dynamic_input) : json();
  j["quantize_weight"] = c.quantize_weight;
  j["remove_reshape"] = c.remove_reshape;
  j["sparse_infer"] = c.sparse_infer;
  j["enable_flash_attention"] = c.enable_flash_attention;
  j["auto_hybrid_cos_thresh"] = c.auto_hybrid_cos_thresh;
  j["auto_hybrid_euc_thresh"] = c.auto_hybrid_euc_thresh ? json(*c.auto_hybrid_euc_thresh) : json();
  j["memory_plan_strategy"] = spelling(c.memory_plan_strategy);
  j["compute_order"] = spelling(c.compute_order);
  if (!c.custom_ops.empty()) {  // only when used: configs and models without it read as before
    json ops = json::array();
    for (const auto& op : c.custom_ops) ops.push_back({{"op_type", op.op_type}, {"domain", op.domain}});
    j["custom_ops"] = std::move(ops);
  }
  return dump(j, indent);
}

std::string model_file_metadata_json(const ModelFile& m, int indent) {
  using toolkit::spelling;
  json j;
  j["format"] = "rknnxx host model";
  j["format_version"] = model_file_version;
  j["producer"] = m.producer;
  j["target_platform"] = toolkit::spelling(m.target_platform);
  j["float_dtype"] = spelling(m.float_dtype);
  j["custom_string"] = m.custom_string ? json(*m.custom_string) : json();
  json prep = json::array();
  for (const InputPreprocess& p : m.preprocess) prep.push_back({{"mean", p.mean}, {"std", p.std}});
  j["preprocess"] = std::move(prep);
  j["dynamic_input"] = m.dynamic_input ? shapes_json<json>(*m.dynamic_input) : json();
  const auto max_shape = m.dynamic_input ? toolkit::max_shape_index(*m.dynamic_input) : std::nullopt;
  j["max_shape_group"] = max_shape ? json(*max_shape) : json();
  if (m.quantization) {
    const ModelQuantization& q = *m.quantization;
    j["quantization"] = {{"dtype", spelling(q.dtype)},
                         {"algorithm", spelling(q.algorithm)},
                         {"method", q.method.name()},
                         {"samples", q.samples},
                         {"tensors", q.tensors.size()}};
  } else {
    j["quantization"] = nullptr;
  }
  j["onnx"] = {{"bytes", m.onnx.size()}, {"crc32", fmt::format("0x{:08x}", crc32(m.onnx))}};
  json extra = json::array();
  for (const ExtraSection& x : m.extra_sections)
    extra.push_back({{"tag", x.tag}, {"required", x.required}, {"bytes", x.payload.size()}});
  j["extra_sections"] = std::move(extra);
  // The recorded config as JSON when it parses, as text otherwise (inspection must not fail on it). A
  // converter writes at most 4 levels; deeper nesting is kept as text, because dump() recurses.
  bool too_deep = false;
  auto depth_limit = [&](int depth, json::parse_event_t, json&) {
    too_deep = too_deep || depth > 16;
    return !too_deep;
  };
  const std::string_view recorded = m.config_json;  // the reader's input type: one parser instantiation
  json config = json::parse(recorded.begin(), recorded.end(), depth_limit, false);
  j["config"] = config.is_discarded() || too_deep ? json(m.config_json) : std::move(config);
  return dump(j, indent);
}

}  // namespace rknnxx::host
