#pragma once
// Models of opsets 1 to 8. Most operators kept their meaning from their first version on
// (later versions added element types, or dropped the consumed_inputs hint, which the engine
// ignores); the operators listed in legacy_opsets.cpp meant something else before a given
// opset, and a model using that older form is refused at conversion, naming the operator, the
// opset and the difference, rather than run with today's meaning.

#include "onnx_model.hpp"

#include <cstdint>
#include <string>

namespace rknnxx::host {

// "" when the engine implements the form `node` (of the default domain) has at `opset`, else
// why not, e.g. "before opset 5 Reshape takes its shape as an attribute; the host engine
// implements Reshape-5 and later".
std::string legacy_form_refusal(const onnx::NodeProto& node, int64_t opset);

}  // namespace rknnxx::host
