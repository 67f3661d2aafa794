// rknnxx inspect MODEL [--json]: everything the runtime can say about a model.

#include "commands.hpp"
#include "model_report.hpp"

#include <fmt/core.h>

#include <memory>
#include <string>

namespace rknnxx::tool {

namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
};

int inspect(const InspectOptions& o) {
  const auto ctx = open_model(o.model);
  const auto j = model_json(ctx, o.model);
  if (o.json) fmt::print("{}\n", j.dump(2));
  else fmt::print("{}", model_text(j));
  return 0;
}

} // namespace

Command add_inspect(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "what the runtime says about a model: tensors, shapes, memory, versions");
  cmd->add_option("model", o->model, "model file (.hrknn on the host runtime, .rknn on a board)")->required();
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  return {cmd, [o] { return inspect(*o); }};
}

} // namespace rknnxx::tool
