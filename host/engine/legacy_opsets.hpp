#pragma once
// Models of opsets 1 to 8 and 18 to 21. Most operators kept their meaning from their first version on
// (later versions added element types, or dropped the consumed_inputs hint, which the engine
// ignores); the operators listed in legacy_opsets.cpp meant something else before a given
// opset, and a model using that older form is refused at conversion, naming the operator, the
// opset and the difference, rather than run with today's meaning.
// Opsets 18 to 21 changed some operators again (docs/conformance.md, "Opsets 18 to 21"): the
// engine implements most of the newer forms in the operators themselves; the ones it does not are
// listed in legacy_opsets.cpp too and refused the same way.

#include "onnx_model.hpp"

#include <cstdint>
#include <string>

namespace rknnxx::host {

// "" when the engine implements the form `node` (of the default domain) has at `opset`, else
// why not, e.g. "before opset 5 Reshape takes its shape as an attribute; the host engine
// implements Reshape-5 and later".
std::string legacy_form_refusal(const onnx::NodeProto& node, int64_t opset);

// "" when the engine implements the form `node` (of the default domain) has at `opset`, else
// why not, e.g. "Resize at opset 18 is not supported by the host engine: from opset 18 on
// antialias=1 ...". Only the forms an attribute decides; forms that depend on input shapes or
// types are refused by the operator while planning, naming the opset too.
std::string newer_form_refusal(const onnx::NodeProto& node, int64_t opset);

}  // namespace rknnxx::host
