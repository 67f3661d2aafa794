// rknnxx inspect MODEL [--json]: everything the runtime can say about a model.

#include "commands.hpp"
#include "model_report.hpp"

#include <fmt/core.h>

#include <string>

namespace rknnxx::tool {

int inspect(const InspectOptions& o) {
  const auto ctx = open_model(o.model);
  const auto j = model_json(ctx, o.model);
  if (o.json) fmt::print("{}\n", j.dump(2));
  else fmt::print("{}", model_text(j));
  return 0;
}

}  // namespace rknnxx::tool
