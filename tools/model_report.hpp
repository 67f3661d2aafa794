#pragma once
// Opening a model for the tool, and what the runtime says about it: the runtime-selection line
// printed by every command that runs a model, and the full description `rknnxx inspect` prints
// (as text for people, as JSON for programs).

#include "commands.hpp"

#include <rknnxx/runtime/context.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace rknnxx::tool {

// --core-mask's values (rknn_set_core_mask), for run, bench and profile.
inline constexpr std::array<std::pair<std::string_view, CoreMask>, 7> core_masks{{{"auto", CoreMask::automatic},
                                                                                  {"0", CoreMask::core_0},
                                                                                  {"1", CoreMask::core_1},
                                                                                  {"2", CoreMask::core_2},
                                                                                  {"0_1", CoreMask::core_0_1},
                                                                                  {"0_1_2", CoreMask::core_0_1_2},
                                                                                  {"all", CoreMask::all}}};
// A --core-mask value, or a UsageError naming the choices.
[[nodiscard]] CoreMask parse_core_mask(std::string_view text);

// rknn_init on the model file through the runtime layer (RKNNXX_RUNTIME picks the runtime). A
// missing or unreadable file is one line naming it, before the runtime is asked.
[[nodiscard]] Context open_model(const std::string& path, ContextOptions options = {});

// "runtime: host (/path/librknnxx_host.so), SDK 2.3.2 (...), driver ..."
[[nodiscard]] std::string runtime_line(const Context& ctx);

// One attribute as JSON: the fields of rknn_tensor_attr with readable enum names.
[[nodiscard]] nlohmann::json attr_json(const TensorInfo& info);
// Everything: runtime, versions, memory, custom string, what the model file says (target
// platform, mean/std), every input and output under every attribute query, the shape set.
[[nodiscard]] nlohmann::json model_json(const Context& ctx, const std::string& path);
// The same for people.
[[nodiscard]] std::string model_text(const nlohmann::json& model);

}  // namespace rknnxx::tool
