#include "legacy_opsets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace rknnxx::host {
namespace {

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, std::string_view name) {
  const auto it = std::find_if(node.attribute.begin(), node.attribute.end(),
                               [&](const onnx::AttributeProto& a) { return a.name == name; });
  return it == node.attribute.end() ? nullptr : &*it;
}

// A form the engine lacks: before opset `until` (exclusive) the operator meant `difference`.
// `applies` narrows it to nodes that use the old form (nullptr: every node of that opset).
struct LegacyForm {
  std::string_view op_type;
  int64_t until;
  std::string_view difference;
  bool (*applies)(const onnx::NodeProto&) = nullptr;
};

// Binary operators before opset 7 broadcast only when asked (attribute broadcast=1), and then
// align the second input to the first from attribute `axis`, or from the end when it is absent:
// without `axis` that is numpy's rule, which the engine implements; with it, it is not.
bool legacy_axis_broadcast(const onnx::NodeProto& node) {
  const auto* broadcast = find_attribute(node, "broadcast");
  return broadcast != nullptr && broadcast->i != 0 && find_attribute(node, "axis") != nullptr;
}

bool spatial_off(const onnx::NodeProto& node) {
  const auto* spatial = find_attribute(node, "spatial");
  return spatial != nullptr && spatial->i == 0;
}

bool no_axis(const onnx::NodeProto& node) { return find_attribute(node, "axis") == nullptr; }

constexpr std::string_view axis_broadcast =
    "its broadcast attribute with an axis aligns the second input at that axis (numpy broadcasting from opset 7 on)";

constexpr LegacyForm legacy_forms[] = {
    {"Add", 7, axis_broadcast, legacy_axis_broadcast},
    {"Sub", 7, axis_broadcast, legacy_axis_broadcast},
    {"Mul", 7, axis_broadcast, legacy_axis_broadcast},
    {"Div", 7, axis_broadcast, legacy_axis_broadcast},
    {"Pow", 7, axis_broadcast, legacy_axis_broadcast},
    {"And", 7, axis_broadcast, legacy_axis_broadcast},
    {"Or", 7, axis_broadcast, legacy_axis_broadcast},
    {"Xor", 7, axis_broadcast, legacy_axis_broadcast},
    {"Equal", 7, axis_broadcast, legacy_axis_broadcast},
    {"Greater", 7, axis_broadcast, legacy_axis_broadcast},
    {"Less", 7, axis_broadcast, legacy_axis_broadcast},
    {"PRelu", 7, "its slope is shared or per channel rather than broadcast from the end"},
    {"BatchNormalization", 7, "its is_test attribute selects training (the default) or inference"},
    {"BatchNormalization", 9,
     "spatial=0 normalizes per activation (scale, bias, mean and variance shaped like one "
     "sample) rather than per channel",
     spatial_off},
    {"Upsample", 7, "its scales are the height_scale and width_scale attributes"},
    {"Cast", 6, "its 'to' attribute is a type name string"},
    {"Tile", 6, "it takes the tile count and the axis as two inputs"},
    {"Reshape", 5, "its shape is an attribute"},
    {"Concat", 4, "its axis may be omitted and then is 1", no_axis},
    {"Pad", 2, "its pads are the 'paddings' attribute"},
    {"Split", 2, "the split sizes may be a second input"},
    {"MeanVarianceNormalization", 9, "it is the experimental form with across_channels and normalize_variance"},
};

// A form of a later opset the engine lacks: from opset `since` on, `difference`, for the nodes
// `applies` picks.
struct NewerForm {
  std::string_view op_type;
  int64_t since;
  std::string_view difference;
  bool (*applies)(const onnx::NodeProto&);
};

bool antialias_on(const onnx::NodeProto& node) {
  const auto* antialias = find_attribute(node, "antialias");
  return antialias != nullptr && antialias->i != 0;
}

// The element types of opsets 19 to 21 that the engine has no element for (onnx_model.hpp).
bool is_narrow_type(int64_t type) {
  return type >= static_cast<int64_t>(onnx::DataType::float8e4m3fn) &&
      type <= static_cast<int64_t>(onnx::DataType::float4e2m1);
}

bool to_narrow_type(const onnx::NodeProto& node) {
  const auto* to = find_attribute(node, "to");
  return to != nullptr && is_narrow_type(to->i);
}

bool output_dtype_narrow(const onnx::NodeProto& node) {
  const auto* type = find_attribute(node, "output_dtype");
  return type != nullptr && is_narrow_type(type->i);
}

constexpr std::string_view narrow_types =
    "it may produce float8, int4 and uint4 tensors, and this node does: the host engine has no such element type";

constexpr NewerForm newer_forms[] = {
    {"Resize", 18,
     "antialias=1 widens the interpolation filter when downscaling, which the host engine does not implement",
     antialias_on},
    {"Cast", 19, narrow_types, to_narrow_type},
    {"QuantizeLinear", 21, narrow_types, output_dtype_narrow},
};

}  // namespace

std::string newer_form_refusal(const onnx::NodeProto& node, int64_t opset) {
  for (const NewerForm& form : newer_forms) {
    if (form.op_type == node.op_type && opset >= form.since && form.applies(node)) {
      return fmt::format("{} at opset {} is not supported by the host engine: from opset {} on {}", node.op_type, opset,
                         form.since, form.difference);
    }
  }
  return "";
}

std::string legacy_form_refusal(const onnx::NodeProto& node, int64_t opset) {
  for (const LegacyForm& form : legacy_forms) {
    if (form.op_type == node.op_type && opset < form.until && (form.applies == nullptr || form.applies(node))) {
      return fmt::format("{} at opset {} is not supported by the host engine: before opset {} {}", node.op_type, opset,
                         form.until, form.difference);
    }
  }
  return "";
}

}  // namespace rknnxx::host
