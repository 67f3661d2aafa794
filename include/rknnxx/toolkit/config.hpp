#pragma once
// The model-conversion configuration of the vendor toolkit (its config() call) as a validated C++ value.
//
// Every parameter keeps the toolkit's name and default, so a CONFIG.json written for the vendor tool reads
// into this type unchanged (the JSON reader lives on the host side, host/convert/config_json.hpp).
// Checking happens in two steps because half of the rules need the model:
//   check()/validate()                  rules that hold for every model (values, ranges, platform limits,
//                                       dynamic_input consistency, agreement between per-input lists);
//   check_against()/validate_against()  everything above plus the per-input rules (one mean/std list per
//                                       model input, one value per channel, ranks and fixed axes of the
//                                       dynamic_input shapes).
// check*() return every problem found; validate*() throw ConfigError for the first one.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/error.hpp>
#include <rknnxx/core/platform.hpp>

#include <rknnxx/core/fmt_core.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rknnxx::toolkit {

// The chips the toolkit's target_platform accepts: the library's platform type. The toolkit spells
// it its own way (spelling(): "rk3588"), beside core's name_of(), which names chips as the
// runtime's documents do ("RK3588"); two function names, so that neither hides the other.
using Platform = rknnxx::Platform;

enum class QuantizedDtype : std::uint8_t { w8a8, w4a16, w8a16, w16a16i_dfp };
enum class QuantizedAlgorithm : std::uint8_t { normal, mmse, kl_divergence, gdq };
enum class FloatDtype : std::uint8_t { float16 };
enum class MemoryPlanStrategy : std::uint8_t { BestFit, GreedyBySize, GreedyByLifetime, SlowPeakGrowth };
enum class ComputeOrder : std::uint8_t { WidthFirst, DepthFirst };
// op_target's values; `auto` is a C++ keyword, hence `automatic` (spelled "auto" in names and JSON).
enum class OpTarget : std::uint8_t { cpu, npu, gpu, automatic };

namespace detail {
template <class E, std::size_t N> using NameTable = std::array<std::pair<E, std::string_view>, N>;

template <class E> struct EnumNames;
template <> struct EnumNames<Platform> {
  static constexpr NameTable<Platform, 11> table{{{Platform::rv1103, "rv1103"},
                                                  {Platform::rv1103b, "rv1103b"},
                                                  {Platform::rv1106, "rv1106"},
                                                  {Platform::rv1106b, "rv1106b"},
                                                  {Platform::rv1126b, "rv1126b"},
                                                  {Platform::rk2118, "rk2118"},
                                                  {Platform::rk3562, "rk3562"},
                                                  {Platform::rk3566, "rk3566"},
                                                  {Platform::rk3568, "rk3568"},
                                                  {Platform::rk3576, "rk3576"},
                                                  {Platform::rk3588, "rk3588"}}};
};
template <> struct EnumNames<QuantizedDtype> {
  static constexpr NameTable<QuantizedDtype, 4> table{{{QuantizedDtype::w8a8, "w8a8"},
                                                       {QuantizedDtype::w4a16, "w4a16"},
                                                       {QuantizedDtype::w8a16, "w8a16"},
                                                       {QuantizedDtype::w16a16i_dfp, "w16a16i_dfp"}}};
};
template <> struct EnumNames<QuantizedAlgorithm> {
  static constexpr NameTable<QuantizedAlgorithm, 4> table{{{QuantizedAlgorithm::normal, "normal"},
                                                           {QuantizedAlgorithm::mmse, "mmse"},
                                                           {QuantizedAlgorithm::kl_divergence, "kl_divergence"},
                                                           {QuantizedAlgorithm::gdq, "gdq"}}};
};
template <> struct EnumNames<FloatDtype> {
  static constexpr NameTable<FloatDtype, 1> table{{{FloatDtype::float16, "float16"}}};
};
template <> struct EnumNames<MemoryPlanStrategy> {
  static constexpr NameTable<MemoryPlanStrategy, 4> table{{{MemoryPlanStrategy::BestFit, "BestFit"},
                                                           {MemoryPlanStrategy::GreedyBySize, "GreedyBySize"},
                                                           {MemoryPlanStrategy::GreedyByLifetime, "GreedyByLifetime"},
                                                           {MemoryPlanStrategy::SlowPeakGrowth, "SlowPeakGrowth"}}};
};
template <> struct EnumNames<ComputeOrder> {
  static constexpr NameTable<ComputeOrder, 2> table{
      {{ComputeOrder::WidthFirst, "WidthFirst"}, {ComputeOrder::DepthFirst, "DepthFirst"}}};
};
template <> struct EnumNames<OpTarget> {
  static constexpr NameTable<OpTarget, 4> table{
      {{OpTarget::cpu, "cpu"}, {OpTarget::npu, "npu"}, {OpTarget::gpu, "gpu"}, {OpTarget::automatic, "auto"}}};
};

constexpr char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool equal_ignoring_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}
}  // namespace detail

// The toolkit's spelling of an enumerator ("rk3588", "w8a8", "BestFit", "auto").
template <class E> constexpr std::string_view spelling(E value) noexcept {
  for (const auto& [v, n] : detail::EnumNames<E>::table)
    if (v == value) return n;
  return "?";
}

// Reads the toolkit's spelling exactly; platform names also in upper case ("RK3588"), as the vendor's
// documents write chip names that way.
template <class E> constexpr std::optional<E> parse_name(std::string_view text) noexcept {
  for (const auto& [v, n] : detail::EnumNames<E>::table)
    if (n == text) return v;
  if constexpr (std::is_same_v<E, Platform>) {
    for (const auto& [v, n] : detail::EnumNames<E>::table)
      if (detail::equal_ignoring_case(n, text)) return v;
  }
  return std::nullopt;
}

// Every value of one of the enums above, in the toolkit's documented order.
template <class E> constexpr auto all_values() noexcept {
  std::array<E, detail::EnumNames<E>::table.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = detail::EnumNames<E>::table[i].first;
  return out;
}

// "a, b, c": every accepted spelling, for error messages.
template <class E> std::string valid_names() {
  std::string out;
  for (const auto& [v, n] : detail::EnumNames<E>::table) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// quantized_method: "layer", "channel" or "group{SIZE}" (SIZE a multiple of 32 in 32..256, w4a16 only).
// parse() takes any "group<digits>" so that check() can say what is wrong with the size.
struct QuantizedMethod {
  enum class Kind : std::uint8_t { layer, channel, group };
  Kind kind = Kind::channel;
  std::uint32_t group_size = 0;  // meaningful only when kind == group

  static constexpr QuantizedMethod layer() noexcept { return {Kind::layer, 0}; }
  static constexpr QuantizedMethod channel() noexcept { return {Kind::channel, 0}; }
  static constexpr QuantizedMethod group(std::uint32_t size) noexcept { return {Kind::group, size}; }

  static constexpr std::optional<QuantizedMethod> parse(std::string_view text) noexcept {
    if (text == "layer") return layer();
    if (text == "channel") return channel();
    constexpr std::string_view prefix = "group";
    if (text.size() <= prefix.size() || text.size() > prefix.size() + 6 || text.substr(0, prefix.size()) != prefix)
      return std::nullopt;
    std::uint32_t size = 0;
    for (char c : text.substr(prefix.size())) {
      if (c < '0' || c > '9') return std::nullopt;
      size = size * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return group(size);
  }
  [[nodiscard]] std::string name() const {
    switch (kind) {
      case Kind::layer: return "layer";
      case Kind::channel: return "channel";
      case Kind::group: break;
    }
    return fmt::format("group{}", group_size);
  }
  [[nodiscard]] constexpr bool group_size_valid() const noexcept {
    return kind != Kind::group || (group_size >= 32 && group_size <= 256 && group_size % 32 == 0);
  }
  friend constexpr bool operator==(const QuantizedMethod&, const QuantizedMethod&) = default;
};

// Shapes as in the original framework's layout (ONNX: NCHW), as dynamic_input takes them.
using Shape = std::vector<std::int64_t>;
using ShapeGroup = std::vector<Shape>;         // one shape per model input
using DynamicInput = std::vector<ShapeGroup>;  // the groups: [[in0_A, in1_A], [in0_B, in1_B], ...]

// Limits of the runtime's rknn_input_range (RKNN_MAX_DYNAMIC_SHAPE_NUM, RKNN_MAX_DIMS; dims are uint32_t).
inline constexpr std::size_t max_dynamic_shape_groups = 512;
inline constexpr std::size_t max_rank = 16;
// rknn_custom_string is char[1024] and holds the NUL.
inline constexpr std::size_t custom_string_capacity = 1024;

// One problem found by check(): the config key it concerns and a complete message ("config: ...").
struct ConfigProblem {
  std::string key;
  std::string message;
  friend bool operator==(const ConfigProblem&, const ConfigProblem&) = default;
};

// Thrown by validate*() and by the JSON reader: an rknnxx::Error (RKNN_ERR_PARAM_INVALID, call "config"),
// so one catch of rknnxx::Error takes every error of the library. key() is the parameter the problem is
// about (empty when it is not about one key, e.g. JSON syntax). what() is the message alone ("config:
// ..."), as the toolkit's ValueError prints it: a config problem is not a runtime return code.
class ConfigError : public Error {
public:
  ConfigError(std::string key, const std::string& message)
      : Error(Errc::param_invalid, "config", message), key_(std::move(key)) {}
  explicit ConfigError(const ConfigProblem& problem) : ConfigError(problem.key, problem.message) {}
  [[nodiscard]] const std::string& key() const noexcept { return key_; }
  [[nodiscard]] const char* what() const noexcept override { return message().c_str(); }

private:
  std::string key_;
};

// What check_against() needs to know about one model input.
struct ModelInput {
  std::string name;
  Shape shape;                 // as in the model; a negative dimension is dynamic (symbolic or unknown)
  std::int64_t channels = -1;  // -1: axis 1 of the shape (the ONNX convention N,C,...); axis 0 for rank 1
};

// Checked element count of one shape; nullopt for a non-positive dimension or an overflow.
constexpr std::optional<std::uint64_t> element_count(const Shape& shape) noexcept {
  std::uint64_t n = 1;
  for (std::int64_t d : shape) {
    if (d <= 0) return std::nullopt;
    auto u = static_cast<std::uint64_t>(d);
    if (n > std::numeric_limits<std::uint64_t>::max() / u) return std::nullopt;
    n *= u;
  }
  return n;
}

// MaxShape: the group with the largest sum of input element counts (the first such group on a tie),
// which the toolkit quantizes with and reports eval_perf/eval_memory for. Two inputs with shapes
// [1,224]/[1,112] and [1,40]/[1,80]: group 0 sums 224+40 = 264, group 1 112+80 = 192, so MaxShape is
// group 0. Sums saturate, so an unchecked set still gives an answer; nullopt for an empty set.
constexpr std::optional<std::size_t> max_shape_index(const DynamicInput& groups) noexcept {
  std::optional<std::size_t> best;
  std::uint64_t best_sum = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::uint64_t sum = 0;
    for (const Shape& s : groups[g]) {
      std::uint64_t n = element_count(s).value_or(0);
      sum = n > std::numeric_limits<std::uint64_t>::max() - sum ? std::numeric_limits<std::uint64_t>::max() : sum + n;
    }
    if (!best || sum > best_sum) {
      best = g;
      best_sum = sum;
    }
  }
  return best;
}

namespace detail {
inline std::string count_noun(std::size_t n, std::string_view singular, std::string_view plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

template <std::size_t N> constexpr bool platform_in(Platform p, const std::array<Platform, N>& set) noexcept {
  return std::find(set.begin(), set.end(), p) != set.end();
}

template <std::size_t N> std::string platform_list(const std::array<Platform, N>& set) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i) out += i + 1 == N ? " and " : ", ";
    out += spelling(set[i]);
  }
  return out;
}

// Platform restrictions as the toolkit documents them (RKNN SDK V2.5.0, config()).
inline constexpr std::array<Platform, 2> w4a16_platforms{Platform::rk3576, Platform::rv1126b};
inline constexpr std::array<Platform, 1> w8a16_platforms{Platform::rk3562};
inline constexpr std::array<Platform, 2> w16a16i_dfp_platforms{Platform::rv1103, Platform::rv1106};
inline constexpr std::array<Platform, 2> single_core_platforms{Platform::rk3588, Platform::rk3576};
inline constexpr std::array<Platform, 2> sparse_infer_platforms{Platform::rk3576, Platform::rv1126b};
// Dynamic shape (SDK guide 4.1.3.2): RK3562/RK3566/RK3568/RK3576/RK3588(S)/RV1126B.
inline constexpr std::array<Platform, 6> dynamic_shape_platforms{Platform::rk3562, Platform::rk3566, Platform::rk3568,
                                                                 Platform::rk3576, Platform::rk3588, Platform::rv1126b};

// Rules of a dynamic_input set that hold for every model; `key` prefixes the paths in the messages.
inline void check_dynamic_input(const DynamicInput& groups, std::vector<ConfigProblem>& out,
                                std::string_view key = "dynamic_input") {
  auto add = [&](std::string message) { out.push_back({std::string(key), std::move(message)}); };
  if (groups.empty()) {
    add(fmt::format("config: {} is an empty list; leave it unset for a static model or give at least one group", key));
    return;
  }
  if (groups.size() > max_dynamic_shape_groups)
    add(fmt::format("config: {} has {} groups; the runtime supports at most {} (RKNN_MAX_DYNAMIC_SHAPE_NUM)", key,
                    groups.size(), max_dynamic_shape_groups));
  const ShapeGroup& first = groups.front();
  if (first.empty()) add(fmt::format("config: {}[0] is empty; give one shape per model input", key));
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ShapeGroup& group = groups[g];
    if (group.size() != first.size()) {
      add(fmt::format("config: {}[{}] has {}, {}[0] has {}; every group gives one shape per model input", key, g,
                      count_noun(group.size(), "shape", "shapes"), key, first.size()));
      continue;
    }
    for (std::size_t i = 0; i < group.size(); ++i) {
      const Shape& s = group[i];
      if (s.empty() || s.size() > max_rank) {
        add(fmt::format("config: {}[{}][{}] has rank {}; expected 1 to {} dimensions", key, g, i, s.size(), max_rank));
        continue;
      }
      if (g > 0 && s.size() != first[i].size()) {
        add(fmt::format("config: {}[{}][{}] is {} (rank {}), {}[0][{}] is {} (rank {}); an input keeps its rank in "
                        "every group",
                        key, g, i, dims_text(s), s.size(), key, i, dims_text(first[i]), first[i].size()));
        continue;
      }
      bool dims_ok = true;
      for (std::size_t d = 0; d < s.size(); ++d) {
        if (s[d] <= 0 || s[d] > std::int64_t{std::numeric_limits<std::uint32_t>::max()}) {
          add(fmt::format("config: {}[{}][{}] is {}: dimension {} is {}; dimensions must be positive and fit 32 bits",
                          key, g, i, dims_text(s), d, s[d]));
          dims_ok = false;
          break;
        }
      }
      if (dims_ok && !element_count(s))
        add(fmt::format("config: {}[{}][{}] is {}: more than 2^64 elements", key, g, i, dims_text(s)));
    }
  }
}
}  // namespace detail

// An operator the model holds that the runtime gets from the application (rknn_register_custom_ops)
// instead of implementing it: its ONNX op type and domain ("" is the default domain). The toolkit
// takes these with a call of its own; rknnxx's converters take them as the config key "custom_ops"
// (docs/custom-operators.md), an extension no toolkit config() has.
struct CustomOpType {
  std::string op_type;
  std::string domain;
  friend bool operator==(const CustomOpType&, const CustomOpType&) = default;
};

// rknn_custom_op::op_type is char[256] and holds the NUL.
inline constexpr std::size_t custom_op_type_capacity = 256;

struct Config {
  // Per input, per channel; nullopt (the toolkit's None): means 0, stds 1.
  std::optional<std::vector<std::vector<double>>> mean_values;
  std::optional<std::vector<std::vector<double>>> std_values;
  // Empty: False for every input; one value: that value for every input; otherwise one per input.
  // Used only to read calibration images; never recorded in a converted model.
  std::vector<bool> quant_img_RGB2BGR;
  // Quantization parameters (used by build(do_quantization=True)); nullopt means the toolkit's default,
  // which the effective_*() accessors give. Kept apart from an explicit choice so that a platform whose
  // limits exclude the default (RK2118 and w8a8) still validates when it is not quantized.
  std::optional<QuantizedDtype> quantized_dtype;
  std::optional<QuantizedAlgorithm> quantized_algorithm;
  std::optional<QuantizedMethod> quantized_method;
  FloatDtype float_dtype = FloatDtype::float16;
  int optimization_level = 3;
  std::optional<Platform> target_platform;  // required: None is not a valid value
  std::optional<std::string> custom_string;
  bool remove_weight = false;
  bool compress_weight = false;
  bool single_core_mode = false;
  bool model_pruning = false;
  std::map<std::string, OpTarget> op_target;  // empty: None
  std::optional<DynamicInput> dynamic_input;
  bool quantize_weight = false;
  bool remove_reshape = false;
  bool sparse_infer = false;
  bool enable_flash_attention = false;
  double auto_hybrid_cos_thresh = 0.98;
  std::optional<double> auto_hybrid_euc_thresh;  // nullopt: not enabled
  MemoryPlanStrategy memory_plan_strategy = MemoryPlanStrategy::BestFit;
  ComputeOrder compute_order = ComputeOrder::WidthFirst;
  // rknnxx's extension (extension_keys): operators kept for rknn_register_custom_ops.
  std::vector<CustomOpType> custom_ops;

  // The toolkit's parameter names in the order of its documentation.
  static constexpr std::array<std::string_view, 24> keys{"mean_values",
                                                         "std_values",
                                                         "quant_img_RGB2BGR",
                                                         "quantized_dtype",
                                                         "quantized_algorithm",
                                                         "quantized_method",
                                                         "float_dtype",
                                                         "optimization_level",
                                                         "target_platform",
                                                         "custom_string",
                                                         "remove_weight",
                                                         "compress_weight",
                                                         "single_core_mode",
                                                         "model_pruning",
                                                         "op_target",
                                                         "dynamic_input",
                                                         "quantize_weight",
                                                         "remove_reshape",
                                                         "sparse_infer",
                                                         "enable_flash_attention",
                                                         "auto_hybrid_cos_thresh",
                                                         "auto_hybrid_euc_thresh",
                                                         "memory_plan_strategy",
                                                         "compute_order"};
  // Keys rknnxx adds to the toolkit's, after them in files.
  static constexpr std::array<std::string_view, 1> extension_keys{"custom_ops"};

  [[nodiscard]] QuantizedDtype effective_quantized_dtype() const noexcept {
    return quantized_dtype.value_or(QuantizedDtype::w8a8);
  }
  [[nodiscard]] QuantizedAlgorithm effective_quantized_algorithm() const noexcept {
    return quantized_algorithm.value_or(QuantizedAlgorithm::normal);
  }
  [[nodiscard]] QuantizedMethod effective_quantized_method() const noexcept {
    return quantized_method.value_or(QuantizedMethod::channel());
  }
  // quant_img_RGB2BGR for one input, after the one-value-for-all rule.
  [[nodiscard]] bool rgb2bgr_for(std::size_t input) const noexcept {
    if (quant_img_RGB2BGR.empty()) return false;
    if (quant_img_RGB2BGR.size() == 1) return quant_img_RGB2BGR.front();
    return input < quant_img_RGB2BGR.size() && quant_img_RGB2BGR[input];
  }
  // The MaxShape group of dynamic_input (nullopt for a static model).
  [[nodiscard]] std::optional<std::size_t> max_shape_group() const noexcept {
    return dynamic_input ? max_shape_index(*dynamic_input) : std::nullopt;
  }

  // Every model-independent problem, in key order.
  [[nodiscard]] std::vector<ConfigProblem> check() const;
  // Every problem, including those that need the model's inputs.
  [[nodiscard]] std::vector<ConfigProblem> check_against(std::span<const ModelInput> inputs) const;
  void validate() const { throw_first(check()); }
  void validate_against(std::span<const ModelInput> inputs) const { throw_first(check_against(inputs)); }

  friend bool operator==(const Config&, const Config&) = default;

private:
  static void throw_first(const std::vector<ConfigProblem>& problems) {
    if (!problems.empty()) throw ConfigError(problems.front());
  }
};

namespace detail {
inline void check_per_channel_lists(std::string_view key, const std::vector<std::vector<double>>& lists, bool is_std,
                                    std::vector<ConfigProblem>& out) {
  auto add = [&](std::string message) { out.push_back({std::string(key), std::move(message)}); };
  if (lists.empty()) {
    add(fmt::format("config: {} is an empty list; leave it unset for {} or give one list per input", key,
                    is_std ? "stds of 1" : "means of 0"));
    return;
  }
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (lists[i].empty()) add(fmt::format("config: {}[{}] is empty; give one value per channel", key, i));
    for (std::size_t c = 0; c < lists[i].size(); ++c) {
      double v = lists[i][c];
      if (!std::isfinite(v)) add(fmt::format("config: {}[{}][{}] is {}; values must be finite", key, i, c, v));
      else if (is_std && v == 0.0) add(fmt::format("config: {}[{}][{}] is 0; the input is divided by it", key, i, c));
    }
  }
}

inline std::string input_label(std::span<const ModelInput> inputs, std::size_t i) {
  return inputs[i].name.empty() ? fmt::format("input {}", i) : fmt::format("input {} ('{}')", i, inputs[i].name);
}

inline std::string input_names(std::span<const ModelInput> inputs) {
  std::vector<std::string> names;
  for (const ModelInput& in : inputs) names.push_back(fmt::format("'{}'", in.name));
  return fmt::format("{}", fmt::join(names, ", "));
}

inline bool has_dynamic_dim(const Shape& s) noexcept {
  return std::any_of(s.begin(), s.end(), [](std::int64_t d) { return d < 0; });
}
}  // namespace detail

inline std::vector<ConfigProblem> Config::check() const {
  std::vector<ConfigProblem> out;
  auto add = [&](std::string_view key, std::string message) { out.push_back({std::string(key), std::move(message)}); };

  if (mean_values) detail::check_per_channel_lists("mean_values", *mean_values, false, out);
  if (std_values) detail::check_per_channel_lists("std_values", *std_values, true, out);
  if (mean_values && std_values && !mean_values->empty() && !std_values->empty()) {
    if (mean_values->size() != std_values->size()) {
      add("std_values",
          fmt::format("config: std_values has {} but mean_values has {}; both give one list per input",
                      detail::count_noun(std_values->size(), "list", "lists"), mean_values->size()));
    } else {
      for (std::size_t i = 0; i < mean_values->size(); ++i)
        if ((*std_values)[i].size() != (*mean_values)[i].size() && !(*std_values)[i].empty() &&
            !(*mean_values)[i].empty())
          add("std_values",
              fmt::format("config: std_values[{}] has {} but mean_values[{}] has {}; both give one value per channel",
                          i, detail::count_noun((*std_values)[i].size(), "value", "values"), i,
                          (*mean_values)[i].size()));
    }
  }

  // Every per-input list must agree on the number of inputs (mean against std is reported above).
  struct Count {
    std::string_view key;
    std::string text;
    std::size_t n;
  };
  std::vector<Count> counts;
  if (mean_values && !mean_values->empty())
    counts.push_back({"mean_values", detail::count_noun(mean_values->size(), "list", "lists"), mean_values->size()});
  else if (std_values && !std_values->empty())
    counts.push_back({"std_values", detail::count_noun(std_values->size(), "list", "lists"), std_values->size()});
  if (quant_img_RGB2BGR.size() > 1)
    counts.push_back({"quant_img_RGB2BGR", detail::count_noun(quant_img_RGB2BGR.size(), "value", "values"),
                      quant_img_RGB2BGR.size()});
  if (dynamic_input && !dynamic_input->empty())
    counts.push_back({"dynamic_input",
                      fmt::format("{} per group", detail::count_noun(dynamic_input->front().size(), "shape", "shapes")),
                      dynamic_input->front().size()});
  for (std::size_t k = 1; k < counts.size(); ++k)
    if (counts[k].n != counts[0].n)
      add(counts[k].key,
          fmt::format("config: {} has {} but {} has {}; each gives one entry per model input", counts[k].key,
                      counts[k].text, counts[0].key, counts[0].text));

  const Platform* platform = target_platform ? &*target_platform : nullptr;
  if (quantized_dtype && platform) {
    const Platform p = *platform;
    auto restricted = [&](const auto& allowed) {
      if (!detail::platform_in(p, allowed))
        add("quantized_dtype",
            fmt::format("config: quantized_dtype '{}' is supported only on {}, not on {}", spelling(*quantized_dtype),
                        detail::platform_list(allowed), spelling(p)));
    };
    switch (*quantized_dtype) {
      case QuantizedDtype::w8a8:
        if (p == Platform::rk2118) add("quantized_dtype", "config: quantized_dtype 'w8a8' is not supported on rk2118");
        break;
      case QuantizedDtype::w4a16: restricted(detail::w4a16_platforms); break;
      case QuantizedDtype::w8a16: restricted(detail::w8a16_platforms); break;
      case QuantizedDtype::w16a16i_dfp: restricted(detail::w16a16i_dfp_platforms); break;
    }
  }
  const QuantizedDtype dtype = effective_quantized_dtype();
  if (quantized_algorithm == QuantizedAlgorithm::gdq && dtype != QuantizedDtype::w4a16 &&
      dtype != QuantizedDtype::w8a16)
    add("quantized_algorithm",
        fmt::format("config: quantized_algorithm 'gdq' is valid only with quantized_dtype w4a16 or w8a16, not {}",
                    spelling(dtype)));
  if (quantized_method && quantized_method->kind == QuantizedMethod::Kind::group) {
    if (!quantized_method->group_size_valid())
      add("quantized_method",
          fmt::format(
              "config: quantized_method '{}': SIZE must be a multiple of 32 from 32 to 256 (group32 .. group256)",
              quantized_method->name()));
    else if (dtype != QuantizedDtype::w4a16)
      add("quantized_method",
          fmt::format("config: quantized_method '{}' is valid only with quantized_dtype w4a16, not {}",
                      quantized_method->name(), spelling(dtype)));
  }
  if (optimization_level < 0 || optimization_level > 3)
    add("optimization_level",
        fmt::format("config: optimization_level is {}; expected 0, 1, 2 or 3", optimization_level));
  if (!platform)
    add("target_platform", fmt::format("config: target_platform is required (one of {})", valid_names<Platform>()));
  if (custom_string) {
    if (custom_string->size() >= custom_string_capacity)
      add("custom_string",
          fmt::format("config: custom_string is {} bytes; the runtime's rknn_custom_string holds at "
                      "most {} bytes and the terminating NUL",
                      custom_string->size(), custom_string_capacity - 1));
    if (auto nul = custom_string->find('\0'); nul != std::string::npos)
      add("custom_string",
          fmt::format("config: custom_string has a NUL byte at offset {}; the runtime would cut it there", nul));
  }
  if (single_core_mode && platform && !detail::platform_in(*platform, detail::single_core_platforms))
    add("single_core_mode",
        fmt::format("config: single_core_mode is valid only on {}, not on {}",
                    detail::platform_list(detail::single_core_platforms), spelling(*platform)));
  for (const auto& [name, target] : op_target)
    if (name.empty()) add("op_target", "config: op_target has an empty name; keys are tensor names or op types");
  for (std::size_t i = 0; i < custom_ops.size(); ++i) {
    const CustomOpType& op = custom_ops[i];
    if (op.op_type.empty()) add("custom_ops", fmt::format("config: custom_ops[{}] has an empty op_type", i));
    if (op.op_type.size() >= custom_op_type_capacity)
      add("custom_ops",
          fmt::format("config: custom_ops[{}].op_type is {} bytes; rknn_custom_op's op_type holds at "
                      "most {} bytes and the terminating NUL",
                      i, op.op_type.size(), custom_op_type_capacity - 1));
    if (op.op_type.find('\0') != std::string::npos || op.domain.find('\0') != std::string::npos)
      add("custom_ops", fmt::format("config: custom_ops[{}] has a NUL byte in its op_type or domain", i));
    for (std::size_t j = 0; j < i; ++j)
      if (custom_ops[j].op_type == op.op_type)
        add("custom_ops",
            fmt::format("config: custom_ops[{}] and custom_ops[{}] both list op_type '{}'; the runtime "
                        "tells custom operators apart by op_type alone",
                        j, i, op.op_type.substr(0, 64)));
  }
  if (!custom_ops.empty() && platform && !platform_info(*platform).supports(Function::register_custom_ops))
    add("custom_ops",
        fmt::format("config: custom_ops: {} has no custom operators (rknn_register_custom_ops)", spelling(*platform)));
  if (dynamic_input) {
    detail::check_dynamic_input(*dynamic_input, out);
    if (platform && !detail::platform_in(*platform, detail::dynamic_shape_platforms))
      add("dynamic_input",
          fmt::format("config: dynamic_input is not supported on {}; dynamic shapes run on {}", spelling(*platform),
                      detail::platform_list(detail::dynamic_shape_platforms)));
  }
  if (sparse_infer && platform && !detail::platform_in(*platform, detail::sparse_infer_platforms))
    add("sparse_infer",
        fmt::format("config: sparse_infer is valid only on {}, not on {}",
                    detail::platform_list(detail::sparse_infer_platforms), spelling(*platform)));
  if (!std::isfinite(auto_hybrid_cos_thresh) || auto_hybrid_cos_thresh < -1.0 || auto_hybrid_cos_thresh > 1.0)
    add("auto_hybrid_cos_thresh",
        fmt::format("config: auto_hybrid_cos_thresh is {}; a cosine threshold lies in [-1, 1]",
                    auto_hybrid_cos_thresh));
  if (auto_hybrid_euc_thresh && (!std::isfinite(*auto_hybrid_euc_thresh) || *auto_hybrid_euc_thresh < 0.0))
    add("auto_hybrid_euc_thresh",
        fmt::format("config: auto_hybrid_euc_thresh is {}; a distance threshold is finite and "
                    "not negative",
                    *auto_hybrid_euc_thresh));
  return out;
}

inline std::vector<ConfigProblem> Config::check_against(std::span<const ModelInput> inputs) const {
  std::vector<ConfigProblem> out = check();
  auto add = [&](std::string_view key, std::string message) { out.push_back({std::string(key), std::move(message)}); };
  const std::size_t n = inputs.size();
  const std::string model_inputs =
      fmt::format("the model has {} ({})", detail::count_noun(n, "input", "inputs"), detail::input_names(inputs));

  // dynamic_input against the model: one shape per input, the input's rank, and its fixed axes when the
  // model's input is itself dynamic ("only the dynamic axes can set different values"); a fully static
  // input may be expanded to other shapes, as the SDK guide allows.
  bool dynamic_fits = dynamic_input.has_value() && !dynamic_input->empty();
  if (dynamic_input) {
    for (std::size_t g = 0; g < dynamic_input->size(); ++g) {
      const ShapeGroup& group = (*dynamic_input)[g];
      if (group.size() != n) {
        add("dynamic_input",
            fmt::format("config: dynamic_input[{}] has {}, {}", g, detail::count_noun(group.size(), "shape", "shapes"),
                        model_inputs));
        dynamic_fits = false;
        continue;
      }
      for (std::size_t i = 0; i < n; ++i) {
        const Shape& s = group[i];
        const Shape& model = inputs[i].shape;
        if (s.size() != model.size()) {
          add("dynamic_input",
              fmt::format("config: dynamic_input[{}][{}] is {} (rank {}), {} is {} (rank {})", g, i, dims_text(s),
                          s.size(), detail::input_label(inputs, i), dims_text(model), model.size()));
          dynamic_fits = false;
          continue;
        }
        if (!detail::has_dynamic_dim(model)) continue;
        for (std::size_t d = 0; d < s.size(); ++d)
          if (model[d] >= 0 && s[d] != model[d]) {
            add("dynamic_input",
                fmt::format("config: dynamic_input[{}][{}] is {}, {} is {} with {} at axis {}; only "
                            "its dynamic axes may change",
                            g, i, dims_text(s), detail::input_label(inputs, i), dims_text(model), model[d], d));
            break;
          }
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (detail::has_dynamic_dim(inputs[i].shape))
        add("dynamic_input",
            fmt::format("config: {} has dynamic dimensions {}; set dynamic_input to the shapes to "
                        "support",
                        detail::input_label(inputs, i), dims_text(inputs[i].shape)));
  }

  // Channels of each input: given, or axis 1 (axis 0 for rank 1) of the model's shape, or of the
  // dynamic_input shapes when that axis is dynamic. Unknown (-1) when neither says.
  auto channel_axis = [](std::size_t rank) -> std::optional<std::size_t> {
    if (rank == 0) return std::nullopt;
    return rank == 1 ? 0 : 1;
  };
  std::vector<std::int64_t> channels(n, -1);
  std::vector<std::string> channel_conflict(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ModelInput& in = inputs[i];
    if (in.channels >= 0) {
      channels[i] = in.channels;
      continue;
    }
    auto axis = channel_axis(in.shape.size());
    if (!axis) {
      channels[i] = 1;
      continue;
    }
    if (in.shape[*axis] >= 0) {
      channels[i] = in.shape[*axis];
      continue;
    }
    if (!dynamic_fits) continue;
    for (std::size_t g = 0; g < dynamic_input->size(); ++g) {
      std::int64_t c = (*dynamic_input)[g][i][*axis];
      if (channels[i] < 0) {
        channels[i] = c;
      } else if (c != channels[i] && channel_conflict[i].empty()) {
        channel_conflict[i] = fmt::format("dynamic_input gives {} {} channels in group 0 and {} in group {}",
                                          detail::input_label(inputs, i), channels[i], c, g);
      }
    }
  }

  auto check_lists = [&](std::string_view key, const std::optional<std::vector<std::vector<double>>>& lists) {
    if (!lists || lists->empty()) return;
    if (lists->size() != n) {
      add(key,
          fmt::format("config: {} has {}, {}", key, detail::count_noun(lists->size(), "list", "lists"), model_inputs));
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!channel_conflict[i].empty()) {
        add(key, fmt::format("config: {}[{}] is per channel but {}", key, i, channel_conflict[i]));
        continue;
      }
      const std::size_t given = (*lists)[i].size();
      if (channels[i] >= 0 && given != static_cast<std::size_t>(channels[i]))
        add(key,
            fmt::format("config: {}[{}] has {}, {} has {}", key, i, detail::count_noun(given, "value", "values"),
                        detail::input_label(inputs, i),
                        detail::count_noun(static_cast<std::size_t>(channels[i]), "channel", "channels")));
    }
  };
  check_lists("mean_values", mean_values);
  check_lists("std_values", std_values);

  if (quant_img_RGB2BGR.size() > 1 && quant_img_RGB2BGR.size() != n) {
    add("quant_img_RGB2BGR",
        fmt::format("config: quant_img_RGB2BGR has {}, {}",
                    detail::count_noun(quant_img_RGB2BGR.size(), "value", "values"), model_inputs));
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (rgb2bgr_for(i) && channels[i] >= 0 && channels[i] != 3)
        add("quant_img_RGB2BGR",
            fmt::format("config: quant_img_RGB2BGR{} is True but {} has {}; RGB2BGR swaps 3 channels",
                        quant_img_RGB2BGR.size() == 1 ? std::string() : fmt::format("[{}]", i),
                        detail::input_label(inputs, i),
                        detail::count_noun(static_cast<std::size_t>(channels[i]), "channel", "channels")));
  }
  return out;
}

}  // namespace rknnxx::toolkit
