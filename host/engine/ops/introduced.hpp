#pragma once
// The operators the standard domain introduced after opset 17 (docs/conformance.md, "Operators of
// opsets 18 to 21"). The registry keys operators by name only, so each of them checks here that the
// model imports an opset that has it: a model of an older opset using the name is malformed.

#include "../op_registry.hpp"

namespace rknnxx::host {

inline void expect_introduced_in(const OpContext& ctx, int64_t since) {
  if (ctx.opset() < since) {
    ctx.fail("the operator was introduced in opset {}; the model imports opset {}", since, ctx.opset());
  }
}

}  // namespace rknnxx::host
